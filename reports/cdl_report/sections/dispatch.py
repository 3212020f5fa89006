"""The dispatch penalty: time against k (evaluations per element) for every strategy, over the
template functor's time at the same k."""
from collections import defaultdict

from .. import plots
from ..document import pow2, table
from ..results import label
from ..stats import mode


def k_sweep(bench):
    """{op: {k: {entry: median}}} for the dispatch sweep (f32, the most common n among k > 1)."""
    runs = [(f, e) for f, e in bench.select("map", type="f32") if f.get("k") not in (None, "1")]
    if not runs:
        return None, {}
    n = mode(f["n"] for f, _ in runs)
    sweep = defaultdict(dict)
    for f, e in bench.select("map", type="f32", n=n):
        sweep[f["op"]][int(f["k"])] = {entry: row["median"] for entry, row in e.items()}
    return int(n), sweep


def add(doc, bench):
    n, sweep = k_sweep(bench)
    if not sweep:
        return {}
    doc.add(f"## The dispatch penalty: time against k (map, float32, n = {pow2(n)})\n")
    doc.add("Each element evaluates the op k times, so the cost of a call separates from the cost of memory. "
            "The table gives each strategy's time over the template functor's (vec forms; 1.00 = no penalty).\n")
    cols = sorted({e for ks in sweep.values() for row in ks.values() for e in row
                   if e.endswith("/vec") and not e.startswith(("00_", "01_"))})
    rows, penalty = [], {}
    for op, ks in sorted(sweep.items()):
        for k, row in sorted(ks.items()):
            base = row.get("01_template_functor/vec")
            if not base:
                continue
            ratios = {c: row[c] / base for c in cols if c in row}
            penalty[(op, k)] = ratios
            rows.append([op, k] + [f"{ratios[c]:.2f}" if c in ratios else "–" for c in cols])
    doc.add(table(["op", "k"] + [f"`{label(c)}`" for c in cols], rows))
    plots.dispatch_penalty(doc, sweep, cols)
    # Findings, from the largest k of each op.
    for op in sorted(sweep):
        k = max(k for (o, k) in penalty if o == op)
        p = penalty[(op, k)]
        indirect = {c: v for c, v in p.items() if c.startswith(("04_", "05_"))}
        jit = {c: v for c, v in p.items() if c.startswith(("06_", "07_"))}
        text = f"- **{op}, k = {k}:** "
        if indirect:
            text += (f"function pointers and virtual calls take {min(indirect.values()):.2f}–{max(indirect.values()):.2f}× "
                     "the template's time (the call cannot be inlined, and the arguments go through the ABI)")
        if "03_switch/vec" in p:
            text += f"; the per-element switch {p['03_switch/vec']:.2f}×"
        if "03_switch.hoisted/vec" in p:
            text += f", hoisted out of the loop {p['03_switch.hoisted/vec']:.2f}×"
        if jit:
            text += f"; the run-time compiled strategies {min(jit.values()):.2f}–{max(jit.values()):.2f}×"
        doc.add(text + ".")
    doc.add("")
    return {"n": n, "sweep": sweep, "penalty": penalty}
