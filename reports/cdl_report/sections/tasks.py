"""Per-element dispatch: the tasks workload, time against the number of distinct ops per layout
(divergence), and the grouping the compile-time strategies need instead."""
from .. import plots
from ..document import fmt_time, table


def add(doc, bench):
    runs = bench.select("tasks")
    if not runs:
        return {}
    doc.add("## Per-element dispatch: the tasks workload (divergence)\n")
    doc.add("Each element's op id comes from a task record. `per_element` strategies dispatch per element "
            "(a warp whose elements hold d different ids runs d cases one after the other); the templates and "
            "lambdas cannot, and group the elements by op first (`grouped`: a sort, then one launch per op; "
            "the grouping is timed with them).\n")
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
    return {"uniform": uniform, "worst": worst}
