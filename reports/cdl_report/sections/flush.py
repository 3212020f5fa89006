"""What a flush leaves behind (flush/ benchmarks): the same launch after no flush, after none but with
the GPU held by a kernel that touches no memory while the host queues the launch, after the suite's
read-only flush, and after a cudaMemset flush, which leaves the L2 full of dirty lines."""
from ..document import fmt_time, table
from ..stats import compare

PROBES = (("empty_kernel", "an empty kernel"), ("copy", "a copy of 2^22 floats (16 MiB each way)"))


def find(bench, noise):
    """{probe: {"none", "read", "memset" (and "held" where the run timed it): median µs,
    "memset_over_read", "held_over_read": ratios, "finding", "held_finding", "none_finding": the U
    test's answers against the read flush, "held_none_finding": held's against none}} of each probe the
    run timed after the three flushes."""
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
            held = rows.get(f"{probe}/held")
            if held:
                ratio, _, finding = compare(times["read"], held, noise)
                out[probe] |= {"held": held["median"], "held_over_read": ratio, "held_finding": finding}
                out[probe]["none_finding"] = compare(times["read"], times["none"], noise)[2]
                out[probe]["held_none_finding"] = compare(times["none"], held, noise)[2]
    return out


def told(finding, ratio):
    """A ratio against the read flush, in the words its finding allows."""
    if finding is None:
        return f"{ratio:.2f}× its time after the read flush, which the repetitions are too few to decide"
    if finding:
        return f"{ratio:.2f}× its time after the read flush, beyond the noise"
    return "its time after the read flush, within the noise"


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
    held = any("held" in f for f in found.values())
    cells = [
        [
            what,
            fmt_time(f["none"]),
            *([fmt_time(f["held"]) if "held" in f else "–"] if held else []),
            fmt_time(f["read"]),
            fmt_time(f["memset"]),
            f"{f['memset_over_read']:.2f}"
            + ("" if f["finding"] else " (not decided)" if f["finding"] is None else " (noise)"),
        ]
        for probe, what in PROBES
        if (f := found.get(probe))
    ]
    doc.add(
        table(
            [
                "launch",
                "no flush",
                *(["no flush, the GPU held"] if held else []),
                "read flush (the suite's)",
                "memset flush",
                "memset / read",
            ],
            cells,
        )
    )
    if "copy" not in found or "empty_kernel" not in found:
        return
    c, e = found["copy"], found["empty_kernel"]
    text = (
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
        f" the empty kernel takes {fmt_time(e['none'])} against {fmt_time(e['read'])} after the read flush"
    )
    if "held" not in e:
        doc.add(text + "; what that difference is made of is not timed part by part here.\n")
        return
    # The held probe: no flush, but the GPU busy while the host queues the events and the launch, as
    # it is during a flush. What it leaves of the difference is the GPU's; the rest is the host's.
    text += (
        f". With no flush but the GPU held by a kernel that touches no memory while the host queues the"
        f" launch, it takes {fmt_time(e['held'])}: {told(e['held_finding'], e['held_over_read'])}"
    )
    # The difference to explain is none against read; held splits it where both are decided.
    if e["none_finding"] and e["held_finding"] is False:
        text += (
            f". So the {fmt_time(e['none'] - e['held'])} more without a flush is the host queuing the launch"
            " while the events wait on an idle GPU, not the flush's absence"
        )
    elif e["none_finding"] and e["held_finding"] and e["held_none_finding"] is False:
        text += (
            f". So the {fmt_time(e['none'] - e['read'])} more without a flush is the GPU's own, not the host"
            " queuing the launch"
        )
    elif e["none_finding"] and e["held_finding"] and e["none"] > e["held"] > e["read"]:
        text += (
            f". So of the {fmt_time(e['none'] - e['read'])} more without a flush,"
            f" {fmt_time(e['none'] - e['held'])} is the host queuing the launch while the events wait on an"
            " idle GPU, and the rest the GPU's own"
        )
    if "held" in c:
        text += (
            f". The copy, held the same way with no flush (its input and output left in the L2 by the launch"
            f" before), takes {fmt_time(c['held'])}: {told(c['held_finding'], c['held_over_read'])}"
        )
    doc.add(text + ".\n")
