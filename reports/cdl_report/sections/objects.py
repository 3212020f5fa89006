"""Virtual calls on an object per element (strategy 11): CUDA's virtual call against the class found
from the object's address (COAL, Zhang, Alawneh and Rogers, ASPLOS 2021) and from its pointer's
top bits (their TypePointer, in software), per layout, and why, from the counters."""
from ..document import fmt_time, table
from .profile import waits

PREFIX = "11_type_from_address/"
VIRTUAL, COAL = PREFIX + "virtual", PREFIX + "coal"
# The paper's claim: COAL performs 80 % better than CUDA's virtual calls (Volta-era GPUs), a
# speed-up of 1.8.
PAPER_SPEEDUP = 1.8


def verdict(speedup, noise):
    """A speed-up of COAL over CUDA's virtual call against the paper's."""
    if speedup >= PAPER_SPEEDUP * (1 - noise):
        return "reproduces the paper's gain"
    if speedup > 1 + noise:
        return "pays, less than the paper's gain"
    if speedup >= 1 - noise:
        return "no difference"
    return "slower"


def figure(k, key, form="{:.2f}"):
    return "–" if k.get(key) is None else form.format(k[key])


def why(doc, profile):
    """The counters of each form on the profiled layouts."""
    kernels = [k for k in (profile or {}).get("kernels", []) if k["workload"] == "objects"]
    if not kernels:
        return
    doc.add(
        "Why, from Nsight Compute's counters (one validated launch each, `profile.json`; times under the"
        " profiler). *Loads* are the load instructions from memory a warp executed, per element (a warp's"
        " instruction counted once for its 32 elements, once per path where it diverged); *sectors* the"
        " 32-byte sectors they asked L1 for; *threads / warp instruction* is 32 when a warp never diverges:\n"
    )
    rows = [
        [
            k["problem"].split("layout=")[1].split(" n=")[0],
            f"`{k['entry'].removeprefix(PREFIX)}`",
            fmt_time(k["duration_us"]),
            f"{k['thread_instructions_per_element']:.1f}",
            figure(k, "loads_per_element"),
            figure(k, "load_sectors_per_element"),
            figure(k, "l1_hit_rate"),
            figure(k, "dram_over_minimum"),
            figure(k, "threads_per_warp_instruction", "{:.1f}"),
            waits(k),
        ]
        for k in sorted(kernels, key=lambda k: (k["problem"], k["entry"]))
    ]
    header = ["layout", "form", "time", "instructions / element", "loads / element", "sectors / element"]
    header += ["L1 hit rate", "DRAM bytes / minimum", "threads / warp instruction", "top waits"]
    doc.add(table(header, rows, keys=2))
    doc.add("")


def decomposition(doc, runs):
    """COAL's time against virtual's, split by the forms that change one thing each: the allocation
    by class (virtual_by_class), the search (type_pointer finds the class without one), and the
    warp's load of its objects before the call splits it (coal_prefetched)."""
    need = ("virtual", "virtual_by_class", "coal", "type_pointer", "coal_prefetched")
    rows = []
    for f, es in sorted(runs, key=lambda fe: (fe[0]["layout"], int(fe[0]["distinct"]))):
        t = {e.removeprefix(PREFIX): row["median"] for e, row in es.items()}
        if f["layout"] == "uniform" or not all(n in t for n in need):
            continue
        rows.append(
            [
                f["layout"],
                f["distinct"],
                f"{t['coal'] / t['virtual']:.2f}",
                f"{t['virtual_by_class'] / t['virtual']:.2f}",
                f"{t['coal'] / t['type_pointer']:.2f}",
                f"{t['coal'] / t['coal_prefetched']:.2f}",
            ]
        )
    if not rows:
        return
    doc.add(
        "Where COAL's time goes, each a ratio of two forms that differ in one thing (above 1: that thing"
        " costs time): the allocation by class alone (`virtual_by_class` / `virtual`: a warp's objects spread"
        " over the arenas of its classes), the search of the arenas' bounds (`coal` / `type_pointer`, which"
        " reads the class from the pointer instead), and the objects not asked for before the call (`coal` /"
        " `coal_prefetched`: a virtual call's vtable-pointer load, made by the whole warp before the call"
        " splits it by class, also brings every element's object into L1; COAL removes that load, and each"
        " class's turn then waits for its own objects):\n"
    )
    header = ["layout", "classes", "`coal` / `virtual`", "allocation by class", "the search"]
    doc.add(table(header + ["objects not asked for before the call"], rows))


def add(doc, bench, noise, profile=None):
    runs = bench.select("objects")
    if not runs:
        return {}
    doc.add("## Virtual calls on an object per element (COAL, strategy 11)\n")
    doc.add(
        "The tasks workload's work written as object-oriented code: one device object per element, of one of"
        " several classes, each element calling a virtual method of its own object. `virtual` calls it as"
        " CUDA does (the object's vtable pointer, the vtable entry, a call through a register) on objects"
        " made in element order; `virtual_by_class` on the same objects allocated by class; `coal` finds the"
        " class from the object's address (each class in an arena of its own, a binary search of the arenas'"
        " bounds) and the method from a table, and `coal_prefetched` does the same after the warp has asked"
        " for its objects; `type_pointer` reads the class from the pointer's top bits instead (the paper's"
        " TypePointer, in software); `coal_inlined` and `class_switch` switch on the class (from the address,"
        " or from a number the object holds) and call the method directly, inlined;"
        " `12_variant_visit/variant` holds the objects by value, a `cuda::std::variant` each (no vtable, no"
        " pointer), and visits it. `virtual` is given as a fraction of the copy bandwidth (each element moves"
        " its pointer, its object, x and y); the forms as their time over `virtual`'s (below 1: faster):\n"
    )
    forms = sorted({e for _, es in runs for e in es} - {VIRTUAL})
    rows, speedups = [], {}
    for f, es in sorted(runs, key=lambda fe: (fe[0]["layout"], int(fe[0]["distinct"]))):
        base = es.get(VIRTUAL)
        if not base:
            continue
        of_copy = base.get("counters", {}).get("frac_copy")
        cells = [f"{es[e]['median'] / base['median']:.2f}" if e in es else "–" for e in forms]
        rows.append(
            [
                f["layout"],
                f["distinct"],
                fmt_time(base["median"]),
                "–" if of_copy is None else f"{of_copy:.2f}",
            ]
            + cells
        )
        if COAL in es:
            speedups[(f["layout"], int(f["distinct"]))] = base["median"] / es[COAL]["median"]
    doc.add(
        table(
            ["layout", "classes", "`virtual`", "of copy"] + [f"`{e.removeprefix(PREFIX)}`" for e in forms],
            rows,
            keys=2,
        )
    )
    if speedups:
        doc.add(
            "COAL's speed-up over CUDA's virtual call (`virtual` time / `coal` time) against the paper's"
            f" {PAPER_SPEEDUP:.1f} (rule: at least the paper's, less the noise, reproduces it; above 1 plus"
            " the noise, pays; within the noise, no difference; below, slower):\n"
        )
        doc.add(
            table(
                ["layout", "classes", "paper", "this run", "verdict"],
                [
                    [l, str(d), f"{PAPER_SPEEDUP:.1f}", f"{s:.2f}", verdict(s, noise)]
                    for (l, d), s in sorted(speedups.items())
                ],
            )
        )
    decomposition(doc, runs)
    why(doc, profile)
    return {"speedups": speedups}
