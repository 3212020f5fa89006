"""What a flush leaves behind (flush/ benchmarks): the same launch after no flush, after the
suite's read-only flush, and after a cudaMemset flush, which leaves the L2 full of dirty lines."""
from ..document import fmt_time, table
from ..stats import compare


def add(doc, bench, noise):
    runs = bench.select("flush")
    rows = {e: row for _, es in runs for e, row in es.items()}
    if not rows:
        return {}
    doc.add("## What the L2 flush leaves behind\n")
    doc.add(
        "Every timed launch follows a flush of the L2, so that a working set that fits in it is timed from"
        " memory. The suite's flush reads a buffer twice the L2's size and writes nothing that stays; the"
        " usual idiom, a `cudaMemset` of such a buffer, leaves the L2 full of dirty lines that the next"
        " launch must write back while it is timed. The same launches, after each:\n"
    )
    out, cells = {}, []
    for probe, what in (
        ("empty_kernel", "an empty kernel"),
        ("copy", "a copy of 2^22 floats (16 MiB each way)"),
    ):
        times = {kind: rows.get(f"{probe}/{kind}") for kind in ("none", "read", "memset")}
        if not all(times.values()):
            continue
        ratio, p, finding = compare(times["read"], times["memset"], noise)
        out[probe] = {k: v["median"] for k, v in times.items()} | {
            "memset_over_read": ratio,
            "finding": finding,
        }
        cells.append(
            [
                what,
                fmt_time(times["none"]["median"]),
                fmt_time(times["read"]["median"]),
                fmt_time(times["memset"]["median"]),
                f"{ratio:.2f}" + ("" if finding else " (not decided)" if finding is None else " (noise)"),
            ]
        )
    doc.add(table(["launch", "no flush", "read flush (the suite's)", "memset flush", "memset / read"], cells))
    if "copy" in out and "empty_kernel" in out:
        c, e = out["copy"], out["empty_kernel"]
        doc.add(
            f"After a memset flush the copy takes {c['memset_over_read']:.2f}× its time after the read flush"
            + (
                ": the write-back of the flush's dirty lines, timed with the launch"
                if c["finding"]
                else ", which the repetitions are too few to decide"
                if c["finding"] is None
                else ", within the noise"
            )
            + f"; the empty kernel, which touches no memory, {e['memset_over_read']:.2f}×. Without any flush"
            f" the empty kernel takes {fmt_time(e['none'])} against {fmt_time(e['read'])}: with the GPU"
            " idle when the start event is recorded, the time until the kernel arrives from the host is"
            " timed too, which a flush in the stream before it hides.\n"
        )
    return out
