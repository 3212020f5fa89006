"""Per-element dispatch: the tasks workload, time against the number of distinct ops per layout
(divergence), and the grouping the compile-time strategies need instead."""
from .. import plots
from ..document import fmt_time, table
from ..stats import span


HEADING = "Per-element dispatch: the tasks workload (divergence)"
# The template strategies' groupings made at every launch (the sort inside the timed launch).
PER_LAUNCH = ("01_template_functor/grouped", "01_template_functor/grouped_device")
# What a grouping is made of, each timed alone (cdl_bench's tasks/parts/ and the forms that keep one):
# 01's `grouped` is the sort and then the kernels through the index (`grouped_reused` alone);
# `in_op_order` is the kernels over the data in op order and the scatter of y back.
PARTS = {
    "grouped": "01_template_functor/grouped",
    "through_index": "01_template_functor/grouped_reused",
    "in_op_order": "01_template_functor/in_op_order",
    "sort": "parts/sort",
    "contiguous": "parts/kernels_in_op_order",
    "scatter": "parts/scatter",
    "switch": "03_switch/per_element",
}


def grouping_ratios(bench):
    """{(layout, distinct ops): (the better grouping, its time / the per-element switch's)} per problem."""
    out = {}
    for f, es in bench.select("tasks"):
        grouped = {e: es[e]["median"] for e in PER_LAUNCH if e in es}
        switch = es.get("03_switch/per_element")
        if grouped and switch:
            best = min(grouped, key=grouped.get)
            out[(f["layout"], int(f["distinct"]))] = (best, grouped[best] / switch["median"])
    return out


def grouping_parts(bench):
    """{(layout, distinct ops): {part: median µs}} for the problems whose run timed every part."""
    out = {}
    for f, es in bench.select("tasks"):
        if all(e in es for e in PARTS.values()):
            out[(f["layout"], int(f["distinct"]))] = {p: es[e]["median"] for p, e in PARTS.items()}
    return out


def why_grouping_costs(t):
    """A clause on where a grouping's time goes, from its parts ({part: µs} of one problem)."""
    ms, share = fmt_time, lambda part: f"{t[part] / t['grouped']:.0%}"  # noqa: E731
    return (
        f"of its {ms(t['grouped'])}, the sort takes {ms(t['sort'])} ({share('sort')}) and the op kernels"
        f" through the sorted index {ms(t['through_index'])} ({share('through_index')}), against"
        f" {ms(t['contiguous'])} for the same kernels on the data already in op order"
    )


def parts_text(parts):
    """The grouping's explanation, computed from its parts: where the time goes at one op (no
    divergence, no scattering: the sorted index is the identity) and at the layout that costs most,
    and what grows between the two."""
    ms = fmt_time
    base = parts.get(("uniform", 1))
    worst_key = max(parts, key=lambda k: parts[k]["grouped"])
    worst = parts[worst_key]
    text = (
        "**Where a grouping's time goes** (each part timed alone; `grouped_reused` is the grouping made"
        " once and reused, `in_op_order` the data moved into op order once and y scattered back):"
    )
    if base:
        text += (
            f" with one op, {why_grouping_costs(base)}; the per-element switch takes {ms(base['switch'])}."
        )
    if worst_key != ("uniform", 1):
        layout, ops = worst_key
        text += f" At {layout} with {ops} ops, {why_grouping_costs(worst)};"
        text += f" the switch takes {ms(worst['switch'])}."
        if base:
            grew = {p: worst[p] - base[p] for p in ("grouped", "sort", "through_index", "contiguous")}
            scattered = (
                grew["through_index"] > grew["sort"] and grew["contiguous"] < grew["through_index"] / 2
            )
            text += (
                f" From one op to that layout the grouping grows by {ms(grew['grouped'])}: the sort by"
                f" {ms(grew['sort'])}, the kernels through the index by {ms(grew['through_index'])}, the"
                f" same kernels on data in op order by {ms(grew['contiguous'])}: "
                + ("the kernels through the index" if grew["through_index"] > grew["sort"] else "the sort")
                + " grows most"
                + (
                    ", and since the kernels in op order do not, that growth is the scattered reads and"
                    " writes through the permutation, not the ops"
                    if scattered
                    else ""
                )
                + "."
            )
    kept = min(worst["through_index"], worst["in_op_order"])
    text += (
        f" Kept across launches, a grouping costs {ms(worst['through_index'])} a launch through the"
        f" index, {ms(worst['in_op_order'])} in op order with y scattered back ({ms(worst['scatter'])}"
        f" of it the scatter): {kept / worst['switch']:.2f}× the switch there.\n"
    )
    return text


def find(bench):
    """The tasks workload's figures: each entry's time at one op (uniform) and its worst layout over
    that, the groupings against the per-element switch, and their parts; {} without the workload."""
    runs = bench.select("tasks")
    if not runs:
        return {}
    uniform = {e: row["median"] for f, es in runs if f["layout"] == "uniform" for e, row in es.items()}
    worst = {}
    for f, es in runs:
        for e, row in es.items():
            if e in uniform:
                worst[e] = max(worst.get(e, 1.0), row["median"] / uniform[e])
    return {
        "runs": runs,
        "layouts": sorted({f["layout"] for f, _ in runs if f["layout"] != "uniform"}),
        "entries": sorted({e for _, es in runs for e in es if not e.startswith("parts/")}),
        "uniform": uniform,
        "worst": worst,
        "grouping": grouping_ratios(bench),
        "parts": grouping_parts(bench),
    }


def add(doc, found):
    if not found:
        return
    doc.add(f"## {HEADING}\n")
    doc.add(
        "Each element's op id comes from a task record. `per_element` strategies dispatch per element (a warp"
        " whose elements hold d different ids runs d cases one after the other); the templates and lambdas"
        " cannot, and group the elements by op first, the grouping timed with them: a sort by op id, then"
        " `grouped` copies the group sizes to the host (a synchronising round trip) and launches a kernel per"
        " op present, while `grouped_device` leaves them on the device: 01 and 02 launch a kernel for every"
        " op id, each reading its own range; 14's graph runs only the ops present (an IF node per op id, set"
        " on the GPU), and 15's kernel launches them from the device, each with a grid sized to its group.\n"
    )
    uniform, worst = found["uniform"], found["worst"]
    plots.tasks_divergence(doc, found["runs"], found["layouts"], found["entries"], uniform)
    rows = [
        [f"`{e}`", fmt_time(uniform[e]), f"{worst.get(e, 1.0):.2f}"] for e in found["entries"] if e in uniform
    ]
    doc.add(table(["implementation", "uniform (1 op)", "worst layout / uniform"], rows))
    # Grouping against the per-element switch, from the better of the two groupings, per problem.
    grouping = found["grouping"]
    if grouping:
        ratios = [r for _, r in grouping.values()]
        wins = sorted({b.split("/")[1] for b, _ in grouping.values()})
        doc.add(
            "Grouping by op at every launch, the better of its two forms in each problem"
            f" ({', '.join(f'`{w}`' for w in wins)}), takes {span(ratios, '{:.1f}')}× the per-element"
            f" switch's time over {len(grouping)} problems.\n"
        )
    if found["parts"]:
        doc.add(parts_text(found["parts"]))
