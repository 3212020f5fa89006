"""The report's first screen: which way to hand a function to a kernel, and what each way costs on
this device, computed from the run like everything below it.

  - one line: the device, its copy bandwidth, the run's noise;
  - a headline: the ways that run at the template's speed, the dearest way and by how much, and
    what an op written at run time costs once;
  - the decision table: for each situation a reader can be in (the op known when the program is
    built, chosen at run time once per launch, chosen per element, written by a user at run time,
    shipped precompiled), the way that costs least at run time among those that serve it, its time
    over the template's at k = 1 and at the sweep's largest k for its worst op, its one-time cost
    for a new op and a cached one, and the section that shows it;
  - one figure: time over the template's against k, a line per situation's way and the dearest;
  - the run's three largest surprises, each found by a rule, with a link.
"""
import re

from .. import plots
from ..document import anchor, fmt_time, pow2, table
from ..queries import TEMPLATE
from ..results import label
from ..stats import LEGEND, UNDECIDED, mark, span, undecided_run
from . import dispatch, jit, jit_stages, launches, python_peers, surprises, tasks
from . import map as map_section

# Each situation, the ways that serve it (strategy[.variant], the map's vec form measured), in the
# order a tie goes. Per element: the map's sweep calls the op the same way for every element, so
# these figures are the call's cost; what different ops in one warp add is the tasks section's.
SITUATIONS = [
    ("known when the program is built", ("01_template_functor", "02_device_lambda", "00_inline")),
    (
        "chosen at run time from ops built in, once per launch",
        (
            "03_switch.hoisted",
            "14_graph_switch",
            "15_device_launch",
            "04_function_pointer.symbol",
            "05_virtual",
        ),
    ),
    (
        "chosen per element, from ops built in",
        ("03_switch", "04_function_pointer.table", "05_virtual"),
    ),
    (
        "written by a user at run time",
        ("08_expression_jit", "07_jit_lto", "06_nvrtc_jit", "08_expression_jit.baseline"),
    ),
    ("written by a user at run time, its first result at once (no compiler)", ("16_interpreter",)),
    (
        "written by a user at run time, native code within a millisecond (no compiler)",
        ("17_copy_and_patch",),
    ),
    ("shipped precompiled, loaded or linked later", ("13_precompiled_plugin", "13_precompiled_plugin.lto")),
]
# What each way is, in a few words.
WHAT = {
    "00_inline": "the op written into the kernel",
    "01_template_functor": "a functor as a template parameter",
    "02_device_lambda": "a device lambda as a template parameter",
    "03_switch": "a switch on an op id at every call",
    "03_switch.hoisted": "a switch on an op id, hoisted out of the loop",
    "04_function_pointer.symbol": "a device function pointer",
    "04_function_pointer.table": "a device table of function pointers",
    "05_virtual": "a virtual call",
    "06_nvrtc_jit": "the op's C++ compiled with the kernel by NVRTC",
    "07_jit_lto": "the op's C++ compiled alone and linked into the kernel (nvJitLink LTO)",
    "08_expression_jit": "the op in an expression language, lowered to NVVM IR by the program",
    "08_expression_jit.baseline": "08 without libNVVM's optimiser",
    "12_variant_visit": "a cuda::std::variant and visit",
    "13_precompiled_plugin": "the op's kernels built ahead of time into a file, loaded",
    "13_precompiled_plugin.lto": "the op built ahead of time as LTO-IR, linked at run time",
    "14_graph_switch": "a CUDA graph's switch node",
    "15_device_launch": "the op's kernel launched from a kernel",
    "16_interpreter": "the op in 08's language as data, run by a precompiled interpreter kernel",
    "17_copy_and_patch": "the op in 08's language written into machine code compiled ahead of time",
}
# The ways that refuse some ops of the catalogue: the sweep has no row for those.
REFUSES = ("17_copy_and_patch",)


def ratios(compared):
    """{label: {k: {op: (time / the template's, finding?)}}} of the dispatch section's vec ratios
    ({(op, k): {entry: (ratio, finding?)}}), the template's own among them (1, no difference)."""
    out = {}
    for (op, k), row in compared.items():
        out.setdefault(TEMPLATE, {}).setdefault(k, {})[op] = (1.0, False)
        for e, value in row.items():
            out.setdefault(label(e), {}).setdefault(k, {})[op] = value
    return out


def worst(by_k, k):
    """(op, (ratio, finding)) of the op a way costs most at k."""
    return max(by_k.get(k, {}).items(), key=lambda kv: kv[1][0], default=(None, (None, False)))


def times(op, value):
    """'1.38× exp_sin_cos'; in parentheses where it is no difference (the noise, or the U test)."""
    ratio, finding = value
    if ratio is None:
        return "–"
    return f"{mark(ratio, finding, unit='×')} {op}"


def choose(candidates, r, top, new_op_ms, noise, spreads=None):
    """[the way that costs least at run time (its worst op at the largest k)]; among the run-time
    compiled ways that run at the template's speed, the one whose new op is cheapest, and beside it
    every other whose new op's p10–p90 range (spreads: jit_stages.interleaved's, by way) overlaps its own:
    those are no cheaper or dearer than it, and the reader may take either."""
    measured = [c for c in candidates if top in r.get(c, {})]
    if not measured:
        return []
    if all(c in jit_stages.NEW_OP for c in measured):
        fast = [
            c
            for c in measured
            if all(at_speed(worst(r[c], k)[1]) for k in {1, top} if k in r[c])
            and new_op_ms.get(c) is not None
        ]
        if fast:
            best = min(fast, key=lambda c: new_op_ms[c])
            s = spreads or {}
            return [best] + [
                c for c in fast if c != best and best in s and c in s and jit_stages.overlap(s[best], s[c])
            ]
    return [first_within_noise(measured, [worst(r[c], top)[1][0] for c in measured], noise)]


def first_within_noise(ways, costs, noise):
    """The first of `ways` (in the situation's order) whose cost is within the noise of the least: two
    ways whose ratios differ by less than the noise are a tie, which the order breaks, not the digits."""
    least = min(costs)
    return next(w for w, c in zip(ways, costs) if c <= least * (1 + noise))


def at_speed(value):
    """Whether (ratio, finding) is the template's speed: no difference beyond the noise, or faster by a
    finding; a ratio not decided is not."""
    ratio, finding = value
    return finding is False or (finding is True and ratio < 1)


def interpreter_spills(resources):
    """(the float interpreter kernels that spill, how many there are, their largest spill stores in
    bytes) from resources.json, or None where it has none of them: what the first screen says beside
    the interpreter's ratio, whose time includes that local memory's traffic where a kernel spills."""
    kernels = [
        k
        for k in (resources or {}).get("kernels", [])
        if k.get("source", "").endswith(("16_interpreter.cu", "interpreter_f32.cu"))
        and re.search(r"<float,|_f32_", k.get("name", ""))
    ]
    if not kernels:
        return None
    spilling = [k for k in kernels if k.get("spill_stores")]
    return len(spilling), len(kernels), max((k["spill_stores"] for k in spilling), default=0)


def python_once(py, left_out):
    """The Python row's one-time cost: a new op's compile in a warm process, then a new process's
    first; where a quick run left the experiments that time them to a full run, it says so."""
    if py["new_ms"] is None:
        return "left to a full run" if left_out else "–"
    fresh = f"; a new process's first {py['fresh_ms']:.0f} ms" if py["fresh_ms"] is not None else ""
    return f"{py['new_ms']:.1f} ms a new op" + fresh


def find(bench, noise, found, resources=None):
    """The first screen's figures, read from what the sections below it found (`found`): the sweep's
    ratios (dispatch), each route's new-op cost and spread (run-time compilation), the way each
    situation takes (several where their new ops' costs overlap), the Python row (the peers), the
    dearest way, the situations served at the template's speed, the tasks' note, the launches' table
    and the run's surprises; {} without a dispatch sweep."""
    if not found["dispatch"]:
        return {}
    n = found["dispatch"]["n"]
    r = ratios(found["dispatch"]["compared"])
    top = max(k for ks in r.values() for k in ks)
    # Each way's new op: the interleaved median where the run has it, else its stages summed; None
    # where one of them was not run. The spreads are the interleaved benchmark's.
    compiles = found["jit"]
    costs = compiles.get("new_op", {})
    new_op_ms = {way: costs[way][1] if way in costs else None for way in jit_stages.NEW_OP}
    spreads = {jit_stages.ROUTES[route]: v for route, v in compiles.get("interleaved", {}).items()}
    # A new process's first result through each way (its first use in the process among it), in ms.
    fresh = {jit_stages.ROUTES[route]: v[0] for route, v in compiles.get("first_in_process", {}).items()}
    headings = {
        "dispatch": dispatch.heading(n),
        "map": map_section.heading(bench),
        "tasks": tasks.HEADING,
        "jit": jit.HEADING,
    }
    ways = {}
    for situation, candidates in SITUATIONS:
        chosen_ways = choose(candidates, r, top, new_op_ms, noise, spreads)
        if chosen_ways:
            ways[situation] = chosen_ways
    chosen = {situation: w[0] for situation, w in ways.items()}
    # From Python: the system whose own function runs fastest at this sweep's largest k.
    own, own_top = found["python"]["own"]
    steady = {sy: v for sy, v in own.items() if v["top"] and own_top == top}
    py = min(steady.items(), key=lambda kv: kv[1]["top"][0]) if steady else None
    # The dearest way measured, over every way the situations name.
    every = {c for _, cs in SITUATIONS for c in cs if top in r.get(c, {})}
    ranked = sorted(((ratio, c, op) for c in every for op, (ratio, _) in [worst(r[c], top)]), reverse=True)
    # Every way within the noise of the dearest is as dear: the headline names them all.
    dearest = [w for w in ranked if w[0] * (1 + noise) >= ranked[0][0]]
    # At the template's speed at every k the table shows (k = 1 and the largest): no difference beyond
    # the noise or faster, by the test (an undecided ratio is not claimed).
    shown = sorted({1, top})
    free = [s for s, w in chosen.items() if all(at_speed(v) for k in shown for v in r[w].get(k, {}).values())]
    random = [(f, es) for f, es in found["tasks"].get("runs", ()) if f["layout"] == "random"]
    spread = max((int(f["distinct"]) for f, _ in random), default=None)
    at_spread = {
        e: row["median"] for f, es in random if int(f["distinct"]) == spread for e, row in es.items()
    }
    return {
        "n": n,
        "r": r,
        "top": top,
        "new_op_ms": new_op_ms,
        "fresh_ms": fresh,
        "spreads": spreads,
        "cached": [compiles.get("costs", {}).get(c) for c in ("memory hit", "disk hit")],
        "headings": headings,
        "ways": ways,
        "chosen": chosen,
        "python": py,
        "python_compiles_left_out": found["python"]["left_out"],
        "dearest": dearest,
        "free": free,
        "jit_way": chosen.get(SITUATIONS[3][0]),
        "tasks": (
            spread,
            at_spread.get("03_switch/per_element"),
            {e: t for e, t in at_spread.items() if e in tasks.PER_LAUNCH},
        ),
        "launches": launches.find(bench),
        "interpreter_spills": interpreter_spills(resources),
        "surprises": surprises.find(bench, r, noise, headings, found, resources, n),
    }


def spills_said(spills):
    """' (of its N float kernels, S spill registers to local memory, up to B bytes)', from
    interpreter_spills(); '' where none spills or resources.json is absent."""
    if not spills or not spills[0]:
        return ""
    spilling, total, most = spills
    return (
        f" ({spilling} of its {total} float kernels spill registers to local memory, up to {most} B a"
        " thread: resources.json)"
    )


def add(doc, bench, noise, found):
    """The first screen, rendered from find()'s figures; returns its answer's text (the README's), or
    None where the run has no sweep."""
    dev = bench.env.get("device", {})
    doc.add(
        f"**{dev.get('name', '?')}** · copy bandwidth {bench.copy_gbs:.0f} GB/s · noise {noise:.1%} · "
        f"suite `{bench.context.get('cdl_mode', '?')}`, revision `{bench.context.get('git_revision', '?')}` "
        f"([how it was measured]({anchor('How it was measured')}), near the end)"
        + (
            f" · **not decided**: {undecided_run(bench)} repetitions a benchmark are too few to tell a"
            " difference from the noise's, so a ratio beyond the noise carries a ?"
            if undecided_run(bench)
            else ""
        )
        + "\n"
    )
    if not found:
        doc.add("This run has no dispatch sweep (`map` at k > 1): no answer can be computed from it.\n")
        return None
    n, r, top, new_op_ms, spreads, cached, headings = (
        found[k] for k in ("n", "r", "top", "new_op_ms", "spreads", "cached", "headings")
    )
    chosen = found["chosen"]
    rows = []
    for situation, ways in found["ways"].items():
        way = ways[0]
        op1, at1 = worst(r[way], 1)
        opk, atk = worst(r[way], top)
        if way in ("16_interpreter", "17_copy_and_patch"):
            once = (
                f"{new_op_ms[way]:.2f} ms from a new op's text to a 2^20 map's result"
                if new_op_ms.get(way) is not None
                else "–"
            )
            where = f"[the dispatch penalty]({anchor(headings['dispatch'])})"
        elif way in jit_stages.NEW_OP:
            once = (
                (
                    "; ".join(f"`{w}` {jit_stages.spread(spreads[w])}" for w in ways) + " a new op"
                    if all(w in spreads for w in ways)
                    else f"{new_op_ms[way]:.1f} ms a new op"
                )
                + "; cached "
                + (
                    f"{fmt_time(1000 * cached[0])} (memory), {fmt_time(1000 * cached[1])} (disk)"
                    if None not in cached
                    else "–"
                )
                if new_op_ms.get(way) is not None
                else "–"
            )
            where = f"[run-time compilation]({anchor(headings['jit'])})"
        elif way.startswith("13_"):
            once = "the file's load (not timed in this run)"
            where = f"[the dispatch penalty]({anchor(headings['dispatch'])})"
        else:
            once = "none: built with the program"
            where = f"[the dispatch penalty]({anchor(headings['dispatch'])})"
        fresh = {w: found["fresh_ms"][w] for w in ways if w in found["fresh_ms"]}
        if once != "–" and fresh:  # the first op of a process pays the way's first use too
            once += "; a new process's first " + (
                ", ".join(f"`{w}` {ms:.1f} ms" for w, ms in fresh.items())
                if len(ways) > 1
                else f"{fresh[way]:.1f} ms"
            )
        either = (
            " or ".join(f"`{w}`" for w in ways) + ": their new ops' costs overlap within their spreads"
            if len(ways) > 1
            else ""
        )
        # The ops the template ran that a way refuses (17 runs only what its stencils hold).
        lacks = (
            sorted(set(r.get(TEMPLATE, {}).get(top, {})) - set(r[way].get(top, {}))) if way in REFUSES else []
        )
        rows.append(
            [
                situation,
                (either or f"`{way}`: {WHAT.get(way, '')}")
                + (f" (not {', '.join(lacks)}: it refuses them)" if lacks else ""),
                times(op1, at1),
                times(opk, atk),
                once,
                where,
            ]
        )
    if found["python"]:
        sy, py = found["python"]
        rows.append(
            [
                "your own elementwise function, from Python",
                f"{python_peers.NAMES.get(sy, sy)}: `{py['way']}`",
                f"{mark(py['k1'][0], py['k1'][3], unit='×')} quadratic" if py["k1"] else "–",
                f"{mark(py['top'][0], py['top'][2], unit='×')} {py['top'][1]}",
                python_once(py, found["python_compiles_left_out"]),
                f"[from Python]({anchor(python_peers.OWN_HEADING)})",
            ]
        )

    def first_of_process(way):
        ms = found["fresh_ms"].get(way)
        return f" ({ms:.1f} ms as the first op of a new process)" if ms is not None else ""

    dearest = found["dearest"]
    dear_ratio, dear, dear_op = dearest[0]
    named = [f"{WHAT.get(w, w)} (`{w}`)" for _, w, _ in dearest]
    ops = sorted({op for *_, op in dearest})
    free, jit_way = found["free"], found["jit_way"]
    # the dearest's ratios carry the ? of a ratio the test leaves undecided, as the table's do
    undecided = UNDECIDED if any(r[w][top][op][1] is None for _, w, op in dearest) else ""
    headline = (
        "**The answer.** "
        + (
            f"Where the op is {', '.join(free[:-1]) + (', or ' if len(free) > 1 else '') + free[-1]}, a way "
            "runs at the template's speed (within the noise, or faster). "
            if free
            else ""
        )
        + (
            f"The dearest way measured, {named[0]}, takes {dear_ratio:.2f}×{undecided} the template's time"
            if len(dearest) == 1
            else f"The dearest ways measured, {', '.join(named[:-1])} and {named[-1]}, take"
            f" {span([dearest[-1][0], dear_ratio], '{:.2f}')}×{undecided} the template's time, no difference"
            " between them beyond the noise"
        )
        + f" ({', '.join(ops)}, k = {top}, n = {pow2(n)} float32)."
        + (
            f" An op written at run time costs {new_op_ms[jit_way]:.1f} ms once (`{jit_way}`'s compile and"
            f" load), then runs at {mark(*worst(r[jit_way], top)[1], unit='×')} the template's time."
            if jit_way and new_op_ms.get(jit_way) is not None
            else ""
        )
        + (
            f" With no compiler, `16_interpreter` gives a new op's first result in"
            f" {new_op_ms['16_interpreter']:.2f} ms{first_of_process('16_interpreter')} and runs at"
            f" {mark(*worst(r['16_interpreter'], top)[1], unit='×')} the template's time"
            + spills_said(found["interpreter_spills"])
            + "."
            if "16_interpreter" in chosen.values() and new_op_ms.get("16_interpreter") is not None
            else ""
        )
        + (
            f" For the ops its stencils hold, `17_copy_and_patch` writes a new op's machine code with no"
            f" compiler, its first result in {new_op_ms['17_copy_and_patch']:.2f} ms"
            f"{first_of_process('17_copy_and_patch')}, and runs at"
            f" {mark(*worst(r['17_copy_and_patch'], top)[1], unit='×')} the template's time"
            f" ({worst(r['17_copy_and_patch'], top)[0]})."
            if "17_copy_and_patch" in chosen.values() and new_op_ms.get("17_copy_and_patch") is not None
            else ""
        )
        + "\n"
    )
    decision = table(
        [
            "the op is …",
            "use",
            "× template, k = 1 (worst op)",
            f"× template, k = {top} (worst op)",
            "one-time cost",
            "shown in",
        ],
        rows,
    )
    spread, switch, grouped = found["tasks"]
    note = (
        "Each way's time over the template functor's (01) on the same problem, for the op it costs most; "
        + LEGEND
        + ". Per element: the sweep calls the same op for every element, so these are the call's cost;"
        f" different ops in one warp add [divergence]({anchor(headings['tasks'])})"
        + (
            f": with {spread} ops at random, a switch per element took {fmt_time(switch)} where sorting by op"
            " first and running each op's template kernel took"
            f" {fmt_time(min(grouped.values()))} (`{min(grouped, key=grouped.get)}`)"
            if switch and grouped
            else ""
        )
        + ".\n"
    )
    doc.add(headline)
    doc.add(decision)
    doc.add(note)
    launches.add(doc, found["launches"])
    lines = {
        w: sorted((k, v[dear_op][0]) for k, v in r[w].items() if dear_op in v)
        for w in sorted(set(chosen.values()) | {dear})
    }
    plots.answer(
        doc,
        {w: pts for w, pts in lines.items() if pts},
        noise,
        (
            f"Time over the template's against k, {dear_op}, n = {pow2(n)} float32, vec forms: each"
            " situation's way and the dearest, each named at its end; those within the noise of the"
            " template's time at every k named together on its line"
        ),
    )
    surprising = found["surprises"]
    if surprising["found"]:
        doc.add("**The run's largest surprises** (each found by a rule over the figures):\n")
        doc.add("\n".join(f"{i}. {text}" for i, (_, text) in enumerate(surprising["found"][:3], 1)) + "\n")
    elif surprising["undecided"]:
        doc.add(
            "**The run's largest surprises: not decided.** The rules that find them met"
            f" {surprising['undecided']} ratios beyond the noise, and the repetitions are too few for the"
            " test to tell any of them from the noise.\n"
        )
    return "\n".join([headline, decision, note])
