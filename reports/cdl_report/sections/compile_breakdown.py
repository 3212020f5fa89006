"""Where a compile's time goes (on the details page): NVRTC's phases for 06 and the floor, what each
part of 06's program costs, where 07's link goes, and 07 with its kernels optimised before the link."""
from ..document import table
from ..stats import ALPHA, paired_p, span
from ..queries import stage_row


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
    ("lineinfo", "`-lineinfo` (06 with it against 06 without it)"),
    ("std_cxx20", "`-std=c++20` (06 against 06 with `-std=c++17`)"),
    ("minimal", "`-minimal` (06 against 06 without it)"),
)


def parts(doc, stages):
    """What each part of 06's program costs in NVRTC's phases, and whether a paired t-test on the
    repetitions' differences tells it from none."""
    rows, found = [], {}
    for part, label in PARTS:
        row = stage_row(stages, f"jit/parts/{part}/new_op")
        c = (row or {}).get("counters", {})
        deltas = [r.get("delta_ms") for r in (row or {}).get("rep_counters", [])]
        if not row or "delta_ms" not in c or None in deltas:
            continue
        p = paired_p(deltas)
        told = p is not None and p < ALPHA
        found[part] = (c["delta_ms"], told)
        rows.append(
            [label, f"{c['with_ms']:.1f}", f"{c['without_ms']:.1f}"]
            + [f"{c.get('delta_' + k, float('nan')):+.1f}" for k, _ in PHASES]
            + [
                f"{c['delta_ms']:+.1f}",
                f"{'yes' if told else 'no'} ({'–' if p is None else f'{p:.2g}'}, {len(deltas)})",
            ]
        )
    if not rows:
        return
    doc.add(
        "**What each part of 06's program costs**, by the same account: each row compiles two programs that"
        " differ by that part alone, one beside the other in every iteration and in turns (the host's speed"
        " drifts within a run; two compiles milliseconds apart see the same host), a new text each time."
        " Medians over the repetitions of each repetition's means; the part is told from the noise when a"
        f" paired t-test on the repetitions' differences gives p < {ALPHA}:\n"
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
                "told apart (p, repetitions)",
            ],
            rows,
        )
    )

    def cost(part):
        """A part's difference in the whole compile, worded with the rule's answer; None if not measured."""
        if part not in found:
            return None
        ms, told = found[part]
        return f"{ms:.1f} ms" + ("" if told else " (within the noise)")

    if cost("vec_kernel") and cost("headers"):
        text = (
            f"The vec kernel and its op add {cost('vec_kernel')} to a compile, the headers they are written"
            f" with {cost('headers')}"
        )
        if cost("all_kernels"):
            text += f"; every form's kernel in one program would add {cost('all_kernels')}" + (
                ", which is why each form's kernel is compiled at its first launch"
                if found["all_kernels"][1]
                else ""
            )
        options = [
            f"`{flag}` by {found[p][0]:+.1f} ms"
            for p, flag in (("lineinfo", "-lineinfo"), ("std_cxx20", "-std=c++20"), ("minimal", "-minimal"))
            if p in found and found[p][1]
        ]
        text += (
            "; of the options measured, " + ", ".join(options) + " beyond the noise"
            if options
            else "; no option measured changes it beyond the noise"
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
