"""Matrix products: every implementation against cuBLAS (SGEMM, DGEMM), the tiled kernel's
progression step by step, and the semirings without a fused multiply-add against a model of their rate."""
from .. import plots
from ..document import fmt_time, table
from ..stats import goal_verdict

# What each form of the tiled kernel adds to the one before (common/skeletons/matmul.cuh says how).
STEPS = [
    ("01_template_functor/naive", "naive: a thread per element of C, A and B from global memory"),
    (
        "01_template_functor/tiled_step0",
        "step 0: 128 x 128 tiles, 8 x 8 per thread, one buffer, two barriers",
    ),
    ("01_template_functor/tiled_step1", "step 1: 16-byte shared and global reads, double buffering"),
    ("01_template_functor/tiled_step2", "step 2: B by cp.async, two blocks per SM"),
    ("01_template_functor/tiled_step3", "step 3: A's shared rows padded"),
    ("01_template_functor/tiled", "step 4: two slices per trip, buffers known at compile time"),
]
CUBLAS = {"f32": "cublas/sgemm", "f64": "cublas/dgemm"}
TARGET = {"of cuBLAS": 0.85, "of model": 0.8}  # the tiled GEMM's goals, as fractions


def volume(shape):
    m, n, k = (int(x) for x in shape.split("x"))
    return m * n * k


def dispatch_shape(fractions):
    """The float32 shape with the most tiled kernels measured (the dispatch table's), largest on ties."""
    counts = {}
    for shape, entry in fractions:
        counts[shape] = counts.get(shape, 0) + entry.endswith("/tiled")
    return max(counts, key=lambda s: (counts[s], volume(s)), default=None)


def runs_of(bench):
    """The (+,×) problems that have cuBLAS's time, float32 then float64, smallest first."""
    runs = [
        (f, e) for f, e in bench.select("matmul", semiring="plus_times") if CUBLAS.get(f.get("type")) in e
    ]
    return sorted(runs, key=lambda fe: (fe[0]["type"], volume(fe[0]["shape"])))


def find(bench):
    """{(shape, entry): cuBLAS's time over the entry's} of the float32 (+,×) problems."""
    return {
        (f["shape"], entry): es[CUBLAS["f32"]]["median"] / row["median"]
        for f, es in runs_of(bench)
        if f["type"] == "f32"
        for entry, row in es.items()
        if "/tiled_step" not in entry
    }


def add(doc, bench, noise, fractions):
    runs = runs_of(bench)
    if not runs:
        return
    doc.add("## Matrix products against cuBLAS\n")
    for f, es in runs:
        base_name = CUBLAS[f["type"]]
        base = es[base_name]["median"]
        rows = [
            [
                f"`{entry}`",
                fmt_time(row["median"]),
                f"{row['counters'].get('TOP/s', float('nan')):.2f}",
                f"{base / row['median']:.3f}",
            ]
            for entry, row in sorted(es.items(), key=lambda kv: kv[1]["median"])
            if "/tiled_step" not in entry  # the progression's table
        ]
        kind = "float32" if f["type"] == "f32" else "float64"
        doc.add(f"(+,×), {kind}, {f['shape']}: fraction of `{base_name}` (its time / each time)\n")
        doc.add(table(["implementation", "median", "TOP/s", f"of {base_name.split('/')[1]}"], rows))
        if f["type"] == "f64":
            doc.add(
                "cuBLAS's DGEMM on Hopper runs on the FP64 tensor cores (DMMA); the tiled kernel uses FP64"
                " fused multiply-adds on the SM's FP64 units, so this fraction is not a goal, only a"
                " distance.\n"
            )
    shape = dispatch_shape(fractions)
    if shape:
        es = next(e for f, e in runs if f["shape"] == shape and f["type"] == "f32")
        items = [(fractions[(shape, e)], e) for e in es if (shape, e) in fractions]
        plots.matmul_fractions(doc, sorted(items, reverse=True), shape)
    progression(doc, bench, noise)
    semirings(doc, bench, noise)


def progression(doc, bench, noise):
    """Each step of the tiled kernel at the size its forms were measured, against cuBLAS."""
    found = [
        (f, e)
        for f, e in bench.select("matmul", semiring="plus_times", type="f32")
        if "01_template_functor/tiled_step0" in e and "cublas/sgemm" in e
    ]
    if not found:
        return
    f, es = max(found, key=lambda fe: volume(fe[0]["shape"]))
    base = es["cublas/sgemm"]["median"]
    rows, points, before = [], [], None
    for entry, what in STEPS:
        if entry not in es:
            continue
        t = es[entry]["median"]
        tops = es[entry]["counters"].get("TOP/s", float("nan"))
        rows.append(
            [
                what,
                fmt_time(t),
                f"{tops:.2f}",
                f"{base / t:.3f}",
                "–" if before is None else f"{before / t:.2f}×",
            ]
        )
        points.append((what.split(":")[0], tops))
        before = t
    cublas_tops = es["cublas/sgemm"]["counters"].get("TOP/s", float("nan"))
    doc.add(f"### The tiled kernel, step by step ((+,×), float32, {f['shape']}, template functor)\n")
    doc.add(
        "Each form is the same skeleton with one more of its steps switched on "
        "(`common/skeletons/matmul.cuh`, template parameter `Step`), measured in this run.\n"
    )
    doc.add(table(["form", "median", "TOP/s", "of cuBLAS", "speed-up over the row before"], rows))
    final = es.get("01_template_functor/tiled")
    if final:
        frac = base / final["median"]
        goal = TARGET["of cuBLAS"]
        reps = (final.get("reps", []), es["cublas/sgemm"].get("reps", []))
        doc.add(
            f"The last step reaches {frac:.3f} of cuBLAS SGEMM: the goal of at least {goal} is"
            f" {goal_verdict(frac, goal, noise, reps=reps)} (the noise threshold: {noise:.1%}).\n"
        )
    plots.matmul_progression(doc, points, cublas_tops, f["shape"])


def semirings(doc, bench, noise):
    """(min,+) and (max,×) against their model: the same kernel's (+,×) rate, halved (two instructions
    a step, where the plain product's fused multiply-add is one). A model, not a bound: the halving
    doubles the loads and barriers too, which the semiring pays once, so a kernel can pass it."""
    rows, reps = [], []  # reps: each row's (its repetitions, twice the (+,×) kernel's)
    for f, es in sorted(bench.select("matmul", type="f32"), key=lambda fe: volume(fe[0]["shape"])):
        if f["semiring"] == "plus_times":
            continue
        plain = next(
            (e for g, e in bench.select("matmul", semiring="plus_times", type="f32", shape=f["shape"])), {}
        )
        for entry, row in sorted(es.items()):
            # The model counts instructions: the kernels that call the op through the ABI (04, 05)
            # are limited by the call instead.
            if not entry.endswith("/tiled") or entry not in plain or entry.startswith(("04_", "05_")):
                continue
            tops, ref = row["counters"].get("TOP/s"), plain[entry]["counters"].get("TOP/s")
            if not tops or not ref:
                continue
            model = ref / 2
            reps.append((row.get("reps", []), [2 * t for t in plain[entry].get("reps", [])]))
            rows.append(
                [
                    f["semiring"],
                    f["shape"],
                    f"`{entry}`",
                    f"{tops:.2f}",
                    f"{model:.2f}",
                    f"{tops / model:.2f}",
                ]
            )
    if not rows:
        return
    goal = TARGET["of model"]
    doc.add("### Semirings without a fused multiply-add, against a model\n")
    doc.add(
        "(min,+) and (max,×) take two instructions a step (an add or multiply, then FMNMX) where (+,×) takes "
        "one FFMA, so the model of their rate is the same kernel's (+,×) rate halved. It is a model, not a "
        "bound: halving also doubles the (+,×) kernel's loads, barriers and address arithmetic, which the "
        f"semiring pays once, so a kernel can pass it. Goal: at least {goal} of the model.\n"
    )
    doc.add(table(["semiring", "shape", "tiled kernel", "TOP/s", "model TOP/s", "of model"], rows))
    # of model = 2 × the (+,×) kernel's time over its own: the U test of the one against the other
    tiled_template = [(r, p) for r, p in zip(rows, reps) if r[2] == "`01_template_functor/tiled`"]
    if tiled_template:
        worst, its = min(((float(r[5]), p) for r, p in tiled_template), key=lambda wp: wp[0])
        doc.add(
            f"Template functor, lowest fraction of its model: {worst:.2f}; the goal of at least {goal} is"
            f" {goal_verdict(worst, goal, noise, reps=its)}.\n"
        )
