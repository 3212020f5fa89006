"""float32 against float64 (template functor, vec form): where memory sets the time, and where
arithmetic does."""
from ..document import pow2, table


def add(doc, bench, dispatch):
    rows, ratios = [], {}
    f64_big = bench.select("map", type="f64", k=1, op="quadratic")
    f32 = {int(f["n"]): e for f, e in bench.select("map", type="f32", k=1, op="quadratic")}
    for f, e in f64_big:
        n = int(f["n"])
        n32 = n if n in f32 else max(f32, default=None)  # the quick suite runs f64 at half the largest f32 n
        ref = f32.get(n32, {})
        if "01_template_functor/vec" in e and "01_template_functor/vec" in ref:
            per64 = e["01_template_functor/vec"]["median"] / n
            per32 = ref["01_template_functor/vec"]["median"] / n32
            ratios[("memory", "quadratic", 1)] = per64 / per32
            rows.append(
                ["quadratic", 1, pow2(n), f"{per32 * 1e6:.3f}", f"{per64 * 1e6:.3f}", f"{per64 / per32:.2f}"]
            )
    for f, e in bench.select("map", type="f64"):
        k = int(f["k"])
        if k == 1 or not dispatch:
            continue
        row32 = dispatch["sweep"].get(f["op"], {}).get(k)
        if row32 and "01_template_functor/vec" in e and "01_template_functor/vec" in row32:
            t64, t32 = e["01_template_functor/vec"]["median"], row32["01_template_functor/vec"]
            ratios[("arithmetic", f["op"], k)] = t64 / t32
            n = int(f["n"])
            rows.append(
                [f["op"], k, pow2(n), f"{t32 / n * 1e6:.3f}", f"{t64 / n * 1e6:.3f}", f"{t64 / t32:.2f}"]
            )
    if rows:
        doc.add("## float32 against float64 (template functor, vec form)\n")
        doc.add(table(["op", "k", "n", "ps/element f32", "ps/element f64", "f64 / f32"], rows))
    return ratios
