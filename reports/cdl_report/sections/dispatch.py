"""The dispatch penalty: time against k (evaluations per element) for every strategy, over the
template functor's time at the same k."""
import math
from collections import defaultdict

from .. import plots
from ..document import PAST_L2, pow2, table
from ..results import label
from ..queries import BASE, DEMONSTRATION, k_sweep, map_kernel, penalties
from ..stats import LEGEND, UNDECIDED, mark, span, undecided_run

# 08's vec kernel, written in NVVM IR, runs one k loop for all of a thread's values. The skeleton's
# does too since the run context says cdl_map_vec_loop=fused; in runs from before, it ran one loop
# per value, 08's time beyond k = 1 measured that loop, not a way of calling the op, and 08 is set
# apart from the penalties (expression_loop below).
EXPRESSION = "08_expression_jit/vec"
# Elements per block of the vec form: 256 threads x 4 vectors x 4 floats (skeletons/elementwise.cuh).
VEC_ELEMENTS_PER_BLOCK = 256 * 4 * 4


def heading(n):
    return f"The dispatch penalty: time against k (map, float32, n = {pow2(n)})"


def marked_span(ratio_findings):
    """'1.51–1.52×' over (ratio, finding) pairs, with a ? where the test left any of them undecided."""
    values = list(ratio_findings)
    undecided = UNDECIDED if any(f is None for _, f in values) else ""
    return f"{span([r for r, _ in values], '{:.2f}')}×{undecided}"


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


# Where an excess over the template lies between a fixed cost per launch (the same µs at both
# sizes: share 0) and a cost per element (scaling with n: share 1), on a log scale; a share at most
# PER_LAUNCH is a fixed cost per launch, at least PER_ELEMENT one per element.
PER_LAUNCH, PER_ELEMENT = 0.25, 0.75


def excess_share(excess_n, excess_other, n, other, least=(0, 0)):
    """Where the excess over the template at `other` elements lies between the same as at n (0) and
    scaled by other / n (1), on a log scale; None where either excess is not above its least (the
    template's time within the noise, at that size): an excess within the noise is no cost at all,
    so neither per launch nor per element."""
    if excess_n <= least[0] or excess_other <= least[1]:
        return None
    return math.log(excess_other / excess_n) / math.log(other / n)


def cause(share, waves_n, waves_other, base_waves):
    """Why a penalty moved between the sizes, from its parts: a fixed cost per launch (its excess over
    the template the same µs at both), its blocks' waves (only where its waves differ from the
    template's at either size), or not explained by these figures."""
    if share is not None and share <= PER_LAUNCH:
        return "per launch"
    if None not in (waves_n, waves_other) and (waves_n, waves_other) != base_waves:
        return "waves"
    return "not explained"


def size_find(bench, n, noise, resources, compared):
    """The quadratic op's penalties at the sweep's n (compared: penalties() there) and at the largest
    other n, side by side, with each entry's excess over the template in µs and the waves of blocks
    each kernel runs at both sizes, and the cause of each move beyond the noise (cause()); {} where
    the run has no other n."""
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
    medians = {
        (int(f["n"]), int(f["k"])): {e: row["median"] for e, row in es.items()}
        for f, es in bench.select("map", type="f32", op="quadratic")
        if "k" in f and int(f["n"]) in (n, other)
    }
    sweep_p = {key: ratios for key, ratios in compared.items() if key[0] == "quadratic"}  # at n
    other_p = penalties(bench, other, noise, "quadratic")
    base_waves = (waves(resources, BASE, n, sms), waves(resources, BASE, other, sms))
    rows, moved, causes = [], {}, {}  # rows: (k, entry, at n, at other, waves at n, at other, excess µs)
    for (op, k), ratios in sorted(other_p.items()):
        for e, (r_other, _) in sorted(ratios.items()):
            r_sweep = sweep_p.get((op, k), {}).get(e)
            if not r_sweep or (n, k) not in medians or (other, k) not in medians:
                continue
            moved[(k, e)] = r_other / r_sweep[0] - 1
            t_n, t_o = medians[(n, k)], medians[(other, k)]
            excess = (t_n[e] - t_n[BASE], t_o[e] - t_o[BASE])
            w = (waves(resources, e, n, sms), waves(resources, e, other, sms))
            if abs(moved[(k, e)]) > noise:
                least = (noise * t_n[BASE], noise * t_o[BASE])
                causes[(k, e)] = cause(excess_share(*excess, n, other, least), *w, base_waves)
            rows.append((k, e, r_sweep[0], r_other, *w, excess))
    if not rows:
        return {}
    by_k = defaultdict(list)
    for (k, _), m in moved.items():
        by_k[k].append(abs(m))
    return {
        "n_other": other,
        "sms": sms,
        "rows": rows,
        "base_waves": base_waves,
        "moved": moved,
        "causes": causes,
        "by_k": {k: max(v) for k, v in sorted(by_k.items())},
        "worst": max(max(v) for v in by_k.values()),
    }


def size_render(doc, bench, n, noise, found):
    if not found:
        return
    other, sms = found["n_other"], found["sms"]
    wave = lambda w: "–" if w is None else f"{w:.2f}"  # noqa: E731
    l2 = bench.env.get("device", {}).get("l2_bytes", 0)
    causes = found["causes"]
    doc.add(
        f"**Does the size change the penalty?** The sweep runs at n = {pow2(n)} ({in_l2(n, l2)}; L2"
        f" {l2 / 2**20:.0f} MiB). The quadratic op again at n = {pow2(other)} ({in_l2(other, l2)}), each"
        " entry's time over the template's at the same size, its excess over the template's time in µs, and"
        f" the waves of blocks its kernel runs at each (blocks over blocks per SM × {sms} SMs; the"
        f" template's: {wave(found['base_waves'][0])} / {wave(found['base_waves'][1])}).\n"
    )
    doc.detail(
        f"The penalties at n = {pow2(n)} and n = {pow2(other)}",
        table(
            [
                "k",
                "implementation",
                f"n = {pow2(n)}",
                f"n = {pow2(other)}",
                "change",
                "excess µs",
                "waves",
                "cause",
            ],
            [
                [
                    k,
                    f"`{label(e)}`",
                    f"{at_n:.2f}",
                    f"{at_other:.2f}",
                    f"{found['moved'][(k, e)]:+.1%}",
                    f"{excess[0]:.1f} / {excess[1]:.1f}",
                    f"{wave(w_n)} / {wave(w_other)}",
                    causes.get((k, e), "–"),
                ]
                for k, e, at_n, at_other, w_n, w_other, excess in found["rows"]
            ],
        ),
        "Each entry at both sizes, with its excess over the template, its waves and the cause of a move",
    )
    worst = found["worst"]
    by_cause = defaultdict(list)
    for (k, e), c in sorted(causes.items()):
        by_cause[c].append((k, e))
    excess = {(k, e): x for k, e, *_, x in found["rows"]}

    def named(keys):
        entries = sorted({label(e) for _, e in keys})
        excesses = lambda lab: [x for (k, e) in keys if label(e) == lab for x in excess[(k, e)]]  # noqa: E731
        return ", ".join(f"`{lab}` ({span(excesses(lab), '{:.1f}')} µs)" for lab in entries)

    explained = []
    if by_cause["per launch"]:
        explained.append(
            f"{len(by_cause['per launch'])} are a fixed cost per launch, their excess over the template about"
            " the same µs at both sizes (so a larger share of the smaller problem):"
            f" {named(by_cause['per launch'])}"
        )
    if by_cause["waves"]:
        explained.append(
            f"{len(by_cause['waves'])} run other waves of blocks than the template's at one size or both"
            f" (the waves column): {', '.join(sorted({f'`{label(e)}`' for _, e in by_cause['waves']}))}"
        )
    if by_cause["not explained"]:
        explained.append(
            f"{len(by_cause['not explained'])} are explained by neither, nor by anything these figures hold:"
            f" {', '.join(sorted({f'`{label(e)}`' for _, e in by_cause['not explained']}))}"
        )
    doc.add(
        "The penalties move by at most "
        + ", ".join(f"{v:.1%} at k = {k}" for k, v in found["by_k"].items())
        + f" between the sizes; the noise is {noise:.1%}. "
        + (
            "Whether the size matters is not decided (too few repetitions for the test): "
            if undecided_run(bench)
            else "So the size matters: "
            if worst > noise
            else "So the size does not matter here: "
        )
        + f"the table of penalties above is at n = {pow2(n)}"
        + (
            ", where the output does not fit in the L2 (its last lines can still be written back after"
            " a kernel's time)."
            if 4 * n > l2
            else ", where the output's write-back falls outside the kernel's time."
        )
        + (
            f" Of the {len(causes)} that move beyond the noise, " + "; ".join(explained) + "."
            if causes and not undecided_run(bench)
            else ""
        )
        + "\n"
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
                + [mark(*compared[(op, k)][c]) if c in compared[(op, k)] else "–" for op, k in top.items()]
                for c in cols
            ],
        )
    )
    doc.detail(
        "The dispatch penalty at every k",
        table(
            ["op", "k"] + [f"`{label(c)}`" for c in cols],
            [
                [op, k] + [mark(*compared[(op, k)][c]) if c in ratios else "–" for c in cols]
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
        p = {c: compared[(op, k)][c] for c in penalty[(op, k)]}
        indirect = {c: v for c, v in p.items() if c.startswith(("04_", "05_"))}
        # A variant is its own figure, not folded into its strategy's range (06's `fast_compile`
        # trades run time for compile time).
        jit = {c: v for c, v in p.items() if c.startswith(("06_", "07_")) and "." not in label(c)}
        variants = {c: v for c, v in p.items() if c.startswith(("06_", "07_")) and "." in label(c)}
        text = f"- **{op}, k = {k}:** "
        if indirect:
            text += (
                f"function pointers and virtual calls take {marked_span(indirect.values())} the template's"
                f" time{why}"
            )
            why = ""
        if "03_switch/vec" in p:
            text += f"; the per-element switch {marked_span([p['03_switch/vec']])}"
        if "03_switch.hoisted/vec" in p:
            text += f", hoisted out of the loop {marked_span([p['03_switch.hoisted/vec']])}"
        if jit:
            text += f"; the run-time compiled strategies {marked_span(jit.values())}"
        if variants:
            text += (
                " ("
                + ", ".join(f"`{label(c)}` {marked_span([v])}" for c, v in sorted(variants.items()))
                + ")"
            )
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
