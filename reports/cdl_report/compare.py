"""Two results directories side by side (two GPUs, two revisions, two drivers or compilers): every
benchmark both hold, the ratio of its medians (B over A) with a Mann-Whitney U test on the
repetitions, the fractions of copy and the dispatch penalties as differences (they are ratios
already), and what only one side holds. A change is a *finding* when the ratio is beyond the
threshold (by default the larger of the two runs' own noise thresholds) and the test tells the
repetitions apart, where there are enough of them to decide (stats.compare)."""
import math
import os

from .document import Document, table
from .results import label
from .sections.dispatch import BASE, k_sweep
from .stats import compare, noise_threshold


def run_of(results):
    """One line naming a run: device, revision, date, copy bandwidth."""
    b = results.bench
    return (
        f"{b.env.get('device', {}).get('name', '?')}, revision `{b.context.get('git_revision', '?')}`, "
        f"{b.context.get('date', '?')}, copy {b.copy_gbs:.0f} GB/s"
    )


def timed_rows(bench):
    """{name without Google Benchmark's suffixes: row} of every benchmark with a median."""
    return {
        name.split("/iterations:")[0].split("/min_time:")[0]: row
        for name, row in bench.rows.items()
        if "median" in row
    }


def penalties(bench):
    """{(op, k, entry): time / the template's} over the dispatch sweep (vec forms)."""
    n, sweep = k_sweep(bench)
    return {
        (op, k, e): t / row[BASE]
        for op, ks in sweep.items()
        for k, row in ks.items()
        for e, t in row.items()
        if BASE in row and e.endswith("/vec") and e != BASE
    }


def compare_runs(a, b, threshold=None):
    """{'threshold', 'rows': [(name, ratio, p, finding)], 'only_a', 'only_b', 'fractions', 'penalties'}."""
    if threshold is None:
        threshold = max(noise_threshold(a.bench, a.repeat)[0], noise_threshold(b.bench, b.repeat)[0])
    rows_a, rows_b = timed_rows(a.bench), timed_rows(b.bench)
    both = sorted(set(rows_a) & set(rows_b))
    rows = [(n, *compare(rows_a[n], rows_b[n], threshold)) for n in both]
    fractions = {}
    for n in both:
        fa, fb = (r["counters"].get("frac_copy") for r in (rows_a[n], rows_b[n]))
        if fa is not None and fb is not None:
            fractions[n] = (fa, fb)
    pa, pb = penalties(a.bench), penalties(b.bench)
    return {
        "threshold": threshold,
        "rows": rows,
        "only_a": sorted(set(rows_a) - set(rows_b)),
        "only_b": sorted(set(rows_b) - set(rows_a)),
        "fractions": fractions,
        "penalties": {key: (pa[key], pb[key]) for key in sorted(set(pa) & set(pb))},
    }


def write(a, b, c, out_path):
    """The comparison as Markdown at out_path, with its plot beside it."""
    out_dir = os.path.dirname(os.path.abspath(out_path))
    os.makedirs(out_dir, exist_ok=True)
    doc = Document(out_dir)
    rows, t = c["rows"], c["threshold"]
    slower = [r for r in rows if r[3] and r[1] > 1]
    faster = [r for r in rows if r[3] and r[1] < 1]
    doc.add("# CUDA Dispatch Lab: two runs compared\n")
    doc.add(table(["", ""], [["A", f"`{a.directory}`: {run_of(a)}"], ["B", f"`{b.directory}`: {run_of(b)}"]]))
    doc.add(
        f"B's median over A's for each of the {len(rows)} benchmarks both ran. A change is a finding when it"
        f" is beyond {t:.1%} (the larger of the two runs' noise thresholds, unless given) and a Mann-Whitney"
        " U test on the repetitions tells the two apart (p < 0.05); one beyond it whose repetitions are too"
        " few for the test to decide is *not decided*, neither a change nor none.\n"
    )
    undecided = sum(1 for r in rows if r[3] is None)
    doc.add(
        f"**{len(slower)} slower, {len(faster)} faster, {undecided} not decided,"
        f" {len(rows) - len(slower) - len(faster) - undecided} without a finding.** Only in A:"
        f" {len(c['only_a'])}; only in B: {len(c['only_b'])}.\n"
    )
    if rows:
        fig, ax = doc.plt.subplots(figsize=(7, 4))
        ratios = [r[1] for r in rows]
        lo, hi = min(ratios + [0.9]), max(ratios + [1.1])
        bins = [lo * (hi / lo) ** (i / 40) for i in range(41)]
        ax.hist(ratios, bins=bins, color="0.6", label="all")
        ax.hist([r[1] for r in rows if r[3]], bins=bins, color="C3", label="findings")
        ax.axvline(1, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("B / A (median time)")
        ax.set_ylabel("benchmarks")
        ax.legend(fontsize=8)
        doc.figure(
            os.path.splitext(os.path.basename(out_path))[0] + "_ratios.png",
            fig,
            "B's median over A's, every benchmark both ran; the findings in red",
        )

    def p_text(p):
        return "–" if p is None else f"{p:.3f}"

    for title, found in (
        ("Slower in B", sorted(slower, key=lambda r: -r[1])),
        ("Faster in B", sorted(faster, key=lambda r: r[1])),
    ):
        if found:
            doc.add(f"## {title}\n")
            doc.add(
                table(
                    ["benchmark", "B / A", "p"], [[f"`{n}`", f"{r:.3f}", p_text(p)] for n, r, p, _ in found]
                )
            )
    if c["penalties"]:
        doc.add("## Dispatch penalties (time over the template's at the same k), A and B\n")
        doc.add(
            "A penalty is a ratio of two times of one run, so a GPU that is faster everywhere leaves it where"
            " it was; what moves it is the cost of a call against the cost of the op on each GPU.\n"
        )
        doc.add(
            table(
                ["op", "k", "implementation", "A", "B", "B − A"],
                [
                    [op, k, f"`{label(e)}`", f"{pa:.2f}", f"{pb:.2f}", f"{pb - pa:+.2f}"]
                    for (op, k, e), (pa, pb) in c["penalties"].items()
                ],
            )
        )
    if c["fractions"]:
        doc.add("## Fraction of copy bandwidth, A and B\n")
        doc.add(
            table(
                ["benchmark", "A", "B", "B − A"],
                [
                    [f"`{n}`", f"{fa:.3f}", f"{fb:.3f}", f"{fb - fa:+.3f}"]
                    for n, (fa, fb) in sorted(c["fractions"].items())
                ],
            )
        )
    doc.add("## Every benchmark both ran\n")
    doc.add(
        table(
            ["benchmark", "B / A", "p", "finding"],
            [
                [f"`{n}`", f"{r:.3f}" if math.isfinite(r) else str(r), p_text(p), "yes" if f else ""]
                for n, r, p, f in rows
            ],
        )
    )
    for side, names in (("A", c["only_a"]), ("B", c["only_b"])):
        if names:
            doc.add(f"## Only in {side}\n")
            doc.add("\n".join(f"- `{n}`" for n in names) + "\n")
    doc.write(os.path.basename(out_path))
    return slower, faster
