"""What a flush leaves behind (flush/ benchmarks): the same launch after no flush, after the
suite's read-only flush, and after a cudaMemset flush, which leaves the L2 full of dirty lines."""
from ..document import fmt_time, table
from ..stats import compare

PROBES = (("empty_kernel", "an empty kernel"), ("copy", "a copy of 2^22 floats (16 MiB each way)"))


def find(bench, noise):
    """{probe: {"none", "read", "memset": median µs, "memset_over_read": ratio, "finding": the U test's
    answer}} of each probe the run timed after all three flushes."""
    rows = {e: row for _, es in bench.select("flush") for e, row in es.items()}
    out = {}
    for probe, _ in PROBES:
        times = {kind: rows.get(f"{probe}/{kind}") for kind in ("none", "read", "memset")}
        if all(times.values()):
            ratio, _, finding = compare(times["read"], times["memset"], noise)
            out[probe] = {k: v["median"] for k, v in times.items()} | {
                "memset_over_read": ratio,
                "finding": finding,
            }
    return out


def add(doc, found):
    if not found:
        return
    doc.add("## What the L2 flush leaves behind\n")
    doc.add(
        "Every timed launch follows a flush of the L2, so that a working set that fits in it is timed from"
        " memory. The suite's flush reads a buffer twice the L2's size and writes nothing that stays; the"
        " usual idiom, a `cudaMemset` of such a buffer, leaves the L2 full of dirty lines that the next"
        " launch must write back while it is timed. The same launches, after each:\n"
    )
    cells = [
        [
            what,
            fmt_time(f["none"]),
            fmt_time(f["read"]),
            fmt_time(f["memset"]),
            f"{f['memset_over_read']:.2f}"
            + ("" if f["finding"] else " (not decided)" if f["finding"] is None else " (noise)"),
        ]
        for probe, what in PROBES
        if (f := found.get(probe))
    ]
    doc.add(table(["launch", "no flush", "read flush (the suite's)", "memset flush", "memset / read"], cells))
    if "copy" in found and "empty_kernel" in found:
        c, e = found["copy"], found["empty_kernel"]
        doc.add(
            f"After a memset flush the copy takes {c['memset_over_read']:.2f}× its time after the read flush"
            + (
                " (beyond the noise; the write-back of the flush's dirty lines is not timed apart from the"
                " launch here)"
                if c["finding"]
                else ", which the repetitions are too few to decide"
                if c["finding"] is None
                else ", within the noise"
            )
            + f"; the empty kernel, which touches no memory, {e['memset_over_read']:.2f}×. Without any flush"
            f" the empty kernel takes {fmt_time(e['none'])} against {fmt_time(e['read'])} after the read"
            " flush; what that difference is made of is not timed part by part here.\n"
        )
