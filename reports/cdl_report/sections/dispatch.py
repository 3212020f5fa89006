"""The dispatch penalty: time against k (evaluations per element) for every strategy, over the
template functor's time at the same k."""
from collections import defaultdict

from .. import plots
from ..document import PAST_L2, pow2, table
from ..results import label
from ..stats import LEGEND, compare, mark, mode, span
from .map import DEMONSTRATION
from .resources import map_kernel

BASE = "01_template_functor/vec"
# 08's vec kernel, written in NVVM IR, runs one k loop for all of a thread's values. The skeleton's
# does too since the run context says cdl_map_vec_loop=fused; in runs from before, it ran one loop
# per value, 08's time beyond k = 1 measured that loop, not a way of calling the op, and 08 is set
# apart from the penalties (expression_loop below).
EXPRESSION = "08_expression_jit/vec"
# Elements per block of the vec form: 256 threads x 4 vectors x 4 floats (skeletons/elementwise.cuh).
VEC_ELEMENTS_PER_BLOCK = 256 * 4 * 4


def heading(n):
    return f"The dispatch penalty: time against k (map, float32, n = {pow2(n)})"


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


def penalties(bench, n, noise, op=None):
    """{(op, k): {entry: (time / the template's, finding?)}} of the vec forms at n elements."""
    out = {}
    for f, es in bench.select("map", type="f32", n=n):
        if (op and f["op"] != op) or BASE not in es:
            continue
        out[(f["op"], int(f["k"]))] = {
            e: compare(es[BASE], row, noise)[::2] for e, row in es.items() if e.endswith("/vec") and e != BASE
        }
    return out


def cell(ratio_finding):
    """A ratio, in parentheses where it is not a finding (within the noise, or not told apart), with
    a ? after it where the repetitions could not decide (stats.mark)."""
    return mark(*ratio_finding)


def waves(resources, entry, n, sm_count):
    """How many full-GPU waves of blocks an entry's vec kernel runs at n elements (None if unknown)."""
    k = map_kernel(resources, entry)
    if not k or not k.get("blocks_per_sm") or not sm_count:
        return None
    return -(-n // VEC_ELEMENTS_PER_BLOCK) / (k["blocks_per_sm"] * sm_count)


def in_l2(n, l2):
    """How a map of n float32 elements meets an L2 of l2 bytes: the input is read from memory (the
    L2 is flushed before each launch); the output stays in the L2 after the kernel if it fits, and
    part of it can even where it does not (the last lines written are written back after the kernel
    ends): only a working set of PAST_L2 times the L2 keeps that part small."""
    return f"{4 * n / 2**20:.0f} MiB each way, " + (
        "the output fits in the L2 and is written back after the timed kernel ends"
        if 4 * n <= l2
        else (
            "past the L2, though under 8× it: part of the output's write-back can land after the timed"
            " kernel ends, so a time ratio here is a finding and a fraction of copy is not"
            if 8 * n < PAST_L2 * l2
            else "at least 8× the L2 with the input"
        )
    )


def size_find(bench, n, noise, resources, compared):
    """The quadratic op's penalties at the sweep's n (compared: penalties() there) and at the largest
    other n, side by side, with the waves of blocks each kernel runs at both sizes; {} where the run
    has no other n."""
    sizes = sorted(
        {
            int(f["n"])
            for f, es in bench.select("map", type="f32", op="quadratic")
            if f.get("k") not in (None, "1") and int(f["n"]) != n
        }
    )
    if not sizes:
        return {}
    other = sizes[-1]
    sms = bench.env.get("device", {}).get("sm_count", 0)
    sweep_p = {key: ratios for key, ratios in compared.items() if key[0] == "quadratic"}  # at n
    other_p = penalties(bench, other, noise, "quadratic")
    rows, moved = [], {}  # rows: (k, entry, at n, at other, waves at n, waves at other)
    for (op, k), ratios in sorted(other_p.items()):
        for e, (r_other, _) in sorted(ratios.items()):
            r_sweep = sweep_p.get((op, k), {}).get(e)
            if r_sweep:
                moved[(k, e)] = r_other / r_sweep[0] - 1
                rows.append(
                    (k, e, r_sweep[0], r_other, waves(resources, e, n, sms), waves(resources, e, other, sms))
                )
    if not rows:
        return {}
    by_k = defaultdict(list)
    for (k, _), m in moved.items():
        by_k[k].append(abs(m))
    return {
        "n_other": other,
        "sms": sms,
        "rows": rows,
        "base_waves": (waves(resources, BASE, n, sms), waves(resources, BASE, other, sms)),
        "moved": moved,
        "by_k": {k: max(v) for k, v in sorted(by_k.items())},
        "worst": max(max(v) for v in by_k.values()),
    }


def size_render(doc, bench, n, noise, found):
    if not found:
        return
    other, sms = found["n_other"], found["sms"]
    wave = lambda w: "–" if w is None else f"{w:.2f}"  # noqa: E731
    l2 = bench.env.get("device", {}).get("l2_bytes", 0)
    doc.add(
        f"**Does the size change the penalty?** The sweep runs at n = {pow2(n)} ({in_l2(n, l2)}; L2"
        f" {l2 / 2**20:.0f} MiB). The quadratic op again at n = {pow2(other)} ({in_l2(other, l2)}), each"
        " entry's time over the template's at the same size, and the waves of blocks its kernel runs at each"
        f" (blocks over blocks per SM × {sms} SMs; the template's: {wave(found['base_waves'][0])} /"
        f" {wave(found['base_waves'][1])}).\n"
    )
    doc.detail(
        f"The penalties at n = {pow2(n)} and n = {pow2(other)}",
        table(
            ["k", "implementation", f"n = {pow2(n)}", f"n = {pow2(other)}", "change", "waves"],
            [
                [
                    k,
                    f"`{label(e)}`",
                    f"{at_n:.2f}",
                    f"{at_other:.2f}",
                    f"{found['moved'][(k, e)]:+.1%}",
                    f"{wave(w_n)} / {wave(w_other)}",
                ]
                for k, e, at_n, at_other, w_n, w_other in found["rows"]
            ],
        ),
        "Each entry at both sizes, with its waves",
    )
    worst = found["worst"]
    doc.add(
        "The penalties move by at most "
        + ", ".join(f"{v:.1%} at k = {k}" for k, v in found["by_k"].items())
        + f" between the sizes; the noise is {noise:.1%}. "
        + ("So the size matters: " if worst > noise else "So the size does not matter here: ")
        + f"the table of penalties above is at n = {pow2(n)}"
        + (
            ", where the output does not fit in the L2 (its last lines can still be written back after"
            " a kernel's time). "
            if 4 * n > l2
            else ", where the output's write-back falls outside the kernel's time. "
        )
        + "Where a kernel runs few waves, the last, partial wave costs a different share of the time at each"
        " size, and kernels of different occupancy run different numbers of waves.\n"
    )


def find(bench, noise, resources=None):
    """The dispatch sweep's figures: its n, the medians ({op: {k: {entry: µs}}}), the vec columns, each
    entry's time over the template's with whether it is a finding (`compared`) and as a plain ratio
    (`penalty`), the repetitions' spread, the sizes' check and 08's loop; {} without a sweep."""
    n, sweep = k_sweep(bench)
    if not sweep:
        return {}
    cols = sorted(
        {
            e
            for ks in sweep.values()
            for row in ks.values()
            for e in row
            if e.endswith("/vec")
            and not e.startswith(("00_", "01_"))
            and DEMONSTRATION not in e
            and (e != EXPRESSION or bench.map_loop_fused)
        }
    )
    compared = penalties(bench, n, noise)
    # The same ratios without the test's answer, for the columns the tables show.
    penalty = {key: {c: compared[key][c][0] for c in cols if c in compared[key]} for key in sorted(compared)}
    spread = defaultdict(dict)  # (op, k) -> entry -> (min, max) over the repetitions
    for f, es in bench.select("map", type="f32", n=n):
        if f.get("k") is not None:
            spread[(f["op"], int(f["k"]))] = {e: (r.get("min"), r.get("max")) for e, r in es.items()}
    # What the compiler made of the indirect ways' calls (resources.json, from the SASS), beside the
    # template's kernel: the cause the findings name, counted rather than assumed.
    calls = {
        c: (map_kernel(resources, c) or {}).get("indirect_calls")
        for c in cols
        if c.startswith(("04_", "05_"))
    }
    calls = {c: v for c, v in calls.items() if v is not None}
    base_calls = (map_kernel(resources, BASE) or {}).get("indirect_calls")
    loop = {}
    if not bench.map_loop_fused:
        loop = {(op, k): r[EXPRESSION][0] for (op, k), r in compared.items() if EXPRESSION in r}
    return {
        "n": n,
        "sweep": sweep,
        "cols": cols,
        "compared": compared,
        "penalty": penalty,
        "spread": spread,
        "sizes": size_find(bench, n, noise, resources, compared),
        "calls": (calls, base_calls),
        "expression_loop": loop,
    }


def add(doc, bench, noise, found):
    if not found:
        return
    n, sweep, cols, compared, penalty = (found[k] for k in ("n", "sweep", "cols", "compared", "penalty"))
    doc.add(f"## {heading(n)}\n")
    doc.add(
        "Each element evaluates the op k times, so the cost of a call separates from the cost of memory. The"
        " table gives each strategy's time over the template functor's at the sweep's largest k, where a"
        " call's cost shows most (vec forms; 1.00 = no penalty); " + LEGEND + ".\n"
    )
    top = {op: max(k for o, k in compared if o == op) for op in sorted(sweep)}
    doc.add(
        table(
            ["strategy"] + [f"{op}, k = {k}" for op, k in top.items()],
            [
                [f"`{label(c)}`"]
                + [cell(compared[(op, k)][c]) if c in compared[(op, k)] else "–" for op, k in top.items()]
                for c in cols
            ],
        )
    )
    doc.detail(
        "The dispatch penalty at every k",
        table(
            ["op", "k"] + [f"`{label(c)}`" for c in cols],
            [
                [op, k] + [cell(compared[(op, k)][c]) if c in ratios else "–" for c in cols]
                for (op, k), ratios in penalty.items()
            ],
            keys=2,
        ),
        f"Every k the sweep ran ({', '.join(str(k) for k in sorted({k for _, k in compared}))})",
    )
    plots.dispatch_penalty(doc, sweep, cols, found["spread"])
    # Findings, from the largest k of each op.
    calls, base_calls = found["calls"]
    why = (  # said at the first op
        f" (their vec kernels make {span(calls.values(), '{:.0f}')} calls through a register where the"
        f" template's makes {base_calls}, by their SASS)"
        if calls and base_calls is not None
        else ""
    )
    for op in sorted(sweep):
        k = max(k for (o, k) in penalty if o == op)
        p = penalty[(op, k)]
        indirect = {c: v for c, v in p.items() if c.startswith(("04_", "05_"))}
        # A variant is its own figure, not folded into its strategy's range (06's `fast_compile`
        # trades run time for compile time).
        jit = {c: v for c, v in p.items() if c.startswith(("06_", "07_")) and "." not in label(c)}
        variants = {c: v for c, v in p.items() if c.startswith(("06_", "07_")) and "." in label(c)}
        text = f"- **{op}, k = {k}:** "
        if indirect:
            text += (
                f"function pointers and virtual calls take {span(indirect.values(), '{:.2f}')}× "
                f"the template's time{why}"
            )
            why = ""
        if "03_switch/vec" in p:
            text += f"; the per-element switch {p['03_switch/vec']:.2f}×"
        if "03_switch.hoisted/vec" in p:
            text += f", hoisted out of the loop {p['03_switch.hoisted/vec']:.2f}×"
        if jit:
            text += f"; the run-time compiled strategies {span(jit.values(), '{:.2f}')}×"
        if variants:
            text += " (" + ", ".join(f"`{label(c)}` {v:.2f}×" for c, v in sorted(variants.items())) + ")"
        doc.add(text + ".")
    doc.add("")
    expression_loop(doc, found["expression_loop"])
    size_render(doc, bench, n, noise, found["sizes"])


def expression_loop(doc, ratios):
    """08's vec kernel over the template's, per op and k: at k = 1 the same loads, beyond it one fused
    k loop against the skeleton's loop per value."""
    if not ratios:
        return
    at_1 = [r for (_, k), r in ratios.items() if k == 1]
    top = max(k for _, k in ratios)
    at_top = {op: ratios[(op, k)] for op, k in ratios if k == top}
    doc.add(
        "**08 is not in the table.** Its vec kernel (NVVM IR written by the program) makes the same 16-byte"
        f" loads as the skeleton's: at k = 1 it takes {span(at_1, '{:.2f}')}× the template's time. Beyond k ="
        " 1 it runs one k loop for all of a thread's values, where the skeleton's `map_apply` runs a loop"
        f" per value; the loads, the op's arithmetic and the stores are the same. At k = {top} it takes "
        + ", ".join(f"{r:.2f}× ({op})" for op, r in sorted(at_top.items()))
        + " the template's time: the cheaper the op, the larger the gain. The kernels differ in that loop"
        " alone, so the difference measures the skeleton's loop, not a way to call the op (which of the"
        " loop's instructions it comes from is not measured here); every penalty above is taken against a"
        " template that pays it too.\n"
    )
