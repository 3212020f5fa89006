"""Strategy 10, tiered dispatch: streams of launches of a new op (cdl_bench's tiered/), each the
cheap way alone, the JIT alone (its compile, then its kernel) and the two tiered, timed whole: for
the catalogue's op (03's switch, 06) and for a user's op in 08's language (16's interpreter, 08, and
the three tiers)."""
from ..document import fmt_time, pow2, table
from ..results import label

MODES = ("03_switch", "06_nvrtc_jit", "10_tiered_dispatch")
EXPRESSION = ("16_interpreter", "08_expression_jit", "10_tiered_dispatch.expression")


def add(doc, bench, noise):
    streams = {}  # (n, k) -> launches -> {mode: row}
    for fields, entries in bench.select("tiered"):
        key = (int(fields["n"]), int(fields["k"]))
        streams.setdefault(key, {})[int(fields["launches"])] = {label(e): r for e, r in entries.items()}
    if not streams:
        return {}
    doc.add("## Tiered dispatch: a new op's stream of launches (strategy 10)\n")
    doc.add(
        "Each stream launches a new text of the quadratic op (new to every compile cache) L times: with the"
        " switch kernel alone (`03_switch`), with the JIT alone (`06_nvrtc_jit`: its compile, then its"
        " kernel), and tiered (`10_tiered_dispatch`: the switch kernel while the JIT compiles on a host"
        " thread, then the JIT's kernel). Host wall clock from the first launch to the end of the last,"
        " median of the repetitions; the stream is validated by one more launch of the kernel it ended on"
        " (the GPU tests validate every launch of the move).\n"
    )
    found = family(doc, streams, noise, MODES, ("switch alone", "JIT alone", "tiered"), "switch")
    if found:
        plot(doc, streams, MODES, "tiered_dispatch.png", "a new op")
    if any(all(m in modes for m in EXPRESSION) for s in streams.values() for modes in s.values()):
        doc.add(
            "**A user's op.** The same streams for a text of 08's language that no cache has seen (the"
            " quadratic op under `min` with a number past every value it reaches, new in every stream):"
            " 16's interpreter alone (`16_interpreter`: no compile), 08's JIT alone (`08_expression_jit`:"
            " its compile, then its kernel), and the three tiers (`10_tiered_dispatch.expression`: the"
            " interpreter at once, then 08's baseline tier, then its optimised tier, compiled on a host"
            " thread).\n"
        )
        words = ("interpreter alone", "JIT alone", "three tiers")
        expression = family(doc, streams, noise, EXPRESSION, words, "interpreter")
        if expression:
            plot(doc, streams, EXPRESSION, "tiered_expression.png", "a user's new op")
        found.update({("expression",) + key: v for key, v in expression.items()})
    return found


def family(doc, streams, noise, modes_of, words, cheap_word):
    """The table and the findings of one family of streams: (cheap way, JIT alone, tiered)."""
    cheap, jit, tiered = modes_of
    found = {}
    for (n, k), by_launches in sorted(streams.items()):
        rows, break_even, tiered_best = [], None, []
        for launches, modes in sorted(by_launches.items()):
            if not all(m in modes for m in modes_of):
                continue
            t = {m: modes[m]["median"] for m in modes_of}
            best = min(t[cheap], t[jit])
            first_own = modes[tiered]["counters"].get("first_own_kernel_launch", -1)
            if break_even is None and t[jit] < t[cheap]:
                break_even = launches
            tiered_best.append((launches, t[tiered] / best))
            rows.append(
                [
                    launches,
                    fmt_time(t[cheap]),
                    fmt_time(t[jit]),
                    fmt_time(t[tiered]),
                    f"{t[tiered] / best:.2f}",
                    "never (the stream ended first)" if first_own < 0 else f"launch {int(first_own) + 1}",
                ]
            )
        if not rows:
            continue
        doc.add(f"**n = {pow2(n)}, k = {k}**\n")
        doc.add(table(["launches", *words, f"{words[2]} / the better alone", "its own kernel from"], rows))
        no_worse = [str(L) for L, r in tiered_best if r <= 1 + noise]
        better = [str(L) for L, r in tiered_best if r < 1 - noise]
        worst = max(tiered_best, key=lambda p: p[1])
        shortest = min(L for L, m in by_launches.items() if all(x in m for x in modes_of))
        start_us = by_launches[shortest][tiered]["median"] - by_launches[shortest][cheap]["median"]
        plural = tiered != MODES[2]
        whom, verb, adds = (
            ("the three tiers", "take", "they add") if plural else ("tiered", "takes", "it adds")
        )
        if abs(start_us) <= noise * by_launches[shortest][cheap]["median"]:
            start = f"the same as the {cheap_word} alone (within the noise)"
        else:
            start = f"{abs(start_us):.0f} µs {'more' if start_us > 0 else 'less'} than the {cheap_word} alone"
        doc.add(
            (
                f"The JIT alone beats the {cheap_word} alone from {break_even} launches on"
                if break_even
                else f"The JIT alone never beats the {cheap_word} alone in these streams"
            )
            + f". {whom.capitalize()} {verb} no more than the better of the two"
            f" (within the noise, {noise:.1%}) at "
            + (", ".join(no_worse) or "no length")
            + " launches, less than both at "
            + (", ".join(better) or "none")
            + f"; at most {worst[1]:.2f}× the better ({worst[0]} launch{'es' if worst[0] != 1 else ''}). "
            + f"A stream of {shortest} launch{'es' if shortest != 1 else ''} costs {whom} {start}"
            + (
                "."
                if abs(start_us) <= noise * by_launches[shortest][cheap]["median"]
                else f": what {adds} before the move (starting the compile on a host thread among it) is not"
                " timed part by part here, so this run does not say what the difference is made of."
            )
            + "\n"
        )
        found[(n, k)] = {"break_even": break_even, "tiered_over_best": dict(tiered_best)}
    return found


def plot(doc, streams, modes_of, name, what):
    keys = sorted(streams)
    fig, axes = doc.plt.subplots(1, len(keys), figsize=(6 * len(keys), 4.5), squeeze=False)
    for ax, (n, k) in zip(axes[0], keys):
        by_launches = streams[(n, k)]
        for mode in modes_of:
            pts = sorted((L, m[mode]["median"] / 1000) for L, m in by_launches.items() if mode in m)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=mode)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"n = {pow2(n)}, k = {k}")
        ax.set_xlabel(f"launches of {what}")
        ax.set_ylabel("total ms")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    doc.figure(name, fig, f"Total time of a stream of launches of {what} against its length")
