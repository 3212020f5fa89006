"""The memory-bound map: each implementation's fraction of the copy bandwidth at the largest n,
and bandwidth against n."""
from collections import defaultdict

from .. import plots
from ..document import pow2, table
from ..results import strategy_of

COPY_TARGET = 0.97  # the fraction of copy bandwidth a memory-bound map's best form should reach


def map_kernel_facts(resources, entry):
    """The resource facts of an entry's float map kernel (vec form), as text; '' when unknown."""
    if not resources:
        return ""
    source = entry.split("/")[0].split(".")[0]
    for k in resources["kernels"]:
        if k["source"].endswith(f"/{source}.cu") and "map_vec_kernel<float" in k["name"] and "quadratic" not in k["name"] \
                and "ops::" not in k["name"]:
            calls = "" if k.get("indirect_calls") is None else f"{k['indirect_calls']} calls through a register, "
            return (f"its kernel: {calls}{k.get('registers')} registers, {k.get('spill_stores', 0)} B of spill stores, "
                    f"{k.get('stack', 0)} B stack frame")
    return ""


def add(doc, bench, resources):
    runs = bench.select("map", k=1, type="f32", op="quadratic")
    if not runs:
        return {}
    n_max = max(int(f["n"]) for f, _ in runs)
    entries = next(e for f, e in runs if int(f["n"]) == n_max)
    doc.add(f"## The memory-bound map (quadratic, float32, k = 1, n = {pow2(n_max)})\n")
    rows = []
    for entry, row in sorted(entries.items()):
        c = row["counters"]
        rows.append([f"`{entry}`", f"{row['median']:.1f}", f"{100 * row.get('cv', float('nan')):.2f}",
                     f"{c.get('GB/s', float('nan')):.0f}", f"{c.get('frac_copy', float('nan')):.3f}"])
    doc.add(table(["implementation", "median µs", "cv %", "GB/s", "of copy"], rows))
    best = {}
    for entry, row in entries.items():
        s, frac = strategy_of(entry), row["counters"].get("frac_copy", 0)
        if s not in best or frac > best[s][1]:
            best[s] = (entry, frac)
    reached = [s for s, (_, f) in best.items() if f >= COPY_TARGET]
    below = sorted(((f, s, e) for s, (e, f) in best.items() if f < COPY_TARGET))
    doc.add(f"**Best form per strategy.** {len(reached)} of {len(best)} strategies (peers included) reach "
            f"{COPY_TARGET} of the copy bandwidth with their best form" +
            ("; below it: " + "; ".join(f"`{e}` {f:.3f}" + (f" ({map_kernel_facts(resources, e)})" if map_kernel_facts(resources, e) else "")
                                         for f, s, e in below) if below else "") + ".\n")
    scalar = [row["counters"]["frac_copy"] for e, row in entries.items() if e.endswith("/scalar")]
    vec = [row["counters"]["frac_copy"] for e, row in entries.items() if e.endswith("/vec")]
    if scalar and vec:
        doc.add(f"One element per thread (`scalar`) reaches {min(scalar):.2f}–{max(scalar):.2f} of copy; 16-byte loads "
                f"with several in flight per thread (`vec`) reach {min(vec):.2f}–{max(vec):.2f}. At this size the load "
                "width and the bytes in flight decide the time; how the op is called matters only where the call "
                "itself stalls the loads (see the resource table).\n")
    by_entry = defaultdict(list)
    for f, e in runs:
        for entry, row in e.items():
            by_entry[entry].append((int(f["n"]), row["counters"]["GB/s"]))
    copy = sorted((b // 4, row["counters"]["GB/s"]) for b, row in bench.copies.items())
    plots.map_bandwidth(doc, by_entry, copy)
    return {"best": best, "n": n_max}
