"""Across devices: this run beside each other device's run in the same folder (reports/reference/
holds one directory per device), through the compare tool: which figures move with the memory's
bandwidth, which with the SMs (clock times count), which with the host, and which not at all.

The rule, computed per benchmark from the two runs alone. A benchmark bound by DRAM bandwidth takes
B/A = (A's copy bandwidth / B's) as long on B as on A; one bound by the SMs' issue rate takes (A's clock
x SMs / B's); its *share of the bandwidth gain* is where its measured ratio lies between the two,
on a log scale: 1 moves with the memory, 0 with the SMs, below 0 it got slower than either
predicts. The jit/ stages run on the host's CPU, and are set apart with the hosts' clocks."""
import math
from collections import defaultdict

from ..compare import compare_runs, timed_rows
from ..document import pow2, table
from ..results import identity
from ..stats import median, quantile, span
from ..queries import BASE

SHARE_BANDWIDTH = 0.75  # at least this share of the bandwidth gain: moves with the memory
SHARE_CLOCKS = 0.25  # at most this share (and above -SHARE_CLOCKS): moves with the SMs
PENALTY_ENTRIES = tuple(
    e + "/vec"
    for e in (
        "03_switch",
        "03_switch.hoisted",
        "04_function_pointer.symbol",
        "05_virtual",
        "06_nvrtc_jit",
        "08_expression_jit",
    )
)
CLASSES = ("with the memory", "between", "with the SMs", "slower than either")


def device(bench):
    d = bench.env.get("device", {})
    return {
        "name": d.get("name", "?"),
        "sms": int(d.get("sm_count", 0)),
        "sm_mhz": (bench.clocks_start or {}).get("sm_mhz") or d.get("sm_clock_khz", 0) / 1000,
        "l2": int(d.get("l2_bytes", 0)),
        "copy": bench.copy_gbs,
        "cpus": bench.context.get("num_cpus", "?"),
        "cpu_mhz": bench.context.get("mhz_per_cpu", "?"),
    }


def expected(da, db):
    """(B/A of a bandwidth-bound benchmark, B/A of an SM-bound one)."""
    return da["copy"] / db["copy"], (da["sm_mhz"] * da["sms"]) / (db["sm_mhz"] * db["sms"])


def share(ratio, bw, sm):
    """Where ratio lies between sm (0) and bw (1), on a log scale; None when the two coincide."""
    span = math.log(bw / sm)
    return None if abs(span) < 0.05 else math.log(ratio / sm) / span


def klass(s):
    if s >= SHARE_BANDWIDTH:
        return CLASSES[0]
    if s > SHARE_CLOCKS:
        return CLASSES[1]
    if s > -SHARE_CLOCKS:
        return CLASSES[2]
    return CLASSES[3]


def family(name, row, l2_bytes):
    """The group a benchmark (its name, and its row: Bench.rows) is reported in: its workload; the
    map by k and by whether its working set (input and output) fits in the larger L2 of the two."""
    if name.startswith(("jit/", "tiered/", "flush/")):
        return None
    if name.startswith("copy/"):
        return "copy"
    workload, _, fields = identity(name, row.get("counters"))
    if workload != "map":
        return workload
    size = 8 if fields.get("type") == "f64" else 4
    where = "beyond L2" if 2 * int(fields["n"]) * size > l2_bytes else "fits in L2"
    return f"map, k = {fields['k']}, {where}"


def key_figures(c, a, b, timed):
    """The figures a reader asks for first: (what, A, B, B/A or B - A); timed: run A's rows by name
    (compare.timed_rows)."""
    rows = {n: r for n, r, _, _ in c["rows"]}
    out = [
        (
            "copy bandwidth (GB/s)",
            f"{a.bench.copy_gbs:.0f}",
            f"{b.bench.copy_gbs:.0f}",
            f"{b.bench.copy_gbs / a.bench.copy_gbs:.3f}",
        )
    ]
    big = [
        (int(f["n"]), n)
        for n in rows
        if not n.startswith("jit/")  # host stages: no problem of a workload
        for w, e, f in [identity(n, timed[n].get("counters"))]
        if (w, e, f.get("op"), f.get("type"), f.get("k")) == ("map", BASE, "quadratic", "f32", "1")
    ]
    if big:
        size, n = max(big)
        out.append(
            (
                f"map, 01 vec, quadratic, n = {pow2(size)}, k = 1: time B/A",
                "",
                "",
                f"{rows[n]:.3f}",
            )
        )
    for (op, k, entry), (pa, pb) in c["penalties"].items():
        if op == "quadratic" and k == 256 and entry in ("04_function_pointer.symbol/vec", "05_virtual/vec"):
            out.append((f"penalty, quadratic, k = 256, {entry}", f"{pa:.2f}", f"{pb:.2f}", f"{pb - pa:+.2f}"))
    gemm = [n for n in rows if n.startswith("matmul/01_template_functor/tiled/semiring:plus_times/type:f32/")]
    if gemm:
        n = max(gemm, key=lambda n: int(n.split("/")[-1].split("x")[0]))
        shape = n.split("/")[-1]
        out.append((f"tiled GEMM, 01, {shape}: time B/A", "", "", f"{rows[n]:.3f}"))
        cublas = [_cublas_fraction(t, n, shape) for t in (timed, timed_rows(b.bench))]
        if None not in cublas:
            out.append(
                (
                    f"tiled GEMM, 01, {shape}: of cuBLAS",
                    f"{cublas[0]:.3f}",
                    f"{cublas[1]:.3f}",
                    f"{cublas[1] - cublas[0]:+.3f}",
                )
            )
    return out


def _cublas_fraction(rows, name, shape):
    """cuBLAS SGEMM's time over `name`'s, from timed_rows (names without Google Benchmark's suffixes)."""
    mine, cublas = rows.get(name), rows.get(f"matmul/cublas/sgemm/semiring:plus_times/type:f32/{shape}")
    return cublas["median"] / mine["median"] if mine and cublas else None


# Kernels the two builds wrote differently: a ratio of such kernels compares two kernels, not two
# devices. Each: what marks a run's kernel, and the sentence given the run that has it and the other.
CHANGED = (
    (
        lambda run: run.bench.map_loop_fused,
        lambda has, other: (
            f"**The map's vec kernels differ between the runs.** {has}'s skeleton runs one k loop for all"
            f" of a thread's values (`cdl_map_vec_loop` in its context), {other}'s one loop per value:"
            " beyond k = 1, and for the calls that are not inlined at every k, a map ratio below"
            " compares two kernels, not two devices.\n"
        ),
    ),
    (
        lambda run: run.bench.gemm_steps,
        lambda has, other: (
            f"**The tiled GEMMs may differ between the runs.** {has} measured the tiled kernel's steps"
            f" (`tiled_step*` forms) and {other} did not: {other}'s build may be from before them, with"
            " an earlier tiled kernel (the revisions above say), in which case a matmul ratio below"
            " compares two kernels, not two devices.\n"
        ),
    ),
)


def find(results, others):
    """{other device's name: _find(results, other)} for each other run."""
    return {device(other.bench)["name"]: _find(results, other) for other in others}


def _find(a, b):
    """Run A against run B: the comparison (compare_runs), each device, the ratios a DRAM-bound and an
    SM-bound benchmark would show, which kernels the builds wrote differently, per group the time
    ratios and the classes of their shares, the jit/ stages' ratios, the penalties' moves per k, the
    largest moves of a penalty (measured, and not explained by anything both runs hold), and the
    figures asked for first. Runs of two revisions compare only the copy, which no code of the
    suite's makes: every other ratio would be the device and the code's changes together."""
    c = compare_runs(a, b)
    revisions = [run.bench.context.get("git_revision") for run in (a, b)]
    if revisions[0] != revisions[1]:
        c = {**c, "rows": [row for row in c["rows"] if row[0].startswith("copy/")], "penalties": {}}
    da, db = device(a.bench), device(b.bench)
    bw, sm = expected(da, db)
    l2 = max(da["l2"], db["l2"])
    groups = defaultdict(list)
    timed = timed_rows(a.bench)
    for name, ratio, _, _ in c["rows"]:
        f = family(name, timed[name], l2)
        if f:
            groups[f].append(ratio)
    counts_all = defaultdict(int)
    group_rows = []  # (group, ratios, shares, {class: count})
    for f in sorted(groups):
        shares = [s for s in (share(r, bw, sm) for r in groups[f]) if s is not None]
        counts = defaultdict(int)
        for s in shares:
            counts[klass(s)] += 1
            counts_all[klass(s)] += 1
        group_rows.append((f, groups[f], shares, counts))
    pen = c["penalties"]
    by_k = []  # (k, [(|move|, key)] sorted, those over the noise)
    for k in sorted({key[1] for key in pen}):
        moved = sorted((abs(pen[key][1] / pen[key][0] - 1), key) for key in pen if key[1] == k)
        by_k.append((k, moved, [m for m in moved if m[0] > c["threshold"]]))
    return {
        "a": a,
        "b": b,
        "c": c,
        "da": da,
        "db": db,
        "bw": bw,
        "sm": sm,
        "changed": [
            sentence(*(("A", "B") if marked(a) else ("B", "A")))
            for marked, sentence in CHANGED
            if marked(a) != marked(b)
        ]
        + (
            [
                f"**The runs are of two revisions** (`{revisions[0]}` and `{revisions[1]}`): a ratio of any"
                " benchmark of the suite's code would be the device and whatever changed in the code between"
                " them, together, so only the copy (`cudaMemcpy`, no code of the suite's) is compared here;"
                " two runs of one revision compare two devices benchmark by benchmark.\n"
            ]
            if revisions[0] != revisions[1]
            else []
        ),
        "groups": group_rows,
        "counts": counts_all,
        # A class is named for what tells it apart: where the two GPUs' SMs run at the same rate (within
        # the noise), a benchmark in the SMs' class did not move, which an SM-bound benchmark and one
        # bound by neither (the host, a latency) would both do.
        "alike": abs(sm - 1) <= c["threshold"],
        "revisions": revisions,
        "stages": sorted((n, r) for n, r, _, _ in c["rows"] if n.startswith("jit/")),
        "penalties_by_k": by_k,
        "unexplained": unexplained(by_k, (a.profile, b.profile)),
        "figures": key_figures(c, a, b, timed),
    }


UNEXPLAINED_SHOWN = 3  # the largest moves of a penalty named on the first screen


def profiled(profile, op, k, entry):
    """Whether a run's Nsight Compute profile has counters for an entry's map kernel on (op, k)."""
    return any(
        r.get("entry") == entry and {f"op={op}", f"k={k}"} <= set(r.get("problem", "").split())
        for r in (profile or {}).get("kernels", [])
    )


def unexplained(by_k, profiles):
    """[(|move|, (op, k, entry))] of the penalties that moved between the devices beyond the noise at the
    sweep's largest k (the first screen's), the largest first, at most UNEXPLAINED_SHOWN, that neither
    run's counters explain: a penalty is a ratio of two kernels on one device, so the devices' clocks
    and bandwidths, which would speed both alike, do not predict its move; a move whose kernel and the
    template's both runs profiled on that problem is left to the counters (the profile section)."""
    top = max((k for k, _, _ in by_k), default=None)  # the first screen's k
    over = sorted((m for k, _, over in by_k if k == top for m in over), reverse=True)
    return [
        (move, key)
        for move, key in over
        if not all(profiled(p, key[0], key[1], e) for p in profiles for e in (key[2], BASE))
    ][:UNEXPLAINED_SHOWN]


def add(doc, found):
    """One subsection per other device's run, from find()'s comparisons."""
    if not found:
        return
    doc.add("## Across devices\n")
    doc.add(
        "This run beside each other device's run in the same folder, benchmark by benchmark "
        "(`reports/compare.py` does the same for any two runs). "
        + __doc__.split("\n\n", 1)[1].replace("\n", " ")
        + "\n"
    )
    for comparison in found.values():
        _one(doc, comparison)


def _one(doc, f):
    a, b, c, da, db, bw, sm = (f[k] for k in ("a", "b", "c", "da", "db", "bw", "sm"))
    doc.add(f"### {da['name']} (A) and {db['name']} (B)\n")
    doc.add(
        table(
            ["", "A", "B", "B/A"],
            [
                ["device", da["name"], db["name"], ""],
                [
                    "revision",
                    f"`{a.bench.context.get('git_revision', '?')}`",
                    f"`{b.bench.context.get('git_revision', '?')}`",
                    "",
                ],
                ["SMs", da["sms"], db["sms"], f"{db['sms'] / da['sms']:.3f}" if da["sms"] else ""],
                [
                    "SM clock (MHz, at the start)",
                    f"{da['sm_mhz']:.0f}",
                    f"{db['sm_mhz']:.0f}",
                    f"{db['sm_mhz'] / da['sm_mhz']:.3f}",
                ],
                ["L2 (MiB)", f"{da['l2'] / 2**20:.0f}", f"{db['l2'] / 2**20:.0f}", ""],
                [
                    "copy bandwidth (GB/s, measured)",
                    f"{da['copy']:.0f}",
                    f"{db['copy']:.0f}",
                    f"{db['copy'] / da['copy']:.3f}",
                ],
                ["host CPUs, MHz", f"{da['cpus']}, {da['cpu_mhz']}", f"{db['cpus']}, {db['cpu_mhz']}", ""],
            ],
        )
    )
    for sentence in f["changed"]:
        doc.add(sentence)
    pen = c["penalties"]
    if f["unexplained"]:
        doc.add(
            "**Measured, not explained.** The largest moves of a penalty (time over the template's on the"
            " same device, which a faster clock or memory would cancel) between the two devices: "
            + "; ".join(
                f"`{entry.split('/')[0]}` on {op} at k = {k}, {pen[(op, k, entry)][0]:.2f}× on A and"
                f" {pen[(op, k, entry)][1]:.2f}× on B ({move:.1%})"
                for move, (op, k, entry) in f["unexplained"]
            )
            + ". Neither device's clocks and bandwidths predict them, and the two runs' profiles do not both"
            " hold counters for both kernels on these problems: they are measured here, and not explained.\n"
        )
    if share(bw, bw, sm) is None:
        doc.add(
            f"The two devices' copy bandwidths and SM rates predict the same ratio ({bw:.3f} and {sm:.3f}): "
            "no benchmark can tell memory from SMs here, so only the ratios are listed.\n"
        )
    rows = [
        [g, len(ratios), f"{median(ratios):.3f} ({quantile(ratios, 0.05):.3f}–{quantile(ratios, 0.95):.3f})"]
        + ([f"{median(shares):.2f}"] + [counts[k] for k in CLASSES] if shares else ["–"] * (1 + len(CLASSES)))
        for g, ratios, shares, counts in f["groups"]
    ]
    counts_all = f["counts"]
    alike = f["alike"]
    names = dict(zip(CLASSES, CLASSES), **({"with the SMs": "unchanged"} if alike else {}))
    doc.add(
        f"A benchmark bound by DRAM bandwidth would take {bw:.3f} times as long on B, one bound by the SMs"
        f" {sm:.3f}. Per group, the median time ratio B/A, its 5th to 95th percentile, the median share of"
        f" the bandwidth gain realised, and how many benchmarks fall in each class (with the memory: share ≥"
        f" {SHARE_BANDWIDTH}; {names['with the SMs']}: within ±{SHARE_CLOCKS}; between; slower than either)"
        + (
            ": the two GPUs' SMs run at the same rate, so a benchmark that did not move may be bound by the"
            " SMs, the host or a latency, which these two runs cannot tell apart.\n"
            if alike
            else ":\n"
        )
    )
    doc.add(table(["group", "benchmarks", "B/A (5–95 %)", "share", *(names[k] for k in CLASSES)], rows))
    doc.add(
        "In all: "
        + ", ".join(f"{counts_all[k]} {names[k]}" for k in CLASSES)
        + f" of {sum(counts_all.values())}.\n"
    )
    stages = f["stages"]
    if stages:
        rs = [r for _, r in stages]
        same = (da["cpus"], da["cpu_mhz"]) == (db["cpus"], db["cpu_mhz"])
        doc.add(
            f"The {len(stages)} jit/ stages (compiles, links, loads: host work) take {median(rs):.2f} times"
            f" as long on B at the median ({span(rs, '{:.2f}')}): they follow the host, not the GPU. "
            + (
                f"Both hosts report {da['cpus']} CPUs at {da['cpu_mhz']} MHz (as Google Benchmark reads"
                " them), so what differs is the host's CPU itself, which these files do not name.\n"
                if same
                else (
                    f"A's host: {da['cpus']} CPUs at {da['cpu_mhz']} MHz; B's: {db['cpus']} at"
                    f" {db['cpu_mhz']} MHz.\n"
                )
            )
        )
    if pen:
        doc.add(
            "**The dispatch penalties** (time over the template's, vec forms, the dispatch sweep) are ratios"
            " on one device: a faster memory or clock that sped every form alike would cancel in them.\n"
        )
        krows = [
            [
                k,
                f"{len(over)} of {len(moved)}",
                f"{median(m for m, _ in moved):.1%}",
                f"{moved[-1][0]:.1%} ({moved[-1][1][2].split('/')[0]}, {moved[-1][1][0]})",
                "no" if len(over) <= len(moved) // 10 else "yes",
            ]
            for k, moved, over in f["penalties_by_k"]
        ]
        doc.add(
            f"Per k: how many moved by more than the noise threshold ({c['threshold']:.1%}), by how much, and"
            " whether the penalties at that k move with the device (more than a tenth of them moved):\n"
        )
        doc.add(table(["k", "moved", "median change", "largest", "move?"], krows))
        entries = [e for e in PENALTY_ENTRIES if any(key[2] == e for key in pen)]
        prow = []
        for op in ("quadratic", "sine"):
            for k in (1, 16, 256):
                if any((op, k, e) in pen for e in entries):
                    prow.append(
                        [f"{op}, k = {k}"]
                        + [
                            (
                                f"{pen[(op, k, e)][0]:.2f} → {pen[(op, k, e)][1]:.2f}"
                                if (op, k, e) in pen
                                else "–"
                            )
                            for e in entries
                        ]
                    )
        doc.add("\nA → B, for the quadratic and sine ops:\n")
        doc.add(table(["", *(e.split("/")[0] for e in entries)], prow))
    figures = f["figures"]
    doc.add("The figures asked for first:\n")
    doc.add(table(["figure", "A", "B", "B/A or B − A"], [list(r) for r in figures]))
    _plot(doc, c, a, bw, sm, db["name"])


def _plot(doc, c, a, bw, sm, other):
    """Each benchmark's time ratio against how near A's copy bandwidth it ran (fraction of copy)."""
    pts = defaultdict(list)
    for name, ratio, _, _ in c["rows"]:
        if name in c["fractions"] and not name.startswith(("jit/", "flush/")):
            pts[name.split("/")[0]].append((c["fractions"][name][0], ratio))
    if not pts:
        return
    fig, ax = doc.plt.subplots(figsize=(8, 4.5))
    for w, xy in sorted(pts.items()):
        ax.scatter([x for x, _ in xy], [y for _, y in xy], s=8, alpha=0.6, label=w)
    ax.axhline(bw, color="k", ls="--", lw=1, label=f"bandwidth-bound ({bw:.3f})")
    ax.axhline(sm, color="k", ls=":", lw=1, label=f"SM-bound ({sm:.3f})")
    ax.set_xlabel(f"fraction of the copy bandwidth on {device(a.bench)['name']}")
    ax.set_ylabel(f"time on {other} / time on {device(a.bench)['name']}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    doc.figure(
        "devices_" + other.replace(" ", "_") + ".png",
        fig,
        (
            f"Each benchmark's time on {other} over its time here, against how close to the copy bandwidth it"
            " ran here"
        ),
    )
