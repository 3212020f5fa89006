"""Virtual calls on an object per element (strategy 11): CUDA's virtual call against the class found
from the object's address (COAL, Zhang, Alawneh and Rogers, ASPLOS 2021), per layout."""
from ..document import fmt_time, table

VIRTUAL = "11_type_from_address/virtual"
COAL = "11_type_from_address/coal"
# The paper's claim: COAL performs 80 % better than CUDA's virtual calls (Volta-era GPUs), a
# speed-up of 1.8.
PAPER_SPEEDUP = 1.8


def add(doc, bench, noise):
    runs = bench.select("objects")
    if not runs:
        return {}
    doc.add("## Virtual calls on an object per element (COAL, strategy 11)\n")
    doc.add(
        "The tasks workload's work written as object-oriented code: one device object per element, of one of "
        "several classes, each element calling a virtual method of its own object. `virtual` calls it as CUDA "
        "does (the object's vtable pointer, the vtable entry, a call through a register) on objects made in "
        "element order; `virtual_by_class` on the same objects allocated by class; `coal` finds the class from "
        "the object's address (each class in an arena of its own) and the method from a table; `coal_inlined` "
        "and `class_switch` switch on the class (from the address, or from a number the object holds) and call "
        "the method directly, inlined. Time over `virtual`'s (below 1: faster):\n"
    )
    forms = sorted({e for _, es in runs for e in es})
    rows, speedups = [], {}
    for f, es in sorted(runs, key=lambda fe: (fe[0]["layout"], int(fe[0]["distinct"]))):
        base = es.get(VIRTUAL)
        if not base:
            continue
        cells = []
        for e in forms:
            row = es.get(e)
            cells.append("–" if not row else f"{row['median'] / base['median']:.2f}")
        rows.append([f["layout"], f["distinct"], fmt_time(base["median"])] + cells)
        if COAL in es:
            speedups[(f["layout"], int(f["distinct"]))] = base["median"] / es[COAL]["median"]
    doc.add(table(["layout", "classes", "`virtual`"] + [f"`{e.split('/', 1)[1]}`" for e in forms], rows))
    if speedups:
        # The verdict per layout, a rule over the measured speed-up against the paper's.
        def verdict(s):
            if s >= PAPER_SPEEDUP * (1 - noise):
                return "reproduces the paper's gain"
            if s > 1 + noise:
                return "pays, less than the paper's gain"
            if s >= 1 - noise:
                return "no difference"
            return "slower"

        doc.add(
            f"COAL's speed-up over CUDA's virtual call (`virtual` time / `coal` time) against the paper's "
            f"{PAPER_SPEEDUP:.1f} (rule: at least the paper's, less the noise, reproduces it; above 1 plus the noise, "
            "pays; within the noise, no difference; below, slower):\n"
        )
        doc.add(
            table(
                ["layout", "classes", "speed-up", "verdict"],
                [[l, str(d), f"{s:.2f}", verdict(s)] for (l, d), s in sorted(speedups.items())],
            )
        )
    return {"speedups": speedups}
