"""Matrix products: every (+,×) float32 implementation as a fraction of cuBLAS SGEMM."""
from .. import plots
from ..document import fmt_time, table


def add(doc, bench):
    runs = [(f, e) for f, e in bench.select("matmul", semiring="plus_times") if "cublas/sgemm" in e]
    if not runs:
        return {}
    doc.add("## Matrix products against cuBLAS\n")
    fractions = {}
    for f, es in sorted(runs, key=lambda fe: fe[0]["shape"]):
        base = es["cublas/sgemm"]["median"]
        rows = []
        for entry, row in sorted(es.items(), key=lambda kv: kv[1]["median"]):
            frac = base / row["median"]
            fractions[(f["shape"], entry)] = frac
            rows.append(
                [
                    f"`{entry}`",
                    fmt_time(row["median"]),
                    f"{row['counters'].get('TOP/s', float('nan')):.2f}",
                    f"{frac:.3f}",
                ]
            )
        doc.add(f"(+,×), float32, {f['shape']}: fraction of cuBLAS SGEMM (its time / each time)\n")
        doc.add(table(["implementation", "median", "TOP/s", "of cuBLAS"], rows))
    shape = max((f["shape"] for f, _ in runs), key=lambda s: int(s.split("x")[0]))
    es = next(e for f, e in runs if f["shape"] == shape)
    plots.matmul_fractions(doc, sorted(((fractions[(shape, e)], e) for e in es), reverse=True), shape)
    return fractions
