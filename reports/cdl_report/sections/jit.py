"""Run-time compilation: what each stage of 06, 07 and 08 costs on the host, by the cache state
it meets, and the number of elements after which a compile has paid for itself against every
strategy that takes the op at run time without a compiler."""
from ..document import Parts, table
from ..stats import span
from ..queries import kernels_facts, map_kernel, stage_counter, stage_ms
from . import breakeven
from .compile_breakdown import link_steps, parts, phases, preoptimised
from .jit_stages import (
    ROUTES,
    answered_by,
    assembled_by_driver,
    first_in_process,
    interleaved,
    new_op_costs,
    overlap,
    same_text_cause,
    spread,
    times_floor,
)


HEADING = "Run-time compilation: what it costs and when it pays"


def ratio(x):
    """A ratio to two decimals, or to two significant digits where it is under 0.1 (0.0024, not 0.00)."""
    return f"{x:.2f}" if x >= 0.1 else f"{x:.2g}"


def interleaved_table(doc, stages):
    """Every route's new op, from the interleaved benchmark, beside a new process's first result; and
    the interpreter's new process's first split by the probe that loads every kernel with the context."""
    routes, fresh = interleaved(stages), first_in_process(stages)
    if routes:
        doc.add(
            "**A new op through every route, the routes interleaved** (one process; each round compiles a"
            " new text through every route, in an order that turns each round, so that the host's drift"
            " falls on all alike): from the text to a 2^20 map's validated result. Median and 10th–90th"
            " percentile over the rounds; × floor is each round's time over NVRTC's one-line kernel compiled"
            " in the same round. A new process's first result is the route in a process of its own, its CUDA"
            " context made first, on 2^16 elements (median, min–max); route 10's is its first tier's, its"
            " compiles left running:\n"
        )
        rows = [
            [
                f"`{r}`",
                ROUTES[r],
                spread(routes[r]) if r in routes else "–",
                ratio(routes[r]["x_floor"]) if r in routes and routes[r]["x_floor"] else "–",
                f"{fresh[r][0]:.1f} ms ({fresh[r][1]:.1f}–{fresh[r][2]:.1f})" if r in fresh else "–",
            ]
            for r in ROUTES
            if r in routes or r in fresh
        ]
        doc.add(table(["route", "way", "a new op", "× floor", "a new process's first"], rows))
    eager = first_in_process(stages, eager=True)
    if "16" in eager and "16" in fresh:
        (lazy, lo, hi), (loaded, elo, ehi) = fresh["16"], eager["16"]
        doc.add(
            f"16's new process's first, {lazy:.1f} ms, is {loaded:.1f} ms ({elo:.1f}–{ehi:.1f}) with every"
            " kernel loaded with the context, before the clock (`CUDA_MODULE_LOADING=EAGER`): "
            + (
                "the ranges overlap, so loading its kernels at their first launch (the default) costs"
                " nothing this run tells apart.\n"
                if lo <= ehi and elo <= hi
                else "loading its kernels at their first launch, the default, is the other"
                f" {lazy - loaded:.1f} ms.\n"
            )
        )


BASELINE, OPTIMISED = "08_expression_jit.baseline/vec", "08_expression_jit/vec"


def baseline(doc, c, variants):
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
                f" against {optimised:.2f}× for the optimised tier (each against a floor compiled beside it:"
                " the host's speed moves over minutes)"
            )
    ratios = variants["baseline"]
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


def fast_compile(doc, c, variants, routes):
    """06's variant fast_compile: the compile it saves (no difference where the two routes' spreads
    overlap), its kernel's time beside 06's, and what its kernel is made of (resources.json's records
    of the two vec kernels, quadratic)."""
    if not (c["06 fast compile"] and c["compile"]):
        return
    ratio = variants["fast_compile"]
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
    kernels = variants["fast_compile_kernels"]
    if all(kernels.values()):
        f, d = kernels["06_nvrtc_jit.fast_compile"], kernels["06_nvrtc_jit"]
        local = ": a stack frame is local memory, traffic the template's kernel does not have"
        text += ". The quadratic vec kernels: " + kernels_facts([("fast_compile", f), ("06", d)])
        text += local if f["stack"] > d["stack"] else ""
    doc.add(text + ".\n")


def variant_figures(dispatch, resources):
    """The variants' kernels against their routes': 08's baseline tier over its optimised tier per
    (op, k) of the dispatch sweep, 06's fast_compile over 06 per k, and the two 06 vec kernels'
    resources (quadratic)."""
    penalty = (dispatch or {}).get("penalty", {})
    return {
        "baseline": {
            key: p[BASELINE] / p[OPTIMISED] for key, p in penalty.items() if BASELINE in p and OPTIMISED in p
        },
        "fast_compile": {
            k: p["06_nvrtc_jit.fast_compile/vec"] / p["06_nvrtc_jit/vec"]
            for (op, k), p in penalty.items()
            if "06_nvrtc_jit.fast_compile/vec" in p and "06_nvrtc_jit/vec" in p
        },
        "fast_compile_kernels": {
            e: map_kernel(resources, f"{e}/vec") for e in ("06_nvrtc_jit", "06_nvrtc_jit.fast_compile")
        },
    }


def find(bench, dispatch, noise, resources=None):
    """{"costs": {what: ms} of a new op's compile, link, load and cache hits through each route (the
    interleaved benchmark's median where the run has it, a new process's first likewise), "interleaved":
    its routes with their spread, "first_in_process": a new process's first result by route,
    "breakeven": breakeven.find()'s against the dispatch sweep}."""
    s = bench.stages
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
        "disk hit": stage_ms(s, "jit/cache_disk_hit/"),
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
    return {
        "costs": costs,
        "new_op": new_op_costs(s),
        "interleaved": routes,
        "first_in_process": fresh,
        "variants": variant_figures(dispatch, resources),
        # When a compile pays off, against the interpreter on the dispatch sweep.
        "breakeven": breakeven.find(bench, dispatch, noise, costs) if dispatch and costs["compile"] else None,
    }


def add(doc, bench, found, dispatch, noise, uncached=None):
    """Renders the section from its findings (find())."""
    if not bench.stages:
        return
    doc.add(f"## {HEADING}\n")
    doc.add(
        "Each stage is named by the cache state it meets. A *new op* compiles, every iteration, a text no"
        " cache has seen (two the same fail the benchmark): what a user pays for an op typed at run time."
        " A *same text* stage compiles one text again and again, answered from the second time on by the"
        " compiler's own cache (NVRTC 12.9+ and nvJitLink keep one through the driver) unless"
        " `CUDA_CACHE_DISABLE` is set"
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
    c, routes = found["costs"], found["interleaved"]
    if c["compile"] and c["first compile, new process"]:
        text = (
            f"**A new op costs** {c['first compile, new process']:.0f} ms through 06 as the first"
            + (" result" if "06" in found["first_in_process"] else " compile")
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
                f" {c['compile'] / c['compile, same text']:.1f}× less" + same_text_cause(s, uncached)
            )
        doc.add(text + ".\n")
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
    variants = Parts()
    fast_compile(variants, c, found["variants"], routes)
    baseline(variants, c, found["variants"])
    if variants:
        doc.detail(
            "The faster compiles: 06's fast compile and 08's baseline tier",
            "\n".join(variants),
            "06 with NVRTC's `--Ofast-compile` and 08 without libNVVM's optimiser: the compile each saves"
            " and what its kernels cost",
        )
    if dispatch and c["compile"]:
        breakeven.add(doc, dispatch, found["breakeven"])
