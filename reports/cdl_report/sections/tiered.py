"""Strategy 10, tiered dispatch: streams of launches of a new op (cdl_bench's tiered/), each the
cheap way alone, the JIT alone (its compile, then its kernel) and the two tiered, timed whole: for
the catalogue's op (03's switch, 06) and for a user's op in 08's language (16's interpreter, 08, and
10's tiers; 17's patched kernel alone drawn beside them where the run has it)."""
from ..document import fmt_time, pow2, table
from ..results import label
from ..stats import compare, mark

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


def less(row_a, row_b, noise):
    """Whether stream b takes less than stream a by the report's test (stats.compare: beyond the noise
    and told apart by the U test on their repetitions): True, False, or None where not decided."""
    ratio, _, finding = compare(row_a, row_b, noise)
    return None if finding is None else finding and ratio < 1


def family_find(streams, noise, modes_of, rival=None):
    """{(n, k): one family's streams (cheap way, JIT alone, tiered; and `rival` alone, another way a
    tier runs, where the stream has it): "rows" [(launches, the three medians, tiered over the best
    alone, the launch tiered moved on or -1, the rival's median or None, (the first launch on 17's
    kernel or -1, when it was ready in ms or -1) or None, that ratio's finding)], "parts" (whether any
    row has the second last), "break_even" (the first length the JIT alone beats the cheap way, by the
    test), "no_worse" and "better" (the lengths tiered is no dearer than the best alone, and beats
    every one of them, by the test), "undecided" (the lengths where the test could not decide either),
    "worst" (length, ratio, finding), "rival" (whether any stream has it), and "start" (the shortest
    stream's length, tiered minus the cheap way in µs, that difference's finding)}. Every comparison
    is the kernels' test (stats.compare) on the streams' repetitions: a stream is host wall clock,
    compiles inside, and no ratio of two of them is a finding that the test does not make one."""
    cheap, jit, tiered = modes_of
    found = {}
    for (n, k), by_launches in sorted(streams.items()):
        rows, break_even, no_worse, better, undecided, open_even = [], None, [], [], [], []
        for launches, modes in sorted(by_launches.items()):
            if not all(m in modes for m in modes_of):
                continue
            t = {m: modes[m]["median"] for m in modes_of}
            jit_less = less(modes[cheap], modes[jit], noise)
            if break_even is None and jit_less:
                break_even = launches
            if break_even is None and jit_less is None:
                open_even.append(launches)
            first_own = modes[tiered]["counters"].get("first_own_kernel_launch", -1)
            if first_own >= launches:  # the validating launch after the stream (files before the fix)
                first_own = -1
            other = modes[rival]["median"] if rival in modes else None
            alone = [modes[m] for m in (cheap, jit, rival) if m in modes]
            best = min(alone, key=lambda row: row["median"])
            ratio, _, finding = compare(best, modes[tiered], noise)
            beats = [less(row, modes[tiered], noise) for row in alone]
            dearer = finding and ratio > 1
            if finding is None or (not dearer and None in beats):
                undecided.append(launches)
            elif not dearer:
                no_worse.append(launches)
                if all(beats):
                    better.append(launches)
            # The tiers' parts (files from d0a6f24 on): their first launch on 17's kernel, and when
            # that kernel was ready, on the host clock from the text.
            counters = modes[tiered]["counters"]
            patched = (
                (counters["first_patched_launch"], counters["patched_ready_ms"])
                if "patched_ready_ms" in counters
                else None
            )
            rows.append((launches, t[cheap], t[jit], t[tiered], ratio, first_own, other, patched, finding))
        if not rows:
            continue
        shortest = min(L for L, m in by_launches.items() if all(x in m for x in modes_of))
        first = by_launches[shortest]
        start_us = first[tiered]["median"] - first[cheap]["median"]
        found[(n, k)] = {
            "rows": rows,
            "break_even": break_even,
            "break_even_undecided": open_even,
            "tiered_over_best": {r[0]: r[4] for r in rows},
            "no_worse": no_worse,
            "better": better,
            "undecided": undecided,
            "worst": max(((r[0], r[4], r[8]) for r in rows), key=lambda p: p[1]),
            "rival": any(r[6] is not None for r in rows),
            "parts": any(r[7] is not None for r in rows),
            "start": (shortest, start_us, compare(first[cheap], first[tiered], noise)[2]),
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
                mark(over, finding),
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
            for launches, cheap, jit, tiered, over, first_own, other, patched, finding in f["rows"]
        ]
        header = ["launches", *words[:2], *(["17 alone"] if rival else []), words[2]]
        header += [f"{words[2]} / {best} alone", "its own kernel from"]
        parts = [table(header + (["17's kernel from"] if f["parts"] else []), rows)]
        shortest, start_us, differs = f["start"]
        worst = f["worst"]
        whom, verb = ("the three tiers", "take") if plural else ("tiered", "takes")
        if differs is None:
            start = (
                f"{abs(start_us):.0f} µs {'more' if start_us > 0 else 'less'} than the {cheap_word} alone,"
            )
            start += " not decided (too few repetitions for the test)"
        elif not differs:
            start = f"the same as the {cheap_word} alone (no difference by the test)"
        else:
            start = f"{abs(start_us):.0f} µs {'more' if start_us > 0 else 'less'} than the {cheap_word} alone"
            start += ", not timed part by part in this run"
        lengths = lambda ls: ", ".join(str(L) for L in ls)  # noqa: E731
        open_even = f["break_even_undecided"]
        verdict = (
            f"the JIT alone beats the {cheap_word} alone from {f['break_even']} launches on"
            + (f" (not decided at {lengths(open_even)})" if open_even else "")
            if f["break_even"]
            else f"whether the JIT alone beats the {cheap_word} alone is not decided at {lengths(open_even)}"
            " launches (too few repetitions for the test)"
            # the other lengths, where there are any, are decided: it does not beat it there
            + (", and it does at no other" if len(open_even) < len(f["rows"]) else "")
            if open_even
            else f"the JIT alone beats the {cheap_word} alone in none of these streams"
        )
        everything = len(f["undecided"]) == len(f["rows"])
        against = (
            f"Against {best} alone, {whom} {'are' if plural else 'is'} not decided at any length (too few"
            " repetitions for the test)"
            if everything
            else f"{whom.capitalize()} {verb} no more than {best} of the {'three' if rival else 'two'} alone"
            f" (no difference beyond the noise, {noise:.1%}, or less, by the test) at "
            + (lengths(f["no_worse"]) or "no length")
            + f" launches, less than {all_of} at "
            + (lengths(f["better"]) or "none")
            + (f"; not decided at {lengths(f['undecided'])}" if f["undecided"] else "")
        )
        parts.append(
            verdict[0].upper()
            + verdict[1:]
            + f". {against}; at most {mark(worst[1], worst[2], unit='×')} {best} ({worst[0]}"
            f" launch{'es' if worst[0] != 1 else ''}). "
            + f"A stream of {shortest} launch{'es' if shortest != 1 else ''} costs {whom} {start}.\n"
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
                f"At {size}, {verdict}; {whom} at most {mark(worst[1], worst[2], unit='×')} {best} alone",
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
