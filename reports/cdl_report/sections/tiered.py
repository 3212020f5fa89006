"""Strategy 10, tiered dispatch: streams of launches of a new op (cdl_bench's tiered/), each the
cheap way alone, the JIT alone (its compile, then its kernel) and the two tiered, timed whole: for
the catalogue's op (03's switch, 06) and for a user's op in 08's language (16's interpreter, 08, and
10's tiers; 17's patched kernel alone drawn beside them where the run has it)."""
from ..document import fmt_time, pow2, table
from ..results import label

MODES = ("03_switch", "06_nvrtc_jit", "10_tiered_dispatch")
EXPRESSION = ("16_interpreter", "08_expression_jit", "10_tiered_dispatch.expression")
PATCHED = "17_copy_and_patch"  # drawn beside the user's op's three: no compile either


def find(bench, noise):
    """{"streams": {(n, k): {launches: {mode: row}}}, "catalogue": family_find()'s of the catalogue's
    op, "expression": of a user's op (None where the run has not its three modes)}; {} without streams."""
    streams = {}  # (n, k) -> launches -> {mode: row}
    for fields, entries in bench.select("tiered"):
        key = (int(fields["n"]), int(fields["k"]))
        streams.setdefault(key, {})[int(fields["launches"])] = {label(e): r for e, r in entries.items()}
    if not streams:
        return {}
    has_expression = any(
        all(m in modes for m in EXPRESSION) for s in streams.values() for modes in s.values()
    )
    return {
        "streams": streams,
        "catalogue": family_find(streams, noise, MODES),
        "expression": family_find(streams, noise, EXPRESSION, PATCHED) if has_expression else None,
    }


def add(doc, found, noise):
    if not found:
        return
    streams = found["streams"]
    doc.add("## Tiered dispatch: a new op's stream of launches (strategy 10)\n")
    doc.add(
        "Each stream launches a new text of the quadratic op (new to every compile cache) L times: with the"
        " switch kernel alone (`03_switch`), with the JIT alone (`06_nvrtc_jit`: its compile, then its"
        " kernel), and tiered (`10_tiered_dispatch`: the switch kernel while the JIT compiles on a host"
        " thread, then the JIT's kernel). Host wall clock from the first launch to the end of the last,"
        " median of the repetitions; the stream is validated by one more launch of the kernel it ended on"
        " (the GPU tests validate every launch of the move).\n"
    )
    family(doc, found["catalogue"], noise, ("switch alone", "JIT alone", "tiered"), "switch", False)
    if found["catalogue"]:
        plot(doc, streams, MODES, "tiered_dispatch.png", "a new op")
    if found["expression"] is not None:
        # A run that has 17's stream alone is one whose tiers have 17's tier too (both came at once).
        patched = any(PATCHED in m for s in streams.values() for m in s.values())
        doc.add(
            "**A user's op.** The same streams for a text of 08's language that no cache has seen (the"
            " quadratic op under `min` with a number past every value it reaches, new in every stream):"
            " 16's interpreter alone (`16_interpreter`: no compile), 08's JIT alone (`08_expression_jit`:"
            " its compile, then its kernel), and the three tiers (`10_tiered_dispatch.expression`: the"
            + (
                " interpreter at once, then 17's patched kernel, or 08's baseline tier where 17 refuses the"
                " op, then 08's optimised tier, made on a host thread), and 17's patched kernel alone"
                " (`17_copy_and_patch`: patched and loaded at the first launch, no compiler) drawn beside"
                " them.\n"
                if patched
                else " interpreter at once, then 08's baseline tier, then its optimised tier, compiled on a"
                " host thread).\n"
            )
        )
        words = ("interpreter alone", "JIT alone", "three tiers")
        family(doc, found["expression"], noise, words, "interpreter", True)
        if found["expression"]:
            plot(doc, streams, EXPRESSION + (PATCHED,), "tiered_expression.png", "a user's new op")


def family_find(streams, noise, modes_of, rival=None):
    """{(n, k): one family's streams (cheap way, JIT alone, tiered; and `rival` alone, another way a
    tier runs, where the stream has it): "rows" [(launches, the three medians, tiered over the best
    alone, the launch tiered moved on or -1, the rival's median or None, (the first launch on 17's
    kernel or -1, when it was ready in ms or -1) or None)], "parts" (whether any row has the last),
    "break_even" (the first length the JIT alone beats the cheap way), "no_worse" and "better" (the
    lengths tiered is within the noise of the best alone, and beats them all), "worst" (length,
    ratio), "rival" (whether any stream has it), and "start" (the shortest stream's length, tiered
    minus the cheap way in µs, within the noise?)}."""
    cheap, jit, tiered = modes_of
    found = {}
    for (n, k), by_launches in sorted(streams.items()):
        rows, break_even = [], None
        for launches, modes in sorted(by_launches.items()):
            if not all(m in modes for m in modes_of):
                continue
            t = {m: modes[m]["median"] for m in modes_of}
            if break_even is None and t[jit] < t[cheap]:
                break_even = launches
            first_own = modes[tiered]["counters"].get("first_own_kernel_launch", -1)
            if first_own >= launches:  # the validating launch after the stream (files before the fix)
                first_own = -1
            other = modes[rival]["median"] if rival in modes else None
            best = min(x for x in (t[cheap], t[jit], other) if x is not None)
            # The tiers' parts (files from d0a6f24 on): their first launch on 17's kernel, and when
            # that kernel was ready, on the host clock from the text.
            counters = modes[tiered]["counters"]
            patched = (
                (counters["first_patched_launch"], counters["patched_ready_ms"])
                if "patched_ready_ms" in counters
                else None
            )
            rows.append((launches, t[cheap], t[jit], t[tiered], t[tiered] / best, first_own, other, patched))
        if not rows:
            continue
        shortest = min(L for L, m in by_launches.items() if all(x in m for x in modes_of))
        start_us = by_launches[shortest][tiered]["median"] - by_launches[shortest][cheap]["median"]
        found[(n, k)] = {
            "rows": rows,
            "break_even": break_even,
            "tiered_over_best": {r[0]: r[4] for r in rows},
            "no_worse": [r[0] for r in rows if r[4] <= 1 + noise],
            "better": [r[0] for r in rows if r[4] < 1 - noise],
            "worst": max(((r[0], r[4]) for r in rows), key=lambda p: p[1]),
            "rival": any(r[6] is not None for r in rows),
            "parts": any(r[7] is not None for r in rows),
            "start": (shortest, start_us, abs(start_us) <= noise * by_launches[shortest][cheap]["median"]),
        }
    return found


def family(doc, found, noise, words, cheap_word, plural):
    """The table and the findings of one family of streams (family_find()'s): the first size's in the
    report, the others' on the details page, each with a line here."""
    for i, ((n, k), f) in enumerate(found.items()):
        # With a rival alone (17's patched kernel beside a user's op's tiers): the best of three.
        rival = f["rival"]
        best, all_of = ("the best", "all three") if rival else ("the better", "both")
        never = "never (the stream ended first)"
        rows = [
            [launches, fmt_time(cheap), fmt_time(jit)]
            + ([fmt_time(other) if other is not None else "–"] if rival else [])
            + [
                fmt_time(tiered),
                f"{over:.2f}",
                never if first_own < 0 else f"launch {int(first_own) + 1}",
            ]
            + (
                [
                    "–"
                    if patched is None
                    else (never if patched[0] < 0 else f"launch {int(patched[0]) + 1}")
                    + (f" (ready at {patched[1]:.2f} ms)" if patched[1] >= 0 else "")
                ]
                if f["parts"]
                else []
            )
            for launches, cheap, jit, tiered, over, first_own, other, patched in f["rows"]
        ]
        header = ["launches", *words[:2], *(["17 alone"] if rival else []), words[2]]
        header += [f"{words[2]} / {best} alone", "its own kernel from"]
        parts = [table(header + (["17's kernel from"] if f["parts"] else []), rows)]
        shortest, start_us, same = f["start"]
        worst = f["worst"]
        whom, verb = ("the three tiers", "take") if plural else ("tiered", "takes")
        if same:
            start = f"the same as the {cheap_word} alone (within the noise)"
        else:
            start = f"{abs(start_us):.0f} µs {'more' if start_us > 0 else 'less'} than the {cheap_word} alone"
        verdict = (
            f"the JIT alone beats the {cheap_word} alone from {f['break_even']} launches on"
            if f["break_even"]
            else f"the JIT alone never beats the {cheap_word} alone in these streams"
        )
        parts.append(
            verdict[0].upper()
            + verdict[1:]
            + f". {whom.capitalize()} {verb} no more than {best} of the {'three' if rival else 'two'} alone"
            f" (within the noise, {noise:.1%}) at "
            + (", ".join(str(L) for L in f["no_worse"]) or "no length")
            + f" launches, less than {all_of} at "
            + (", ".join(str(L) for L in f["better"]) or "none")
            + f"; at most {worst[1]:.2f}× {best} ({worst[0]} launch{'es' if worst[0] != 1 else ''}). "
            + f"A stream of {shortest} launch{'es' if shortest != 1 else ''} costs {whom} {start}"
            + ("." if same else ", not timed part by part in this run.")
            + "\n"
        )
        size = f"n = {pow2(n)}, k = {k}"
        if i == 0:
            doc.add(f"**{size}**\n")
            for part in parts:
                doc.add(part)
        else:
            doc.detail(
                f"The {cheap_word} alone, the JIT alone and {whom} at {size}",
                "\n".join(parts),
                f"At {size}, {verdict}; {whom} at most {worst[1]:.2f}× {best} alone",
            )


def plot(doc, streams, modes_of, name, what):
    keys = sorted(streams)
    fig, axes = doc.plt.subplots(1, len(keys), figsize=(6 * len(keys), 4.5), squeeze=False)
    for ax, (n, k) in zip(axes[0], keys):
        by_launches = streams[(n, k)]
        for mode in modes_of:
            pts = sorted((L, m[mode]["median"] / 1000) for L, m in by_launches.items() if mode in m)
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=mode)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"n = {pow2(n)}, k = {k}")
        ax.set_xlabel(f"launches of {what}")
        ax.set_ylabel("total ms")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    doc.figure(name, fig, f"Total time of a stream of launches of {what} against its length")
