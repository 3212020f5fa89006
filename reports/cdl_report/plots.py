"""Every figure of the report. Each function draws numbers a section has already computed and adds
the figure, with its caption, to the document: no figure computes a finding of its own."""
from collections import defaultdict

from .results import label


def log_log(ax, xlabel, ylabel, title=None, legend=True):
    """The axes most figures here share: log2 x (n, k, ops), log y (times, counts), a light grid."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=7)


def map_bandwidth(doc, by_entry, copy):
    """by_entry: {entry: [(n, GB/s)]}; copy: [(n, GB/s)] of cudaMemcpy for the same bytes."""
    fig, ax = doc.plt.subplots(figsize=(8, 5))
    # Each strategy's vec form, and the peers (whose "form" is the library's function name).
    shown = sorted(e for e in by_entry if e.split("/")[1] not in ("scalar", "staged"))
    for entry in shown + [e for e in ("01_template_functor/scalar",) if e in by_entry]:
        pts = sorted(by_entry[entry])
        ax.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            marker="o",
            ms=3,
            linestyle="--" if entry.endswith("scalar") else "-",
            label=entry,
        )
    if copy:
        ax.plot(
            [c[0] for c in copy],
            [c[1] for c in copy],
            color="black",
            lw=2.5,
            label="cudaMemcpy (the copy bandwidth)",
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (float32 elements)")
    ax.set_ylabel("GB/s (bytes read + written / time)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    doc.figure(
        "map_bandwidth.png",
        fig,
        (
            "Map bandwidth against n: each strategy's vec form, the library peers, "
            "the template's scalar form (dashed) and the device-to-device copy of the same bytes"
        ),
    )


def dispatch_penalty(doc, sweep, cols, spread):
    """sweep: {op: {k: {entry: median µs}}}; one panel per op, one line per entry of cols, with the
    min-max of its repetitions as error bars (spread: {(op, k): {entry: (min, max)}})."""
    ops = sorted(sweep)
    fig, axes = doc.plt.subplots(1, len(ops), figsize=(6 * len(ops), 4.5), squeeze=False)
    for ax, op in zip(axes[0], ops):
        ks = sorted(sweep[op])
        for c in ["01_template_functor/vec"] + cols:
            pts = [(k, sweep[op][k][c]) for k in ks if c in sweep[op][k]]
            lo_hi = [spread.get((op, k), {}).get(c, (None, None)) for k, _ in pts]
            err = [
                [max(t - (lo or t), 0) for (_, t), (lo, _) in zip(pts, lo_hi)],
                [max((hi or t) - t, 0) for (_, t), (_, hi) in zip(pts, lo_hi)],
            ]
            ax.errorbar(
                [p[0] for p in pts],
                [p[1] for p in pts],
                yerr=err,
                marker="o",
                ms=3,
                capsize=2,
                label=label(c),
            )
        log_log(ax, "k (evaluations per element)", "median time (µs)", op)
    doc.figure(
        "dispatch_penalty.png",
        fig,
        (
            "Time against k per strategy (vec forms): the slope is the cost of a call; "
            "bars span the repetitions' min to max"
        ),
    )


def tasks_divergence(doc, runs, layouts, entries, uniform):
    """runs: [(fields, {entry: row})] of the tasks workload; uniform: {entry: median at one op}."""
    fig, axes = doc.plt.subplots(
        1, len(layouts), figsize=(5.5 * len(layouts), 4.3), squeeze=False, sharey=True
    )
    for ax, layout in zip(axes[0], layouts):
        for entry in entries:
            pts = sorted(
                (int(f["distinct"]), es[entry]["median"])
                for f, es in runs
                if f["layout"] == layout and entry in es
            )
            if entry in uniform:
                pts = [(1, uniform[entry])] + pts
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=entry)
        log_log(
            ax,
            "distinct ops (per warp for 'warp' and 'random')",
            "median time (µs)",
            f"layout: {layout}",
            legend=False,
        )
    axes[0][0].legend(fontsize=7)
    doc.figure(
        "tasks_divergence.png",
        fig,
        "Tasks: time against the number of distinct ops, per layout (d = 1 is the uniform layout)",
    )


def jit_breakeven(doc, breakeven):
    """breakeven: {(op, k, cost label): elements}; a line per op and cost."""
    pts = defaultdict(list)
    for (op, k, cost), n_even in breakeven.items():
        pts[(op, cost)].append((k, n_even))
    fig, ax = doc.plt.subplots(figsize=(7, 4.5))
    for (op, cost), p in sorted(pts.items()):
        p.sort()
        ax.plot(
            [x[0] for x in p],
            [x[1] for x in p],
            marker="o",
            ms=3,
            linestyle={"first compile (new process)": "-", "later compile": "-."}.get(cost, "--"),
            label=f"{op}, {cost}",
        )
    log_log(ax, "k (evaluations per element)", "elements processed to repay it")
    doc.figure(
        "jit_breakeven.png",
        fig,
        (
            "Elements after which a JIT compile (solid: the first in a new process; dash-dot: "
            "a later one) or a disk-cache load (dashed) has paid for itself, against the fastest rival"
        ),
    )


def image_blur(doc, blurs, strategies):
    """blurs: [(radius, {entry: row})]; each strategy's global (solid) and tiled (dashed) form."""
    fig, ax = doc.plt.subplots(figsize=(8, 5))
    for i, s in enumerate(strategies):
        color = f"C{i % 10}"
        for form, style in (("global", "-"), ("tiled", "--")):
            pts = [(rad, es[f"{s}/{form}"]["median"]) for rad, es in blurs if f"{s}/{form}" in es]
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                style,
                color=color,
                marker="o",
                ms=3,
                label=f"{s} ({form})",
            )
    ax.set_xlabel("radius r")
    ax.set_ylabel("median time (µs)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    doc.figure(
        "image_blur.png",
        fig,
        "Box blur time against radius: global form (solid) and tiled form (dashed) per strategy",
    )


def matmul_fractions(doc, items, shape):
    """items: [(fraction of cuBLAS, entry)], largest first."""
    fig, ax = doc.plt.subplots(figsize=(8, 0.35 * len(items) + 1.2))
    ax.barh([e for _, e in items][::-1], [v for v, _ in items][::-1], color="C0")
    ax.set_xlabel(f"fraction of cuBLAS SGEMM, {shape}")
    ax.set_xlim(0, 1.05)
    ax.grid(axis="x", alpha=0.3)
    ax.tick_params(axis="y", labelsize=7)
    doc.figure(
        "matmul_cublas.png",
        fig,
        f"(+,×) matrix product, float32, {shape}: each implementation's fraction of cuBLAS",
    )


def matmul_progression(doc, points, cublas_tops, shape):
    """points: [(step label, TOP/s)] in order; cuBLAS's rate as a line."""
    fig, ax = doc.plt.subplots(figsize=(8, 3.2))
    labels, values = [p for p, _ in points], [v for _, v in points]
    ax.bar(labels, values, color="C0")
    for i, v in enumerate(values):
        ax.text(i, v, f"{v / cublas_tops:.2f}", ha="center", va="bottom", fontsize=7)
    ax.axhline(cublas_tops, color="C3", ls="--", label="cuBLAS SGEMM")
    ax.set_ylabel("TOP/s (fraction of cuBLAS above each bar)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    doc.figure(
        "matmul_progression.png",
        fig,
        f"(+,×) matrix product, float32, {shape}: the tiled kernel's steps against cuBLAS",
    )


def answer(doc, lines, noise, caption):
    """The first screen's figure: lines {way: [(k, time over the template's)]}. Ticks read as
    numbers (1×, 2×, 4×; k = 1, 4, 16, ...); each line is named at its end; the ways within the noise
    of the template's line at every k are drawn as that line and named together beside it, rather
    than one over another."""
    fig, ax = doc.plt.subplots(figsize=(7.5, 4.2))
    if not doc.draw:  # the figure's link alone: no matplotlib
        doc.figure("answer.png", fig, caption)
        return
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    on = sorted(w for w, pts in lines.items() if all(abs(y - 1) <= noise for _, y in pts))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.axhline(1.0, color="black", lw=1.2)
    ks = sorted({k for pts in lines.values() for k, _ in pts})
    top = max((y for pts in lines.values() for _, y in pts), default=1.0)
    low = min((y for pts in lines.values() for _, y in pts), default=1.0)
    for way, pts in lines.items():
        if way in on:
            continue
        line = ax.plot([k for k, _ in pts], [y for _, y in pts], marker="o", ms=3)[0]
        ax.annotate(
            way,
            (pts[-1][0], pts[-1][1]),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize=7,
            color=line.get_color(),
            va="center",
        )
    if on:
        ax.annotate(
            "at the template's time: " + ", ".join(on),
            (ks[0], 1.0),
            xytext=(0, 5),
            textcoords="offset points",
            fontsize=7,
            va="bottom",
        )
    ax.xaxis.set_major_locator(FixedLocator(ks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    doubling = [2.0**e for e in range(-3, 12) if low / 2 <= 2.0**e <= 2 * top]
    ax.yaxis.set_major_locator(FixedLocator(doubling))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.set_ylim(min(low, 1.0) / 1.25, 2 * top)
    ax.set_xlim(ks[0] / 1.3, ks[-1] * 6)  # room for the names at the lines' ends
    ax.set_xlabel("k (evaluations of the op per element)")
    ax.set_ylabel("time / the template's")
    ax.grid(alpha=0.3)
    doc.figure("answer.png", fig, caption)
