"""float32 against float64, the template functor's vec form: the memory-bound map at its largest n
and the dispatch sweep's arithmetic, as time per element and the ratio."""
from ..document import pow2, table

BASE = "01_template_functor/vec"


def find(bench, dispatch):
    """{(kind, op, k): (n, f32 µs per element, f64 µs per element)}: "memory" the map at k = 1 (f64 at
    its largest n, f32 at the same n or its largest), "arithmetic" the dispatch sweep at k > 1."""
    out = {}
    f32 = {int(f["n"]): e for f, e in bench.select("map", type="f32", k=1, op="quadratic")}
    for f, e in sorted(bench.select("map", type="f64", k=1, op="quadratic"), key=lambda fe: int(fe[0]["n"])):
        n = int(f["n"])
        n32 = n if n in f32 else max(f32, default=None)  # the quick suite runs f64 at half the largest f32 n
        ref = f32.get(n32, {})
        if BASE in e and BASE in ref:
            out[("memory", "quadratic", 1)] = (n, ref[BASE]["median"] / n32, e[BASE]["median"] / n)
    for f, e in bench.select("map", type="f64"):
        k = int(f["k"])
        if k == 1 or not dispatch:
            continue
        row32 = dispatch["sweep"].get(f["op"], {}).get(k)
        if row32 and BASE in e and BASE in row32:
            n = int(f["n"])
            out[("arithmetic", f["op"], k)] = (n, row32[BASE] / n, e[BASE]["median"] / n)
    return out


def ratios(found):
    """{(kind, op, k): f64 time / f32 time}."""
    return {key: per64 / per32 for key, (_, per32, per64) in found.items()}


def add(doc, found):
    if not found:
        return
    doc.add("## float32 against float64 (template functor, vec form)\n")
    rows = [
        [op, k, pow2(n), f"{per32 * 1e6:.3f}", f"{per64 * 1e6:.3f}", f"{per64 / per32:.2f}"]
        for (_, op, k), (n, per32, per64) in found.items()
    ]
    doc.add(table(["op", "k", "n", "ps/element f32", "ps/element f64", "f64 / f32"], rows))
