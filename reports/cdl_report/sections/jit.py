"""Run-time compilation: what each stage of 06, 07 and 08 costs on the host, by the cache state
it meets, and the number of elements after which a compile has paid for itself against every
strategy that takes the op at run time without a compiler."""
from .. import plots
from ..document import Parts, fmt_time, table
from ..stats import compare, span
from .map import kernel_facts
from .resources import map_kernel

# What answers each stage, by the state in its name (bench/jit_stages.cpp).
ANSWERED_BY = {
    "new_op": "nothing: a text no cache has seen, every iteration",
    "same_text": "NVRTC's own cache, through the driver, where there is one",
    "same_inputs": "nvJitLink's own cache, through the driver, where there is one",
    "cache_memory_hit": "this project's cache, in memory",
    "cache_disk_hit": "this project's cache, on disk",
    "cache_disk_hit_fresh_process": "this project's cache, on disk, in a new process",
    "load": "(loading a CUBIN: no compile)",
}
# The strategies that take an op chosen at run time without a compiler: a JIT's rivals.
# The route that runs a user's op with no compiler, and so the one a compile for a new op competes
# with: a switch, a pointer table or a virtual call serve only the ops the program was built with.
RIVAL = "16_interpreter/"


HEADING = "Run-time compilation: what it costs and when it pays"


def assembled_by_driver(stages):
    """Whether 08's PTX is assembled by the driver at the load (jit/load/08_ptx), as it is now, or
    by nvJitLink before the load (jit/link/08_ptx_to_cubin), as in runs before that change."""
    return any(n.startswith("jit/load/08_ptx") for n in stages)


def answered_by(name, by_driver):
    """What answers a stage: its cache state's usual answer; 08 has no C++ compiler, and libNVVM keeps no
    cache, so only its PTX step can be answered (by the cache of what assembles it)."""
    state = state_of(name)
    if state == "same_text" and "/08/" in name:
        if by_driver:
            return (
                "the driver's own cache for the PTX it assembles at the load, where there is one (libNVVM"
                " keeps none)"
            )
        return (
            "nvJitLink's own cache for the PTX step, through the driver, where there is one (libNVVM keeps"
            " none)"
        )
    return ANSWERED_BY.get(state, "(its name gives no cache state)")


def state_of(name):
    return next((s for s in ANSWERED_BY if f"/{s}" in name or name.startswith(f"jit/{s}")), "?")


def stage_row(stages, prefix):
    return next((row for n, row in stages.items() if n.startswith(prefix)), None)


def stage_ms(stages, prefix):
    row = stage_row(stages, prefix)
    return row["median"] / 1000 if row else None


# The routes from a new op's text to its first result (bench/jit_stages.cpp's interleaved benchmark and
# new-process probes), by the name it gives them, and the registry's way each is.
ROUTES = {
    "06": "06_nvrtc_jit",
    "06_fast_compile": "06_nvrtc_jit.fast_compile",
    "07": "07_jit_lto",
    "08": "08_expression_jit",
    "08_baseline": "08_expression_jit.baseline",
    "16": "16_interpreter",
    "10": "10_tiered_dispatch.expression",
    "one_line_kernel": "NVRTC's one-line kernel (no load, no launch)",
}


def interleaved(stages):
    """{route: {"p10", "p50", "p90" (ms), "x_floor" (its p50)}} from the run's interleaved new-op
    benchmark, every route's compile in turn in one process; {} for a run without it."""
    row = stage_row(stages, "jit/interleaved/new_op")
    if not row:
        return {}
    c = row["counters"]
    return {
        r: {q: c[f"{r}_{q}_ms"] for q in ("p10", "p50", "p90")} | {"x_floor": c.get(f"{r}_x_floor_p50")}
        for r in ROUTES
        if f"{r}_p50_ms" in c
    }


def spread(route):
    """'38.3 ms (p10–p90 35.1–44.0 ms)' of an interleaved route."""
    ms = lambda v: fmt_time(1000 * v)  # noqa: E731
    return f"{ms(route['p50'])} (p10–p90 {ms(route['p10'])}–{ms(route['p90'])})"


def overlap(a, b):
    """Whether two interleaved routes' p10–p90 ranges overlap: a difference inside the spread."""
    return a["p10"] <= b["p90"] and b["p10"] <= a["p90"]


def first_in_process(stages):
    """{route: (median, min, max) ms over the repetitions} of a new process's first result through each
    route (jit/first_result_in_process/)."""
    out = {}
    for name, row in stages.items():
        if name.startswith("jit/first_result_in_process/"):
            out[name.split("/")[2]] = tuple(
                row.get(q, row["median"]) / 1000 for q in ("median", "min", "max")
            )
    return out


def interleaved_table(doc, stages):
    """Every route's new op, from the interleaved benchmark, beside a new process's first result."""
    routes, fresh = interleaved(stages), first_in_process(stages)
    if not routes:
        return
    doc.add(
        "**A new op through every route, the routes interleaved** (one process; each round compiles a new"
        " text through every route in turn, the order turning by one each round, so that the host's drift"
        " falls on all of them alike): from the text to a 2^20 map's result, ready, each validated."
        " Median and 10th–90th percentile over the rounds; × floor is each round's time over NVRTC's"
        " one-line kernel compiled in the same round. A new process's first result is the same route in a"
        " process of its own, its CUDA context made first (as the Python peers' fresh-process figure),"
        " on 2^16 elements (median, and min–max over the repetitions); route 10's is its first tier's,"
        " the interpreter, its compiles left running:\n"
    )
    rows = [
        [
            f"`{r}`",
            ROUTES[r],
            spread(routes[r]) if r in routes else "–",
            f"{routes[r]['x_floor']:.2f}" if r in routes and routes[r]["x_floor"] else "–",
            f"{fresh[r][0]:.1f} ms ({fresh[r][1]:.1f}–{fresh[r][2]:.1f})" if r in fresh else "–",
        ]
        for r in ROUTES
        if r in routes or r in fresh
    ]
    doc.add(table(["route", "way", "a new op", "× floor", "a new process's first"], rows))


def stage_counter(stages, prefix, counter):
    """A counter of a stage (median over its repetitions), or None where the run did not record it."""
    row = stage_row(stages, prefix)
    return row.get("counters", {}).get(counter) if row else None


BASELINE, OPTIMISED = "08_expression_jit.baseline/vec", "08_expression_jit/vec"


def baseline(doc, c, dispatch):
    """08's baseline tier (libNVVM -opt=0) against its optimised tier: the compile it saves, and what its
    kernels cost over the dispatch sweep (vec forms, time over the optimised tier's)."""
    if not (c["08 baseline compile"] and c["08 compile"]):
        return
    text = (
        "**08's baseline tier** (`08_expression_jit.baseline`: libNVVM without its optimiser, `-opt=0`, on"
        " IR the lowering writes in the form the optimiser would leave; ptxas still contracts, folds and"
        f" schedules) compiles and loads a new op in {c['08 baseline compile']:.1f} ms against"
        f" {c['08 compile']:.1f} ms"
    )
    if c["08 baseline libNVVM"] and c["08 libNVVM"]:
        text += f" ({c['08 baseline libNVVM']:.1f} ms in libNVVM against {c['08 libNVVM']:.1f} ms"
        if c["08 baseline ptxas"] and c["08 ptxas"]:
            text += f"; the load {c['08 baseline ptxas']:.1f} ms against {c['08 ptxas']:.1f} ms"
        text += ")"
    ratio, how = times_floor(c, "08 baseline compile")
    optimised, _ = times_floor(c, "08 compile")
    if ratio:
        text += f", {ratio:.2f}× NVRTC's one-line floor ({how})"
        if optimised:
            text += (
                f" against {optimised:.2f}× for the optimised tier (minutes apart the host's speed moves, so"
                " the two tiers' milliseconds compare less well than their ratios to a floor compiled beside"
                " each)"
            )
    ratios = {
        key: p[BASELINE] / p[OPTIMISED]
        for key, p in (dispatch or {}).get("penalty", {}).items()
        if BASELINE in p and OPTIMISED in p
    }
    if ratios:
        memory = [r for (_, k), r in ratios.items() if k == 1]
        slowest = max(ratios, key=ratios.get)
        text += (
            f". Its kernels take {span(ratios.values(), '{:.2f}')}× the optimised tier's time "
            f"over the dispatch sweep (the most at {slowest[0]}, k = {slowest[1]})"
        )
        if memory:
            text += f", {span(memory, '{:.2f}')}× at k = 1"
    doc.add(text + ".\n")


def times_floor(c, route):
    """A route's cost in NVRTC's floor (a new one-line kernel), and how it was measured: each iteration's
    ratio to a floor compiled beside it (x_floor, bench/jit_stages.cpp) where the run paired them, else
    the ratio of the two stages' medians."""
    paired = c.get(f"{route} x floor")
    if paired:
        return (
            paired,
            (
                "paired: each iteration against a one-line kernel compiled beside it,"
                f" {c[f'{route} floor']:.0f} ms"
            ),
        )
    if c[route] and c["one-line kernel"]:
        return c[route] / c["one-line kernel"], "the ratio of the two medians, measured apart"
    return None, ""


# NVRTC's phases as bench/jit_stages.cpp records them (counters of the jit/phases/ stages).
PHASES = (
    ("front_end_ms", "the C++ front end"),
    ("optimizer_ms", "the NVVM optimiser"),
    ("ptxas_ms", "ptxas"),
)
PHASE_ROUTES = (
    ("jit/phases/06/new_op", "06: the map's vec kernel"),
    ("jit/phases/one_line_kernel/new_op", "a one-line kernel (the floor)"),
)


def phases(doc, stages):
    """Where a new op's compile goes, by NVRTC's own account, for 06's program and the floor, and
    which phase makes the difference between them."""
    found = {}
    for prefix, label in PHASE_ROUTES:
        row = stage_row(stages, prefix)
        counters = (row or {}).get("counters", {})
        if row and all(k in counters for k, _ in PHASES):
            found[prefix] = (label, row["median"] / 1000, {k: counters[k] for k, _ in PHASES})
    if len(found) < len(PHASE_ROUTES):
        return
    doc.add(
        "**Where a new op's compile goes**, by NVRTC's own account (`--time`: whole milliseconds a phase, the"
        " mean of each repetition's iterations, then the median), in a stage of its own (`jit/phases/`), a"
        " new text every iteration:\n"
    )
    rows = []
    for prefix, _ in PHASE_ROUTES:
        label, total, ms = found[prefix]
        rows.append(
            [label]
            + [f"{ms[k]:.1f}" for k, _ in PHASES]
            + [f"{total - sum(ms.values()):.1f}", f"{total:.1f}"]
        )
    doc.add(
        table(["compile", "front end ms", "optimiser ms", "ptxas ms", "outside them ms", "total ms"], rows)
    )
    kernel, floor = found[PHASE_ROUTES[0][0]][2], found[PHASE_ROUTES[1][0]][2]
    more = {name: kernel[k] - floor[k] for k, name in PHASES}
    gap = sum(more.values())
    if gap <= 0:
        doc.add("06's program takes no longer than the floor in NVRTC's phases.\n")
        return
    order = sorted(more, key=more.get, reverse=True)
    doc.add(
        f"06's program takes {gap:.1f} ms more than the floor in these phases: "
        + ", ".join(f"{more[n]:+.1f} ms in {n}" for n in order)
        + f". {order[0][0].upper() + order[0][1:]} makes {more[order[0]] / gap:.0%} of the difference"
        + (
            ": work on the kernel after the front end has read it, not on the C++ it is written in."
            if order[0] != PHASES[0][1]
            else ": the headers and templates it is written with."
        )
        + "\n"
    )


# What each part of 06's program costs (bench/jit_stages.cpp's jit/parts/ stages: two programs that
# differ by the part alone, compiled in the same iteration), as (stage, the part).
SAME = "against the one-line kernel with the same headers"
PARTS = (
    (
        "headers",
        (
            "the map skeleton's headers (a one-line kernel with them included, against without; both"
            " `-minimal`, as 06)"
        ),
    ),
    ("scalar_kernel", f"the op and the scalar kernel ({SAME})"),
    ("vec_kernel", f"the op and the vec kernel: 06's program ({SAME})"),
    ("staged_kernel", f"the op and the staged kernel ({SAME})"),
    ("all_kernels", f"the op and every form's kernel in one program ({SAME})"),
    ("lineinfo", "`-lineinfo` (06 against 06 without it)"),
    ("std_cxx20", "`-std=c++20` (06 against 06 with `-std=c++17`)"),
    ("minimal", "`-minimal` (06 against 06 without it)"),
)


def parts(doc, stages):
    """What each part of 06's program costs in NVRTC's phases, and whether every repetition agrees on
    the sign of the difference."""
    rows, found = [], {}
    for part, label in PARTS:
        row = stage_row(stages, f"jit/parts/{part}/new_op")
        c = (row or {}).get("counters", {})
        deltas = [r.get("delta_ms") for r in (row or {}).get("rep_counters", [])]
        if not row or "delta_ms" not in c or None in deltas:
            continue
        agrees = len(deltas) > 1 and (all(d > 0 for d in deltas) or all(d < 0 for d in deltas))
        found[part] = (c["delta_ms"], agrees)
        rows.append(
            [label, f"{c['with_ms']:.1f}", f"{c['without_ms']:.1f}"]
            + [f"{c.get('delta_' + k, float('nan')):+.1f}" for k, _ in PHASES]
            + [f"{c['delta_ms']:+.1f}", f"{'yes' if agrees else 'no'} ({len(deltas)})"]
        )
    if not rows:
        return
    doc.add(
        "**What each part of 06's program costs**, by the same account: each row compiles two programs that"
        " differ by that part alone, one beside the other in every iteration and in turns (the host's speed"
        " drifts within a run; two compiles milliseconds apart see the same host), a new text each time."
        " Medians over the repetitions of each repetition's means; the part is told from the noise when every"
        " repetition's difference has the same sign:\n"
    )
    doc.add(
        table(
            [
                "part",
                "with ms",
                "without ms",
                "Δ front end ms",
                "Δ optimiser ms",
                "Δ ptxas ms",
                "Δ whole ms",
                "every repetition agrees",
            ],
            rows,
        )
    )

    def cost(part):
        """A part's difference in the whole compile, worded with the rule's answer; None if not measured."""
        if part not in found:
            return None
        ms, agrees = found[part]
        return f"{ms:.1f} ms" + ("" if agrees else " (within the noise)")

    if cost("vec_kernel") and cost("headers"):
        text = (
            f"The vec kernel and its op add {cost('vec_kernel')} to a compile, the headers they are written"
            f" with {cost('headers')}"
        )
        if cost("all_kernels"):
            text += (
                f"; every form's kernel in one program would add {cost('all_kernels')}, which is why each"
                " form's kernel is compiled at its first launch"
            )
        options = [
            f"`{flag}` by {found[p][0]:+.1f} ms"
            for p, flag in (("lineinfo", "-lineinfo"), ("std_cxx20", "-std=c++20"), ("minimal", "-minimal"))
            if p in found and found[p][1]
        ]
        text += (
            "; of the options 06 compiles with, " + ", ".join(options) + " beyond the noise"
            if options
            else "; no option 06 compiles with changes it beyond the noise"
        )
        doc.add(text + ".\n")


def link_steps(doc, stages, c):
    """Where 07's link goes, by nvJitLink's own account (-time): libNVVM on the whole program, then
    ptxas and the link's end; and how much of it any LTO link costs (a one-line kernel's), the rest
    being the kernel's share, both in NVRTC's floor compiled beside them."""
    row = stage_row(stages, "jit/phases/07_link/new_op")
    counters = (row or {}).get("counters", {})
    if "to_ptx_ms" not in counters or "after_ptx_ms" not in counters:
        return
    to_ptx, after = counters["to_ptx_ms"], counters["after_ptx_ms"]
    text = (
        "**Where 07's link goes**, by nvJitLink's own account (`-time`, a stage of its own,"
        f" `jit/phases/07_link/`): {to_ptx:.1f} ms in libNVVM turning the whole program (the kernels' LTO-IR"
        f" and the op's) into PTX, then {after:.1f} ms in ptxas and the link's end, of"
        f" {row['median'] / 1000:.1f} ms"
    )
    nvrtc = (stage_row(stages, "jit/phases/06/new_op") or {}).get("counters", {})
    if "optimizer_ms" in nvrtc and "ptxas_ms" in nvrtc:
        text += (
            f". NVRTC's optimiser and ptxas take {nvrtc['optimizer_ms']:.1f} and {nvrtc['ptxas_ms']:.1f} ms "
            "on the same kernel in 06"
        )
    least, link = c.get("one-line link x floor"), c.get("07 link x floor")
    if least and link:
        text += (
            ". The least any LTO link costs, a one-line kernel's with a new one-line op"
            f" (`jit/link/one_line_kernel/`), is {c['one-line link']:.1f} ms, {least:.2f}× NVRTC's one-line"
            f" floor compiled beside it, against {link:.2f}× for 07's: the map's kernel makes"
            f" {(link - least) / link:.0%} of 07's link, and the rest is what any link costs"
        )
    doc.add(text + ".\n")


def preoptimised(doc, bench, dispatch, c, noise):
    """07's variant `preoptimised` (the kernels' LTO-IR optimised before the link): its link against
    07's, each over the floor compiled beside it, and its kernels' time against 07's, on the map's
    penalty sweep and on the tiled GEMM; a kernel is slower where its time exceeds 07's by more than the
    noise."""
    ratio, default = c.get("07 preoptimised link x floor"), c.get("07 link x floor")
    if not (ratio and default):
        return
    text = (
        "**With the kernels optimised before the link** (07's variant `preoptimised`: NVRTC's"
        " `--gen-opt-lto` runs the optimiser on the kernels' LTO-IR when it is made, once a process) a new"
        f" op links in {c['07 preoptimised link']:.1f} ms, {ratio:.2f}× the floor compiled beside it against"
        f" {default:.2f}× for 07's link ({(default - ratio) / default:.0%} less)"
    )
    kernels = {}  # what -> its time over 07's
    for (op, k), p in (dispatch or {}).get("penalty", {}).items():
        if "07_jit_lto.preoptimised/vec" in p and "07_jit_lto/vec" in p:
            kernels[f"the map's {op} at k = {k}"] = p["07_jit_lto.preoptimised/vec"] / p["07_jit_lto/vec"]
    map_ratios = list(kernels.values())
    gemm = []
    for fields, entries in bench.select("matmul", semiring="plus_times"):
        mine, theirs = entries.get("07_jit_lto.preoptimised/tiled"), entries.get("07_jit_lto/tiled")
        if mine and theirs:
            gemm.append((fields.get("type"), fields.get("shape"), mine["median"] / theirs["median"]))
            kernels[f"the tiled GEMM ({gemm[-1][0]}, {gemm[-1][1]})"] = gemm[-1][2]
    if map_ratios:
        text += (
            f"; its map kernels take {span(map_ratios, '{:.2f}')}× 07's time over the penalty "
            "sweep (vec forms)"
        )
    if gemm:
        text += "; its tiled GEMM " + ", ".join(
            f"{r:.2f}× 07's ({t}, {shape})" for t, shape, r in sorted(gemm)
        )
    if kernels:
        slowest = max(kernels, key=kernels.get)
        text += (
            f": the link is shorter, and a kernel is slower for it ({slowest}, by more than the"
            f" {noise:.1%} noise), which is why 07 does not pre-optimise"
            if kernels[slowest] > 1 + noise
            else ": the link is shorter, and no kernel measured is slower for it beyond the noise"
        )
    doc.add(text + ".\n")


def fast_compile(doc, dispatch, c, resources, routes):
    """06's variant fast_compile: the compile it saves (no difference where the two routes' spreads
    overlap), its kernel's time beside 06's, and what its kernel is made of (resources.json's records
    of the two vec kernels, quadratic)."""
    if not (c["06 fast compile"] and c["compile"]):
        return
    penalty = (dispatch or {}).get("penalty", {})
    ratio = {
        k: p["06_nvrtc_jit.fast_compile/vec"] / p["06_nvrtc_jit/vec"]
        for (op, k), p in penalty.items()
        if "06_nvrtc_jit.fast_compile/vec" in p and "06_nvrtc_jit/vec" in p
    }
    text = (
        "**06's variant `fast_compile`** (NVRTC's `--Ofast-compile=mid`: fewer optimisations for a shorter"
        f" compile, not faster code) compiles a new op in {c['06 fast compile']:.0f} ms against 06's"
        f" {c['compile']:.0f} ms ({c['06 fast compile'] / c['compile']:.2f}×"
        + (
            ", no difference: their 10th–90th percentiles overlap"
            if "06" in routes
            and "06_fast_compile" in routes
            and overlap(routes["06"], routes["06_fast_compile"])
            else ""
        )
        + ")"
    )
    if ratio:
        text += (
            f"; its vec kernel takes {span(ratio.values(), '{:.2f}')}× the time of 06's over the penalty"
            f" sweep (k = {min(ratio)} to {max(ratio)})"
        )
    kernels = {e: map_kernel(resources, f"{e}/vec") for e in ("06_nvrtc_jit", "06_nvrtc_jit.fast_compile")}
    if all(kernels.values()):
        f, d = kernels["06_nvrtc_jit.fast_compile"], kernels["06_nvrtc_jit"]
        text += f". Its quadratic vec kernel: {kernel_facts(f)}; 06's: {kernel_facts(d)}" + (
            ": a stack frame is local memory, traffic the template's kernel does not have"
            if f["stack"] > d["stack"]
            else ""
        )
    doc.add(text + ".\n")


def add(doc, bench, dispatch, noise, uncached=None, resources=None):
    if not bench.stages:
        return {}
    doc.add(f"## {HEADING}\n")
    doc.add(
        "Each stage is named by the cache state it meets. A *new op* compiles a text no cache has seen in"
        " every iteration (the benchmark fails if two iterations compile the same text): what a user pays for"
        " an op typed at run time. A *same text* stage compiles one text again and again, and from the second"
        " iteration on the compiler's own cache (NVRTC 12.9+ and nvJitLink keep one through the driver)"
        " answers it, where the process has a driver and `CUDA_CACHE_DISABLE` is unset"
        + (
            "; the last column repeats every stage with `CUDA_CACHE_DISABLE=1`, in a run of its own"
            if uncached
            else ""
        )
        + ".\n"
    )
    every = Parts()
    by_driver = assembled_by_driver(bench.stages)
    rows, moved = [], []
    for name, row in sorted(bench.stages.items()):
        off = uncached.stages.get(name) if uncached else None
        ratio = row.get("counters", {}).get("x_floor")
        ratio_off = (off or {}).get("counters", {}).get("x_floor")
        paired = f"{ratio:.2f}" if ratio else "–"
        if ratio and ratio_off:
            paired += f" / {ratio_off:.2f}"
            floor = row["counters"]["floor_ms"]
            moved.append(
                (off["median"] / row["median"], off["counters"]["floor_ms"] / floor, ratio_off / ratio, name)
            )
        rows.append(
            [
                f"`{name}`",
                answered_by(name, by_driver),
                f"{row['median'] / 1000:.3f}",
                f"{row.get('min', float('nan')) / 1000:.3f}–{row.get('max', float('nan')) / 1000:.3f}",
            ]
            + ([f"{off['median'] / 1000:.3f}" if off else "–"] if uncached else [])
            + [paired]
        )
    every.add("Host wall clock, median of the repetitions:\n")
    every.add(
        table(
            ["stage", "answered by", "median ms", "min–max ms"]
            + (["`CUDA_CACHE_DISABLE=1` ms"] if uncached else [])
            + ["× floor, paired" + (" (cache on / off)" if uncached else "")],
            rows,
        )
    )
    if moved:

        def between(i):
            return f"{span([m[i] for m in moved], '{:.2f}')}×"

        most = max(moved, key=lambda m: abs(m[2] - 1))
        every.add(
            "*× floor, paired*: each iteration's time over that of a one-line kernel, new every time,"
            " compiled beside it (the floor of any NVRTC route), where the stage pairs them. A new op meets"
            f" no cache in either run: with the caches off, the paired stages took {between(0)} their"
            f" milliseconds, the floors compiled beside them {between(1)}, and their ratios to those floors"
            f" {between(2)}"
            + (
                ": the ratios held within 10 %, so what moved the milliseconds between the columns is the"
                " host's speed, which the pairing cancels.\n"
                if abs(most[2] - 1) <= 0.1
                else (
                    f": `{most[3]}`'s ratio moved by {abs(most[2] - 1):.0%}, more than the 10 % the pairing"
                    " is trusted to, so between the two runs the host's speed moved that compiler and the"
                    " floor unevenly; the two columns are two measurements of one uncached compile, and"
                    " their spread is how well this host measures it.\n"
                )
            )
        )
    doc.detail(
        "Every compile stage",
        "\n".join(every),
        f"Each of the {len(rows)} stages' median, range and cache state"
        + (", with the caches on and off" if uncached else ""),
    )
    s = bench.stages
    interleaved_table(doc, s)
    costs = {
        "first compile, new process": stage_ms(s, "jit/first_compile_in_process/06/new_op"),
        "compile": stage_ms(s, "jit/compile/06/new_op"),
        "06 fast compile": stage_ms(s, "jit/compile/06_fast_compile/new_op"),
        "compile, same text": stage_ms(s, "jit/compile/06/same_text"),
        "one-line kernel": stage_ms(s, "jit/compile/one_line_kernel/new_op"),
        "07 op": stage_ms(s, "jit/compile/07_op_ltoir/new_op"),
        "07 link": stage_ms(s, "jit/link/07/new_op"),
        "one-line link": stage_ms(s, "jit/link/one_line_kernel/new_op"),
        "07 preoptimised link": stage_ms(s, "jit/link/07_preoptimised/new_op"),
        "disk hit (fresh process)": stage_ms(s, "jit/cache_disk_hit_fresh_process"),
        "memory hit": stage_ms(s, "jit/cache_memory_hit"),
        "load": stage_ms(s, "jit/load/06"),
        "08 first compile, new process": stage_ms(s, "jit/first_compile_in_process/08/new_op"),
        "08 compile": stage_ms(s, "jit/compile/08/new_op"),
        "08 libNVVM": stage_ms(s, "jit/compile/08_nvvm_to_ptx/new_op"),
        "08 ptxas": stage_ms(s, "jit/load/08_ptx/new_op") or stage_ms(s, "jit/link/08_ptx_to_cubin/new_op"),
        "08 driver compiler": stage_counter(s, "jit/load/08_ptx/new_op", "driver_compiler_ms"),
        "08 baseline compile": stage_ms(s, "jit/compile/08_baseline/new_op"),
        "08 baseline libNVVM": stage_ms(s, "jit/compile/08_baseline_nvvm_to_ptx/new_op"),
        "08 baseline ptxas": stage_ms(s, "jit/load/08_baseline_ptx/new_op"),
    }
    for route, prefix in (
        ("compile", "jit/compile/06/new_op"),
        ("08 compile", "jit/compile/08/new_op"),
        ("08 baseline compile", "jit/compile/08_baseline/new_op"),
        ("07 link", "jit/link/07/new_op"),
        ("one-line link", "jit/link/one_line_kernel/new_op"),
        ("07 preoptimised link", "jit/link/07_preoptimised/new_op"),
    ):
        costs[f"{route} x floor"] = stage_counter(s, prefix, "x_floor")
        costs[f"{route} floor"] = stage_counter(s, prefix, "floor_ms")
    # One figure for a route's new op in the whole report: the interleaved benchmark's median, where
    # the run has it, in place of the stage timed on its own; a new process's first likewise.
    routes, fresh = interleaved(s), first_in_process(s)
    for key, route in (
        ("compile", "06"),
        ("06 fast compile", "06_fast_compile"),
        ("08 compile", "08"),
        ("08 baseline compile", "08_baseline"),
        ("one-line kernel", "one_line_kernel"),
    ):
        if route in routes:
            costs[key] = routes[route]["p50"]
    for key, route in (("first compile, new process", "06"), ("08 first compile, new process", "08")):
        if route in fresh:
            costs[key] = fresh[route][0]
    out = {"costs": costs, "interleaved": routes, "first_in_process": fresh}
    c = costs
    if c["compile"] and c["first compile, new process"]:
        text = (
            f"**A new op costs** {c['first compile, new process']:.0f} ms through 06 as the first"
            + (" result" if "06" in fresh else " compile")
            + " of a new process (from before NVRTC is loaded: the programs load it at their first compile)"
            f" and {c['compile']:.0f} ms later in it"
        )
        if c["07 op"] and c["07 link"]:
            text += (
                f"; through 07, {c['07 op']:.0f} ms for the op's LTO-IR and {c['07 link']:.0f} ms for the"
                " link"
            )
        ratio, how = times_floor(c, "compile")
        if ratio:
            text += (
                f". NVRTC compiling a one-line kernel, new every time, takes {c['one-line kernel']:.0f} ms:"
                f" 06 costs {ratio:.2f}× this floor of any NVRTC route ({how})"
            )
        link_ratio, how = times_floor(c, "07 link")
        if link_ratio:
            text += f"; 07's link alone {link_ratio:.2f}× it"

        if c["compile, same text"]:
            text += (
                f". Compiling the same text again takes {c['compile, same text']:.0f} ms,"
                f" {c['compile'] / c['compile, same text']:.1f}× less: that is the compiler's cache, not the"
                " compiler"
            )
        doc.add(text + ".\n")
    fast_compile(doc, dispatch, c, resources, routes)
    inside = Parts()
    phases(inside, s)
    parts(inside, s)
    link_steps(inside, s, c)
    preoptimised(inside, bench, dispatch, c, noise)
    if inside:
        doc.detail(
            "Where a compile's time goes",
            "\n".join(inside),
            "NVRTC's and nvJitLink's own accounts of a compile's phases, what each part of 06's program"
            " costs, and 07's link with its kernels optimised before it",
        )
    if c["08 compile"]:
        text = (
            "**Without the C++ front end** (08: the op parsed and lowered to NVVM IR by the program,"
            " compiled by "
            + (
                "libNVVM, assembled by the driver's ptxas as it loads) a new op costs"
                f" {c['08 compile']:.1f} ms to a loaded kernel"
                if by_driver
                else f"libNVVM, assembled by ptxas through nvJitLink) a new op costs {c['08 compile']:.1f} ms"
            )
        )
        if c["08 libNVVM"] and c["08 ptxas"]:
            where = "the load" if by_driver else "ptxas"
            text += f" ({c['08 libNVVM']:.1f} ms in libNVVM, {c['08 ptxas']:.1f} ms in {where}"
            if c["08 driver compiler"]:
                text += (
                    f", {c['08 driver compiler']:.1f} ms of it in the driver's compiler by its own account"
                )
            text += ")"
        if c["08 first compile, new process"]:
            loaded = "libNVVM and the driver's PTX compiler" if by_driver else "libNVVM"
            text += (
                f", {c['08 first compile, new process']:.1f} ms as the first of a new process (loading"
                f" {loaded} included)"
            )
        if c["compile"]:
            text += f": {c['compile'] / c['08 compile']:.1f}× less than 06"
        ratio, how = times_floor(c, "08 compile")
        if ratio:
            text += (
                f", and {ratio:.2f}× the time NVRTC takes for a one-line kernel"
                if ratio >= 1
                else f", and {1 / ratio:.2f}× less than NVRTC takes for a one-line kernel"
            )
            text += f", the floor of any route through C++ ({how})"
        doc.add(text + ".\n")
    baseline(doc, c, dispatch)
    if not dispatch or not c["compile"]:
        return out
    # A compile pays once the time it saves over the route that needs none exceeds it: after n
    # elements, n * (t_rival - t_jit) / n_sweep; a break-even is printed only where the two times
    # differ beyond the noise, and only against a route that runs the same user's op (RIVAL).
    rows, breakeven = [], {}
    # 06's kernel is the skeleton's; 08's vec kernel runs one k loop for all of a thread's values
    # (dispatch.py says how much that alone changes), so its speed against a rival is not the
    # JIT's alone, and 08 is left out here.
    labels = (
        ("first compile, new process", "first compile (new process)"),
        ("compile", "later compile"),
        ("disk hit (fresh process)", "disk-cache hit"),
    )
    sweep_rows = {
        (f["op"], int(f["k"])): es for f, es in bench.select("map", type="f32", n=dispatch["n"]) if "k" in f
    }
    for (op, k), _ in sorted(dispatch["penalty"].items()):
        es = sweep_rows[(op, k)]
        rivals = {e: r for e, r in es.items() if e.startswith(RIVAL)}
        jits = {
            e: r for e, r in es.items() if e.startswith("06_nvrtc_jit/")
        }  # not `fast_compile`: it has its own cost
        if not rivals or not jits:
            continue
        rival = min(rivals, key=lambda e: rivals[e]["median"])
        jit = min(jits, key=lambda e: jits[e]["median"])
        ratio, _, differs = compare(jits[jit], rivals[rival], noise)
        saving_per_element_ms = (rivals[rival]["median"] - jits[jit]["median"]) / 1000 / dispatch["n"]
        cells = [
            op,
            k,
            f"`{rival}`",
            f"{ratio:.2f}" + ("" if differs else " (not decided)" if differs is None else " (no difference)"),
        ]
        for key, name in labels:
            if c[key] and differs and saving_per_element_ms > 0:
                breakeven[(op, k, name)] = c[key] / saving_per_element_ms
                cells.append(f"{breakeven[(op, k, name)]:.2e}")
            else:
                cells.append("not decided" if differs is None else "never")
        rows.append(cells)
    doc.add(
        "**When a compile pays off.** A compile for a user's op competes with the route that runs the same"
        " op with none, the interpreter (16): the number of elements (over any number of launches) after"
        " which the JIT kernel (06, best form) has saved its compile against it, printed only where the two"
        " kernels' times differ beyond the noise. A switch, a pointer table or a virtual call run only the"
        " ops built into the program, so they are no rival for a user's op (the dispatch table gives their"
        " cost for the ops built in)"
        + (":\n" if rows else f"; the interpreter was not measured at the sweep's n = {dispatch['n']}.\n")
    )
    if rows:
        doc.add(
            table(
                ["op", "k", "rival", "its time / JIT time"] + [f"break-even n: {n}" for _, n in labels],
                rows,
            )
        )
        never = sum(1 for r in rows if r[4] == "never")
        doc.add(
            f"No break-even (the times within the noise, or the interpreter faster) in {never} of {len(rows)}"
            f" (op, k) pairs; where the JIT kernel is faster, its compile is repaid after"
            f" {min(breakeven.values()):.1e} elements at the soonest.\n"
            if breakeven
            else f"No break-even in any of the {len(rows)} (op, k) pairs.\n"
        )
        if breakeven:
            plots.jit_breakeven(doc, breakeven)
    out["breakeven"] = breakeven
    return out
