"""A user's op by how many times it runs: for each route that can run an op typed at run time, its
one-time cost plus N launches of its kernel, and which route costs least in total, at three sizes.
Computed from the run's own figures (the new-op stages, the map's kernels at k = 1) and set against
the streams of launches the run measured whole (strategy 10's), so it needs no benchmark of its own."""
from ..document import pow2, table
from . import jit_stages
from .tiered import EXPRESSION, MODES, PATCHED

LAUNCHES = (1, 10, 100, 10_000)
SIZES = (2**20, 2**24, 2**28)
OP = "quadratic"
# The routes that run an op typed at run time (jit_stages.NEW_OP's, its baseline tier aside); 17 runs
# only the ops its stencils hold, the quadratic among them.
ROUTES = ("16_interpreter", "17_copy_and_patch", "08_expression_jit", "07_jit_lto", "06_nvrtc_jit")


def once(bench):
    """{route: (low, median, high) ms} of its one-time cost (jit_stages.new_op_costs); routes not run
    left out."""
    costs = jit_stages.new_op_costs(bench.stages)
    return {r: costs[r] for r in ROUTES if r in costs}


def kernels(bench, n, k=1):
    """{route: (min, median, max) µs} of each route's vec kernel on the op at n and k."""
    for fields, entries in bench.select("map", type="f32", op=OP, n=n, k=k):
        return {
            r: tuple(
                entries[f"{r}/vec"].get(q, entries[f"{r}/vec"]["median"]) for q in ("min", "median", "max")
            )
            for r in ROUTES
            if f"{r}/vec" in entries
        }
    return {}


def total(one_time, kernel, launches):
    """(low, median, high) ms of a route's one-time cost and `launches` of its kernel."""
    return tuple(o + launches * t / 1000 for o, t in zip(one_time, kernel))


def cheapest(totals):
    """The routes that cost least: the least median, and every other whose low-high range overlaps
    its own (a difference inside the spread is no difference)."""
    best = min(totals, key=lambda r: totals[r][1])
    lo, _, hi = totals[best]
    return [best] + sorted(r for r, (l, _, h) in totals.items() if r != best and l <= hi and lo <= h)


def streams_check(bench, fixed):
    """Each stream of launches the run timed whole (strategy 10's), for the routes alone: [measured /
    modelled total], and in how many of the streams' (n, k, launches) the route the sum picks is the
    one that measured least (among those it names, two where their ranges overlap), of how many, and
    where it is not, [(the least measured, the one picked, picked / least measured)]. Routes are set
    against each other only within one family of streams, which run one op: 06's runs the built-in
    op, the others a text of 08's language."""
    families = (
        tuple(r for r in MODES if r in ROUTES),
        tuple(r for r in EXPRESSION + (PATCHED,) if r in ROUTES),
    )
    ratios, streams = [], {}
    for fields, entries in bench.select("tiered"):
        n, k, launches = int(fields["n"]), int(fields["k"]), int(fields["launches"])
        per = kernels(bench, n, k)
        for family, routes in enumerate(families):
            for route in routes:
                if f"{route}/vec" in entries and route in per and route in fixed:
                    modelled = total(fixed[route], per[route], launches)
                    measured = entries[f"{route}/vec"]["median"] / 1000
                    ratios.append(measured / modelled[1])
                    streams.setdefault((family, n, k, launches), {})[route] = (measured, modelled)
    pairs = [s for s in streams.values() if len(s) > 1]
    missed = []
    for s in pairs:  # the sum's pick is every route cheapest() names, as the table's cells do
        least, picked = min(s, key=lambda r: s[r][0]), cheapest({r: m for r, (_, m) in s.items()})
        if least not in picked:
            missed.append((least, picked[0], s[picked[0]][0] / s[least][0]))
    return ratios, len(pairs) - len(missed), len(pairs), missed


def ms(value):
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.3g} ms"


def find(bench):
    """{"once": each route's one-time cost, "sizes": the sizes measured, "cheapest": {(launches, n):
    ([the cheapest routes], its total ms)}, "streams": [measured / modelled], "agree": (streams where
    the sum picks the route that measured least, of how many)}; {} where the run lacks the figures."""
    fixed = once(bench)
    found = {}
    per_size = {n: kernels(bench, n) for n in SIZES}
    sizes = [n for n in SIZES if per_size[n]]
    for launches in LAUNCHES:
        for n in sizes:
            per = per_size[n]
            totals = {r: total(fixed[r], per[r], launches) for r in fixed if r in per}
            if len(totals) >= 2:
                best = cheapest(totals)
                found[(launches, n)] = (best, totals[best[0]][1])
    if not found:
        return {}
    ratios, agree, pairs, missed = streams_check(bench, fixed)
    return {
        "once": fixed,
        "sizes": sizes,
        "cheapest": found,
        "streams": ratios,
        "agree": (agree, pairs),
        "missed": missed,
    }


def add(doc, found):
    """The table of the cheapest route by launches and size, with the command that answers it for the
    reader's own op."""
    if not found:
        return
    fixed, sizes, ratios, (agree, pairs) = found["once"], found["sizes"], found["streams"], found["agree"]
    rows = [
        [f"{launches:,}"]
        + [
            " or ".join(f"`{r}`" for r in found["cheapest"][(launches, n)][0])
            + f" ({ms(found['cheapest'][(launches, n)][1])})"
            if (launches, n) in found["cheapest"]
            else "–"
            for n in sizes
        ]
        for launches in LAUNCHES
    ]
    doc.add(
        "**Your own op, by how many times it runs.** `cdl_run --expr 'your op' --n N --launches L`"
        " (bench/run.cpp) times each route that can run an op typed at run time on your GPU and names the"
        " cheapest for L launches. Here, for the quadratic op at k = 1, the route that costs least in total"
        " (its one-time cost, then the launches' kernel time; two named where their ranges overlap), from"
        " this run's figures, in a process that has used each route before (the first op of a new process"
        " pays each route's first use too: the table above) (`17_copy_and_patch` runs only the ops its"
        " stencils hold: + − × min max, comparisons and ?:, a division by a constant and up to twelve calls,"
        " as the quadratic; `cdl_run --explain` says, with no GPU, whether it takes yours):\n"
    )
    doc.add(table(["launches"] + [f"n = {pow2(n)}" for n in sizes], rows))
    doc.add(
        "One-time: "
        + ", ".join(f"`{r}` {ms(fixed[r][1])}" for r in ROUTES if r in fixed)
        + (
            f". Set against the {len(ratios)} streams of launches the run timed whole (strategy 10's routes"
            f" alone), the measured total is {min(ratios):.2f}–{max(ratios):.2f}× this sum, which counts the"
            f" kernels alone, not the host's time between launches; the sum names the route that measured"
            f" least in {agree} of the {pairs} streams of one op"
            + (
                "; where not, its pick measured "
                + ", ".join(f"{x:.2f}×" for *_, x in sorted(found["missed"], key=lambda m: m[2]))
                + " the least"
                if found["missed"]
                else ""
            )
            if ratios
            else ". The run timed no stream of launches to set the sum against"
        )
        + ".\n"
    )
