"""The memory-bound map: each implementation's fraction of the copy bandwidth at the largest n,
and bandwidth against n."""
from collections import defaultdict

from .. import plots
from ..document import PAST_L2, of_copy, of_copy_note, pow2, table
from ..results import strategy_of
from ..queries import DEMONSTRATION, kernel_facts, map_kernel
from ..stats import ALPHA, median, span, spearman

COPY_TARGET = 0.97  # the fraction of copy bandwidth a memory-bound map's best form should reach


def instructions(profile, entry):
    """Nsight Compute's warp instructions per element of an entry's map kernel on the quadratic,
    float32, k = 1; None where the profile has no such kernel."""
    for k in (profile or {}).get("kernels", []):
        problem = k.get("problem", "").split()
        if k.get("entry") == entry and {"map", "op=quadratic", "type=f32", "k=1"} <= set(problem):
            return k.get("warp_instructions_per_element")
    return None


def explain_scalar(doc, scalar, profile=None):
    """Why the one-element-per-thread forms differ, from their kernels' registers and occupancy
    (scalar: {entry: (of copy, kernel)}) and, where the profile has them, the instructions each
    issues per element: a table, and what it shows, computed."""
    known = {e: (f, k) for e, (f, k) in scalar.items() if k and k.get("occupancy") is not None}
    if not known:
        return
    # The scalar forms whose kernel has no resource record (a plugin's file, a graph, patched machine
    # code): in the table without figures, and named, so that no sentence below covers them unsaid.
    unrecorded = sorted(e for e in scalar if e not in known)
    doc.detail(
        "The scalar forms' kernels",
        "Each kernel's fraction of copy beside what the compiler and the runtime say about it:\n\n"
        + table(
            [
                "implementation",
                "of copy",
                "registers",
                "blocks per SM",
                "occupancy",
                "spill B",
                "indirect CALL",
            ],
            [
                [
                    f"`{e}`",
                    f"{f:.3f}",
                    k["registers"],
                    k["blocks_per_sm"],
                    f"{k['occupancy']:.2f}",
                    k.get("spill_stores", 0),
                    "–" if k.get("indirect_calls") is None else k["indirect_calls"],
                ]
                for e, (f, k) in sorted(known.items())
            ]
            + [[f"`{e}`", f"{scalar[e][0]:.3f}", "–", "–", "–", "–", "–"] for e in unrecorded],
        ),
        "Why the scalar forms differ: each kernel's fraction of copy beside its registers, occupancy and"
        " indirect calls",
    )
    full = max(k["occupancy"] for _, k in known.values())
    at_full = {e: f for e, (f, k) in known.items() if k["occupancy"] == full}
    below = {e: (f, k) for e, (f, k) in known.items() if k["occupancy"] < full}
    inlined = [f for e, f in at_full.items() if not known[e][1].get("indirect_calls")]
    called = [f for e, f in at_full.items() if known[e][1].get("indirect_calls")]
    text = []
    pairs = [
        (e, e.replace(".crowded/", ".symbol/") if e.startswith("04_") else e.replace(".crowded/", "/"))
        for e in known
        if ".crowded/" in e
    ]
    # A source compiled with every workload's tables in one module (crowded) and for the map alone:
    # what the module's other content did to the kernel's registers and blocks per SM.
    compared = []
    for crowded, own in pairs:
        if own in known:
            (fc, kc), (fo, ko) = known[crowded], known[own]
            compared.append(
                f"`{crowded}` {kc['registers']} registers, {kc['blocks_per_sm']} blocks per SM"
                f" ({kc['occupancy']:.2f} occupancy), {fc:.3f} of copy against {ko['registers']},"
                f" {ko['blocks_per_sm']}, {fo:.3f} for the map alone (`{own}`)"
                + (
                    ""
                    if kc["blocks_per_sm"] < ko["blocks_per_sm"]
                    else ": the same blocks per SM, so not the occupancy"
                    if kc["blocks_per_sm"] == ko["blocks_per_sm"]
                    else ": more blocks per SM than for the map alone"
                )
            )
    paired = {c for c, o in pairs if o in known}
    others = [
        f"`{e}` ({k['registers']} registers, {k['occupancy']:.2f}, {f:.3f} of copy)"
        for e, (f, k) in sorted(below.items())
        if e not in paired
    ]
    text.append(
        f"Every kernel at full occupancy ({full:.2f}) reaches {span(at_full.values(), '{:.3f}')}"
        + (f"; below it: {', '.join(others)}" if others else "")
        + (
            f" (no resource record for {', '.join(f'`{e}`' for e in unrecorded)}: not counted here)."
            if unrecorded
            else "."
        )
    )
    if compared:
        text.append(
            "Compiled with every workload's tables in one module: "
            + "; ".join(compared)
            + (
                ". What else the module held set the registers, and so the occupancy."
                if all(
                    known[c][1]["blocks_per_sm"] < known[o][1]["blocks_per_sm"]
                    for c, o in pairs
                    if o in known
                )
                else "."
            )
        )
    if inlined and called:
        counted = {e: c for e in at_full if (c := instructions(profile, e)) is not None}
        # Builds whose kernels issue the same instructions per element are one kernel, not several
        # independent ones: each distinct count once, at its builds' median fraction of copy.
        distinct = {}
        for e, c in counted.items():
            distinct.setdefault(c, []).append(at_full[e])
        rank = spearman(list(distinct), [median(fs) for fs in distinct.values()])
        sentence = (
            f"At full occupancy the kernels without an indirect call reach {span(inlined, '{:.3f}')} "
            f"and those with one {span(called, '{:.3f}')}: occupancy does not separate these"
        )
        if rank is None:
            sentence += ", and what does is not measured here."
        else:
            told = (
                f"(Spearman's ρ = {rank[0]:.2f} over {len(distinct)} distinct kernels, the {len(counted)}"
                f" builds' with the same count taken once, p = {rank[1]:.2g})"
            )
            sentence += (
                f". The warp instructions each issues per element (Nsight Compute) do: the fewer, the nearer"
                f" copy {told}."
                if rank[1] < ALPHA and rank[0] < 0
                else f"; nor do the warp instructions each issues per element (Nsight Compute) {told}: what"
                " does is not measured here."
            )
        text.append(sentence)
    doc.add(" ".join(text) + "\n")


def heading(bench):
    runs = bench.select("map", k=1, type="f32", op="quadratic")
    n_max = max((int(f["n"]) for f, _ in runs), default=0)
    return f"The memory-bound map (quadratic, float32, k = 1, n = {pow2(n_max)})"


def find(bench, resources):
    """The map at k = 1 (quadratic, float32): its largest n and that size's entries, each strategy's best
    form (entry, fraction of copy), and the scalar forms' fractions beside their kernels' resources;
    {} without the map."""
    runs = bench.select("map", k=1, type="f32", op="quadratic")
    if not runs:
        return {}
    n_max = max(int(f["n"]) for f, _ in runs)
    entries = next(e for f, e in runs if int(f["n"]) == n_max)
    best = {}
    for entry, row in entries.items():
        if (
            DEMONSTRATION in entry
        ):  # the crowded builds are not a strategy's form, but a lesson in what not to do
            continue
        s, frac = strategy_of(entry), row["counters"].get("frac_copy", 0)
        if s not in best or frac > best[s][1]:
            best[s] = (entry, frac)
    scalar = {
        e: (row["counters"]["frac_copy"], map_kernel(resources, e))
        for e, row in entries.items()
        if e.endswith("/scalar")
    }
    return {"runs": runs, "n": n_max, "entries": entries, "best": best, "scalar": scalar}


def add(doc, bench, found, resources, profile=None):
    if not found:
        return
    runs, n_max, entries, best = found["runs"], found["n"], found["entries"], found["best"]
    doc.add(f"## {heading(bench)}\n")
    moved, l2 = 2 * 4 * n_max, bench.l2_bytes
    rows = []
    for entry, row in sorted(entries.items()):
        c = row["counters"]
        rows.append(
            [
                f"`{entry}`",
                f"{row['median']:.1f}",
                f"{100 * row.get('cv', float('nan')):.2f}",
                f"{c.get('GB/s', float('nan')):.0f}",
                of_copy(c.get("frac_copy", float("nan")), moved, l2),
            ]
        )
    doc.detail(
        f"Every implementation of the map at n = {pow2(n_max)}",
        table(["implementation", "median µs", "cv %", "GB/s", "of copy"], rows)
        + "\n"
        + of_copy_note(l2)
        + "\n",
        f"Each of the {len(rows)} implementations' median time, spread, bandwidth and fraction of copy",
    )
    if not (l2 and moved >= PAST_L2 * l2):
        doc.add(
            f"The largest map moves {moved / 2**20:.0f} MiB, under {PAST_L2}× the L2"
            f" ({PAST_L2 * l2 / 2**20:.0f} MiB): this run makes no bandwidth statement.\n"
        )
        return
    reached = [s for s, (_, f) in best.items() if f >= COPY_TARGET]
    below = sorted(((f, s, e) for s, (e, f) in best.items() if f < COPY_TARGET))
    facts = {e: map_kernel(resources, e) for _, _, e in below}
    doc.add(
        f"**Best form per strategy.** {len(reached)} of {len(best)} strategies (peers included) reach "
        f"{COPY_TARGET} of the copy bandwidth with their best form"
        + (
            "; below it: "
            + "; ".join(
                f"`{e}` {f:.3f}" + (f" (its kernel: {kernel_facts(facts[e])})" if facts[e] else "")
                for f, s, e in below
            )
            if below
            else ""
        )
        + ".\n"
    )
    scalar = [row["counters"]["frac_copy"] for e, row in entries.items() if e.endswith("/scalar")]
    vec = [row["counters"]["frac_copy"] for e, row in entries.items() if e.endswith("/vec")]
    if scalar and vec:
        doc.add(
            f"One element per thread (`scalar`) reaches {span(scalar, '{:.2f}')} of copy; 16-byte loads "
            f"and stores (`vec`) reach {span(vec, '{:.2f}')}.\n"
        )
    explain_scalar(doc, found["scalar"], profile)
    by_entry = defaultdict(list)
    for f, e in runs:
        for entry, row in e.items():
            if DEMONSTRATION not in entry:
                by_entry[entry].append((int(f["n"]), row["counters"]["GB/s"]))
    copy = sorted((b // 4, row["counters"]["GB/s"]) for b, row in bench.copies.items())
    plots.map_bandwidth(doc, by_entry, copy)
