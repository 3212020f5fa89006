"""Strategy 10, tiered dispatch: streams of launches of a new op (cdl_bench's tiered/), each the
switch alone, the JIT alone (its compile, then its kernel) and the two tiered, timed whole."""
from ..document import fmt_time, pow2, table
from ..results import label

MODES = ("03_switch", "06_nvrtc_jit", "10_tiered_dispatch")


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
    found = {}
    for (n, k), by_launches in sorted(streams.items()):
        rows, break_even, tiered_best = [], None, []
        for launches, modes in sorted(by_launches.items()):
            if not all(m in modes for m in MODES):
                continue
            t = {m: modes[m]["median"] for m in MODES}
            best = min(t["03_switch"], t["06_nvrtc_jit"])
            first_own = modes["10_tiered_dispatch"]["counters"].get("first_own_kernel_launch", -1)
            if break_even is None and t["06_nvrtc_jit"] < t["03_switch"]:
                break_even = launches
            tiered_best.append((launches, t["10_tiered_dispatch"] / best))
            rows.append(
                [
                    launches,
                    fmt_time(t["03_switch"]),
                    fmt_time(t["06_nvrtc_jit"]),
                    fmt_time(t["10_tiered_dispatch"]),
                    f"{t['10_tiered_dispatch'] / best:.2f}",
                    "never (the stream ended first)" if first_own < 0 else f"launch {int(first_own) + 1}",
                ]
            )
        if not rows:
            continue
        doc.add(f"**n = {pow2(n)}, k = {k}**\n")
        doc.add(
            table(
                [
                    "launches",
                    "switch alone",
                    "JIT alone",
                    "tiered",
                    "tiered / the better alone",
                    "tiered's move",
                ],
                rows,
            )
        )
        no_worse = [str(L) for L, r in tiered_best if r <= 1 + noise]
        better = [str(L) for L, r in tiered_best if r < 1 - noise]
        worst = max(tiered_best, key=lambda p: p[1])
        shortest = min(by_launches)
        start_us = (
            by_launches[shortest]["10_tiered_dispatch"]["median"]
            - by_launches[shortest]["03_switch"]["median"]
        )
        doc.add(
            (
                f"The JIT alone beats the switch alone from {break_even} launches on"
                if break_even
                else "The JIT alone never beats the switch alone in these streams"
            )
            + f". Tiered takes no more than the better of the two (within the noise, {noise:.1%}) at "
            + (", ".join(no_worse) or "no length")
            + " launches, less than both at "
            + (", ".join(better) or "none")
            + f"; at most {worst[1]:.2f}× the better ({worst[0]} launch{'es' if worst[0] != 1 else ''}). "
            + f"A stream of {shortest} launch{'es' if shortest != 1 else ''} costs tiered {start_us:.0f} µs"
            " more than the switch alone: starting the compile's thread, the only work it adds before the"
            " move.\n"
        )
        found[(n, k)] = {"break_even": break_even, "tiered_over_best": dict(tiered_best)}
    if found:
        plot(doc, streams)
    return found


def plot(doc, streams):
    keys = sorted(streams)
    fig, axes = doc.plt.subplots(1, len(keys), figsize=(6 * len(keys), 4.5), squeeze=False)
    for ax, (n, k) in zip(axes[0], keys):
        by_launches = streams[(n, k)]
        for mode in MODES:
            pts = sorted((L, m[mode]["median"] / 1000) for L, m in by_launches.items() if mode in m)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=mode)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"n = {pow2(n)}, k = {k}")
        ax.set_xlabel("launches of the new op")
        ax.set_ylabel("total ms")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    doc.figure(
        "tiered_dispatch.png", fig, "Total time of a stream of launches of a new op against its length"
    )
