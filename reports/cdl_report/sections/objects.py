"""Virtual calls on an object per element (strategy 11): CUDA's virtual call against the class found
from the object's address (COAL, Zhang, Alawneh and Rogers, ASPLOS 2021) and from its pointer's
top bits (their TypePointer, in software), per layout, and why, from the counters."""
from ..document import fmt_time, table
from ..queries import waits

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


# The forms that change one thing each, for where COAL's time goes (decomposition).
PARTS = ("virtual", "virtual_by_class", "coal", "type_pointer", "coal_prefetched")


def find(bench, noise):
    """Per problem (layout, classes), in order: `virtual`'s time and fraction of copy and each form's
    time over it ("rows"), COAL's speed-up with its verdict against the paper's ("speedups"), and the
    ratios of the forms that change one thing each ("parts"); {} without the workload."""
    runs = sorted(bench.select("objects"), key=lambda fe: (fe[0]["layout"], int(fe[0]["distinct"])))
    if not runs:
        return {}
    forms = sorted({e for _, es in runs for e in es} - {VIRTUAL})
    rows, speedups, parts = [], {}, []
    for f, es in runs:
        base = es.get(VIRTUAL)
        if not base:
            continue
        key = (f["layout"], int(f["distinct"]))
        over = {e: es[e]["median"] / base["median"] for e in forms if e in es}
        rows.append((key, base["median"], base.get("counters", {}).get("frac_copy"), over))
        if COAL in es:
            speedup = base["median"] / es[COAL]["median"]
            speedups[key] = (speedup, verdict(speedup, noise))
    for f, es in runs:
        t = {e.removeprefix(PREFIX): row["median"] for e, row in es.items()}
        if f["layout"] != "uniform" and all(n in t for n in PARTS):
            parts.append(
                (
                    (f["layout"], f["distinct"]),
                    t["coal"] / t["virtual"],
                    t["virtual_by_class"] / t["virtual"],
                    t["coal"] / t["type_pointer"],
                    t["coal"] / t["coal_prefetched"],
                )
            )
    return {"forms": forms, "rows": rows, "speedups": speedups, "parts": parts}


def decomposition(doc, parts):
    """COAL's time against virtual's, split by the forms that change one thing each: the allocation
    by class (virtual_by_class), the search (type_pointer finds the class without one), and the
    warp's load of its objects before the call splits it (coal_prefetched)."""
    if not parts:
        return
    rows = [[layout, distinct] + [f"{r:.2f}" for r in ratios] for (layout, distinct), *ratios in parts]
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


def add(doc, found, profile=None):
    if not found:
        return
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
    forms, speedups = found["forms"], found["speedups"]
    rows = [
        [layout, str(distinct), fmt_time(time), "–" if of_copy is None else f"{of_copy:.2f}"]
        + [f"{over[e]:.2f}" if e in over else "–" for e in forms]
        for (layout, distinct), time, of_copy, over in found["rows"]
    ]
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
                    [l, str(d), f"{PAPER_SPEEDUP:.1f}", f"{s:.2f}", v]
                    for (l, d), (s, v) in sorted(speedups.items())
                ],
            )
        )
    decomposition(doc, found["parts"])
    why(doc, profile)
