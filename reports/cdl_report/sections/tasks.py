"""Per-element dispatch: the tasks workload, time against the number of distinct ops per layout
(divergence), and the grouping the compile-time strategies need instead."""
from .. import plots
from ..document import fmt_time, table
from ..stats import span


HEADING = "Per-element dispatch: the tasks workload (divergence)"


def grouping_ratios(bench):
    """{(layout, distinct ops): (the better grouping, its time / the per-element switch's)} per problem."""
    out = {}
    for f, es in bench.select("tasks"):
        grouped = {e: row["median"] for e, row in es.items() if "/grouped" in e and e.startswith("01_")}
        switch = es.get("03_switch/per_element")
        if grouped and switch:
            best = min(grouped, key=grouped.get)
            out[(f["layout"], int(f["distinct"]))] = (best, grouped[best] / switch["median"])
    return out


def add(doc, bench):
    runs = bench.select("tasks")
    if not runs:
        return {}
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
    uniform = {e: row["median"] for f, es in runs if f["layout"] == "uniform" for e, row in es.items()}
    layouts = sorted({f["layout"] for f, _ in runs if f["layout"] != "uniform"})
    entries = sorted({e for _, es in runs for e in es})
    plots.tasks_divergence(doc, runs, layouts, entries, uniform)
    worst = {}
    for f, es in runs:
        for e, row in es.items():
            if e in uniform:
                worst[e] = max(worst.get(e, 1.0), row["median"] / uniform[e])
    rows = [[f"`{e}`", fmt_time(uniform[e]), f"{worst.get(e, 1.0):.2f}"] for e in entries if e in uniform]
    doc.add(table(["implementation", "uniform (1 op)", "worst layout / uniform"], rows))
    # Grouping against the per-element switch, from the better of the two groupings, per problem.
    grouping = grouping_ratios(bench)
    if grouping:
        ratios = [r for _, r in grouping.values()]
        wins = sorted({b.split("/")[1] for b, _ in grouping.values()})
        doc.add(
            "Grouping by op, the better of its two forms in each problem"
            f" ({', '.join(f'`{w}`' for w in wins)} was the better), takes {span(ratios, '{:.1f}')}× the"
            f" per-element switch's time over {len(grouping)} problems: the sort costs more than the"
            " divergence it removes, for ops this cheap.\n"
        )
    return {"uniform": uniform, "worst": worst, "grouping": grouping}
