"""The articles' own systems (CuPy, Numba, runtime-compiled source from Python) beside the C++
strategies, problem by problem."""
from ..document import fmt_time, of_copy, of_copy_note, pow2, table
from ..results import label
from .jit_stages import stage_ms
from ..experiments import NAMES, median_of, outcome

# The C++ entry of the same form as the Python peers' kernels (one element per thread, global reads,
# a per-element switch), written with a template functor: what the claims set a peer beside.
CPP_SAME_FORM = {
    "map": "01_template_functor/scalar",
    "zip": "01_template_functor/scalar",
    "tasks": "03_switch/per_element",
    "image": "01_template_functor/global",
}

# The one baseline of every table of this section: the template functor at its fastest form, where
# the problem has it (its vec form), else the same form.
CPP_BASE = {"map": "01_template_functor/vec", "zip": "01_template_functor/vec"}


def base_entry(workload, cpp):
    """The entry every figure of a problem is divided by (CPP_BASE), None where the C++ results lack it."""
    for e in (CPP_BASE.get(workload), CPP_SAME_FORM.get(workload)):
        if e and e in cpp:
            return e
    return None


# What a Python user picks today: scripts/bench.sh runs them in a phase of their own (`today`), so a
# python.json can lack them.
TODAY = ("triton", "torch", "jax")


# Bytes each workload's element reads and writes at the least (the C++ problems' min_bytes), for
# whether a fraction of copy is a bandwidth finding (document.of_copy).
ELEMENT_BYTES = {"map": 8, "zip": 12, "tasks": 20}


def moved(workload, fields):
    f = dict(fields)
    per = ELEMENT_BYTES.get(workload)
    return per * int(f["n"]) if per and "n" in f else 0


def add(doc, bench, python, jit_costs=None, interleaved=None, fresh=None):
    found = {"ratio": {}, "first_ms": {}}
    doc.add("## The articles' own systems: CuPy, Numba, runtime-compiled source from Python\n")
    if python is None:
        doc.add(
            "No `python.json` beside the results (or it was set aside, as the report's head says): the Python"
            " peers did not run. `scripts/bench.sh --phases peers` runs them (CuPy, Numba, cuda-python,"
            " PyCUDA, each where it is installed); the claims below that they answer are *not measured*.\n"
        )
        return found
    doc.add(
        "The same problems written the ways the source articles write them (`bench/python`), on the inputs"
        " and against the reference of the C++ workloads, timed with the C++ suite's protocol by each"
        " system's own CUDA events (JAX, which has none, by its profiler's spans of the GPU's work). The"
        " flush before each call holds the GPU for twice the call's host time, so the host has queued the"
        " call before the GPU reaches the first event: a figure is the GPU's work and one event pair, never"
        f" the host's Python; {event_gaps(python)}. *Host per call* is the host's own time to make one call"
        " (the GPU idle before it): where it exceeds the median, the system cannot keep the GPU busy call"
        " after call. *First call* is the host time from defining the kernel to"
        " the end of its first run, compile included (CuPy's disk cache starts empty). Fractions of copy use"
        f" this report's copy bandwidth ({bench.copy_gbs:.0f} GB/s, cudaMemcpy). `python.json`:"
        f" {python.bench.context.get('date', '?')[:16]}, revision"
        f" `{python.bench.context.get('git_revision', '?')}`, mode"
        f" `{python.bench.context.get('cdl_mode', '?')}`, Python {python.bench.env.get('python', '?')}, numpy"
        f" {python.bench.env.get('numpy', '?')}.\n"
    )
    py_rev, cpp_rev = python.bench.context.get("git_revision", "?"), bench.context.get("git_revision", "?")
    if py_rev[:7] != cpp_rev[:7]:
        doc.add(
            f"**The Python peers ran at revision `{py_rev}`, the C++ suite at `{cpp_rev}`**: each ratio below"
            " sets a peer beside the C++ kernel of another build, and a peer's problem that the C++ results"
            " do not have gets no ratio and no part in a verdict.\n"
        )
    rows = []
    for name, sysinfo in python.systems.items():
        status = sysinfo.get("status")
        detail = sysinfo.get("version", "") if status == "ran" else sysinfo.get("reason", "")
        notes = "; ".join(sysinfo.get("notes", []))
        rows.append([f"`{name}`", status, detail + (f" ({notes})" if notes else "")])
    for name in TODAY:
        if name not in python.systems:
            rows.append(
                [
                    f"`{name}`",
                    "not run",
                    "not in this `python.json`: `scripts/bench.sh`'s `today` phase adds it"
                    " (`--phases today,report`)",
                ]
            )
    doc.add(table(["system", "status", "version, or why not"], rows))
    forms = [
        f"- `{technique}` ({NAMES.get(name, name)}): {text}"
        for name, sysinfo in python.systems.items()
        for technique, text in sysinfo.get("forms", {}).items()
    ]
    if forms:
        doc.add(
            "Each system's forms, as its module (`bench/python/cdl_peers/`) writes them; a row's name below"
            " is the form's, then the threads' layout:\n\n" + "\n".join(forms) + "\n"
        )
    for (workload, fields), entries in sorted(python.bench.problems.items()):
        cpp = bench.problems.get((workload, fields), {})
        f = dict(fields)
        problem = (
            f"{workload}: "
            + ", ".join(f"{k} = {pow2(v) if k == 'n' else v}" for k, v in f.items() if k != "shape")
            + (f", {f['shape']}" if "shape" in f else "")
        )
        same = cpp.get(CPP_SAME_FORM.get(workload, ""))
        base_name = base_entry(workload, cpp)
        base = cpp.get(base_name)
        best_entry = min(cpp, key=lambda e: cpp[e]["median"]) if cpp else None
        rows = []
        for entry, row in sorted(entries.items(), key=lambda kv: kv[1]["median"]):
            c = row["counters"]
            ratio = row["median"] / base["median"] if base else None
            found["ratio"][(workload, fields, label(entry))] = (
                row["median"] / same["median"] if same else None
            )
            found["first_ms"][(workload, fields, label(entry))] = c.get("first_call_ms")
            rows.append(
                [
                    f"`{label(entry)}`",
                    fmt_time(row["median"]),
                    of_copy(
                        c.get("GB/s", float("nan")) / bench.copy_gbs, moved(workload, fields), bench.l2_bytes
                    ),
                    "–" if ratio is None else f"{ratio:.2f}×",
                    fmt_time(c["host_us"]) if "host_us" in c else "–",
                    f"{c.get('first_call_ms', float('nan')):.1f} ms",
                ]
            )
        for entry in dict.fromkeys(
            e for e in (base_name, CPP_SAME_FORM.get(workload), best_entry) if e and e in cpp
        ):
            row = cpp[entry]
            rows.append(
                [
                    f"C++ `{entry}`",
                    fmt_time(row["median"]),
                    of_copy(
                        row["counters"].get("frac_copy", float("nan")),
                        moved(workload, fields),
                        bench.l2_bytes,
                    ),
                    f"{row['median'] / base['median']:.2f}×" if base else "–",
                    "–",
                    "built ahead",
                ]
            )
        if not cpp:
            doc.add(f"**{problem}** (no C++ counterpart in `bench.json`: no ratio, no part in a verdict)\n")
        else:
            doc.add(f"**{problem}**\n")
        doc.add(
            table(
                [
                    "peer",
                    "median",
                    "of copy",
                    f"time / C++ `{base_name or '?'}`",
                    "host per call",
                    "first call",
                ],
                rows,
            )
        )
    if python.bench.problems:
        doc.add(of_copy_note(bench.l2_bytes) + "\n")
    found["own"] = own_function_table(
        doc,
        bench,
        python,
        (jit_costs or {}).get("08 compile")
        if interleaved
        else stage_ms(python.cpp_stages, "jit/compile/08/new_op"),
    )
    experiments(doc, python.experiments, jit_costs, bench, python, interleaved, fresh)
    return found


OWN_HEADING = "From Python, my own elementwise function"


def event_gaps(python):
    """What an event pair with nothing between took on each event-timed system, from the run."""
    gaps = {n: s["event_gap_us"] for n, s in python.systems.items() if s.get("event_gap_us") is not None}
    if not gaps:
        return "this `python.json` does not say what an event pair alone takes (written before it did)"
    return "an event pair with nothing between took " + ", ".join(
        f"{fmt_time(v)} ({NAMES.get(n, n)})" for n, v in sorted(gaps.items(), key=lambda kv: kv[1])
    )


def own_function(bench, python):
    """Each Python system that ran the map with a C++ template beside it: its fastest way, as a
    fraction of copy and × the template (01's vec form) on the memory-bound map (quadratic, k = 1,
    the largest n) and, for the worst op of the catalogue, at the largest k > 1 run; and a new op's
    cost (a warm process, and a new process's first op). {system: {...}}, and that k (None where no
    system ran the map at k > 1 beside a C++ template)."""
    if python is None:
        return {}, None
    compiles = {e.get("system"): e for e in python.experiments if e.get("claim") == "compile" and e["runs"]}
    per = {}
    for (workload, fields), entries in python.bench.problems.items():
        f = dict(fields)
        base = bench.problems.get((workload, fields), {}).get("01_template_functor/vec")
        if workload != "map" or f.get("type") != "f32" or not base:
            continue
        by_system = {}
        for entry, row in entries.items():
            by_system.setdefault(label(entry).split(".")[0], []).append((row["median"], label(entry), row))
        for system, ways in by_system.items():
            median, way, row = min(ways, key=lambda w: w[0])
            per.setdefault(system, []).append((f, median / base["median"], way, row))
    ks = [int(f["k"]) for found in per.values() for f, *_ in found if int(f["k"]) > 1]
    top = max(ks) if ks else None
    out = {}
    for system, found in per.items():
        memory = [x for x in found if x[0]["k"] == "1" and x[0]["op"] == "quadratic"]
        at_top = [x for x in found if top is not None and int(x[0]["k"]) == top]
        first = max(memory, key=lambda x: int(x[0]["n"])) if memory else None
        worst = max(at_top, key=lambda x: x[1]) if at_top else None
        if first is None and worst is None:
            continue
        e = compiles.get(system)
        out[system] = {
            "way": (worst or first)[2],
            "k1": first
            and (first[1], first[3]["counters"].get("GB/s", float("nan")) / bench.copy_gbs, first[0]["n"]),
            "top": worst and (worst[1], worst[0]["op"]),
            "new_ms": e and state_ms(e, "new_source_ms"),
            "fresh_ms": e and state_ms(e, "fresh_process_ms"),
        }
    return out, top


def own_function_table(doc, bench, python, jit_new_op_ms=None):
    """The table a reader of the first article wants, and its verdict, computed: the fastest steady
    way from Python, the cheapest new op, and where this suite's own JIT (08) stands among them."""
    rows, top = own_function(bench, python)
    if not rows:
        return None
    doc.add(f"### {OWN_HEADING}\n")
    cells = []
    order = sorted(rows.items(), key=lambda kv: (not kv[1]["top"], (kv[1]["top"] or kv[1]["k1"])[0]))
    for system, r in order:
        k1 = r["k1"]
        cells.append(
            [
                NAMES.get(system, system),
                f"`{r['way']}`",
                f"{of_copy(k1[1], 8 * int(k1[2]), bench.l2_bytes)} of copy, {k1[0]:.2f}× (n = {pow2(k1[2])})"
                if k1
                else "–",
                f"{r['top'][0]:.2f}× {r['top'][1]}" if r["top"] else "–",
                f"{r['new_ms']:.1f} ms" if r["new_ms"] is not None else "–",
                f"{r['fresh_ms']:.0f} ms" if r["fresh_ms"] is not None else "–",
            ]
        )
    doc.add(
        table(
            [
                "system",
                "its fastest way",
                "k = 1, quadratic: × the template",
                f"k = {top}: × the template (worst op)" if top else "k > 1",
                "a new op, warm process",
                "a new process's first op",
            ],
            cells,
        )
    )
    # The steady verdict at the largest k where any system has it, else on the memory-bound map.
    at = "top" if any(r["top"] for r in rows.values()) else "k1"
    steady = {s: r[at][0] for s, r in rows.items() if r[at]}
    new = {s: r["new_ms"] for s, r in rows.items() if r["new_ms"] is not None}
    text = "Times over the C++ template functor's vec form on the same problem (`01_template_functor/vec`)."
    if steady:
        fast = min(steady, key=steady.get)
        text += (
            f" Fastest steady from Python: {NAMES.get(fast, fast)} (`{rows[fast]['way']}`),"
            f" {steady[fast]:.2f}× the template "
            + (f"for its worst op at k = {top}." if at == "top" else "on the memory-bound map (k = 1).")
        )
    if new:
        cheap = min(new, key=new.get)
        text += f" Cheapest new op: {NAMES.get(cheap, cheap)}'s, {new[cheap]:.1f} ms in a warm process."
        if jit_new_op_ms is not None:
            beaten = sorted(NAMES.get(s, s) for s, ms in new.items() if jit_new_op_ms < ms)
            text += (
                f" This suite's 08 compiles and loads a new op in {jit_new_op_ms:.1f} ms: cheaper than "
                + (", ".join(beaten) if beaten else "none of them")
                + f" ({len(beaten)} of {len(new)})."
            )
    doc.add(text + "\n")
    return {"rows": rows, "top": top}


# This suite's routes for a new op (sections/jit.py's costs), set beside the peers' new sources.
CPP_NEW_OP = (  # the report's JIT cost key, its cdl_bench stage, what it times
    ("one-line kernel", "jit/compile/one_line_kernel/new_op", "NVRTC: a one-line kernel, to CUBIN (no load)"),
    ("compile", "jit/compile/06/new_op", "06: the map's vec kernel through NVRTC, to CUBIN (no load)"),
    (
        "07 link",
        "jit/link/07/new_op",
        "07: the op's LTO-IR linked with the kernel's (nvJitLink), to CUBIN (no load)",
    ),
    ("08 compile", "jit/compile/08/new_op", "08: the map's vec kernel through libNVVM, to a loaded kernel"),
    (
        "08 baseline compile",
        "jit/compile/08_baseline/new_op",
        "08's baseline tier: the same through libNVVM without its optimiser (-opt=0), to a loaded kernel",
    ),
)
# 08's tiers, each set against NVRTC's floor and the peers' new sources by the same rule.
TIERS_08 = (("08 compile", "08"), ("08 baseline compile", "08's baseline tier"))
# The interleaved benchmark's route for each JIT cost key (sections/jit.py's ROUTES).
ROUTE_OF = {
    "one-line kernel": "one_line_kernel",
    "compile": "06",
    "07 link": "07",
    "08 compile": "08",
    "08 baseline compile": "08_baseline",
}


def against(mine, theirs):
    """'faster than', 'slower than' or 'no different from (the spreads overlap)': two (low, high)
    ranges of the same cost, a difference only where they do not overlap."""
    if mine[1] < theirs[0]:
        return "faster than"
    if mine[0] > theirs[1]:
        return "slower than"
    return "no different from (the spreads overlap)"


def state_ms(e, state):
    """A compile record's milliseconds in a cache state: the median of its repetitions, or None where
    it has no number (absent, or a sentence saying why)."""
    v = e["figures"].get(state)
    return median_of(v) if isinstance(v, list) else v if isinstance(v, (int, float)) else None


def experiments(doc, records, jit_costs=None, bench=None, python=None, interleaved=None, fresh=None):
    """The articles' experiments (bench/python/cdl_peers/articles_*.py): whether each example runs as
    written, what a new op costs to compile in each system and cache state (beside this suite's
    routes), and every record."""
    if not records:
        return
    examples = [e for e in records if e.get("claim") == "example" or e.get("claim") == "A1"]
    if examples:
        systems = python.systems if python else {}
        versions = ", ".join(
            f"{NAMES.get(name, name)} {s.get('version', '?')}"
            for name, s in sorted(systems.items())
            if s.get("status") == "ran" and name != "cuda_python"
        )
        doc.add(
            f"Does each article's example run as written ({versions or 'the systems installed'}, on this"
            " machine)? Each is the article's code in its own system, validated where it runs:\n"
        )
        doc.add(
            table(
                ["article", "example", "system", "result"],
                [
                    [e.get("article", "?"), e["name"], e.get("system", "?"), outcome(e)]
                    for e in sorted(examples, key=lambda e: (e.get("article", ""), e["name"]))
                ],
            )
        )
    compiles = [e for e in records if e.get("claim") in ("compile", "C1") and e["runs"]]
    if compiles:
        doc.add(
            "What a new op costs to compile from Python, by cache state (host time to a loaded kernel, first"
            " call included where the system compiles at the first call; medians of three; a route with no"
            " compile, the time to its first result):\n"
        )
        states = ("fresh_process_ms", "new_source_ms", "disk_hit_ms", "memory_hit_ms")
        rows = []
        for e in compiles:
            cells = []
            for state in states:
                v, ms = e["figures"].get(state), state_ms(e, state)
                cells.append(v if isinstance(v, str) else "–" if ms is None else f"{ms:.2f} ms")
            if isinstance(e["figures"].get("import_ms"), (int, float)):
                cells[0] += f" (after {e['figures']['import_ms']:.0f} ms of import and context)"
            first = e["figures"].get("first_result_ms")
            if isinstance(first, (int, float)):  # a route with no compile: its new op's first result
                cells[1] = f"no compile: {first:.2f} ms to the first result" + "".join(
                    f", {e['figures'][key]:.2f} ms of it {what}"
                    for key, what in (
                        ("encode_ms", "writing the program"),
                        ("module_load_ms", "loading the file"),
                    )
                    if isinstance(e["figures"].get(key), (int, float))
                )
            rows.append([e.get("system", "?"), e["name"], *cells])
        # The C++ routes: the JIT section's interleaved figures, with their spreads, where the run has
        # them (one figure per stage in the report); else those timed in the peers' run, else the JIT
        # section's. spreads: (low, high) of each, p10–p90 or the repetitions' min–max.
        inter = interleaved or {}
        same_run = not inter and python is not None and bool(python.cpp_stages)
        spreads = {}
        if same_run:
            cpp = {key: stage_ms(python.cpp_stages, stage) for key, stage, _ in CPP_NEW_OP}
            for key, stage, _ in CPP_NEW_OP:
                reps = next(
                    (row.get("reps") for n, row in python.cpp_stages.items() if n.startswith(stage)), None
                )
                if reps:
                    spreads[key] = (min(reps) / 1000, max(reps) / 1000)
        else:
            cpp = {key: (jit_costs or {}).get(key) for key, _, _ in CPP_NEW_OP}
            for key, route in ROUTE_OF.items():
                if route in inter:
                    spreads[key] = (inter[route]["p10"], inter[route]["p90"])
                    cpp[key] = inter[route]["p50"]
        for key, _, how in CPP_NEW_OP:
            if inter and ROUTE_OF.get(key) in inter and key != "one-line kernel":
                how = (
                    f"`{ROUTE_OF[key]}` (the JIT section's interleaved routes): from the op's text to a"
                    " 2^20 map's result"
                )
            if cpp.get(key):
                where = (
                    f" (p10–p90 {spreads[key][0]:.1f}–{spreads[key][1]:.1f})"
                    if inter and key in spreads
                    else ""
                )
                first = (fresh or {}).get(ROUTE_OF.get(key))
                rows.append(
                    [
                        "this suite (C++)",
                        how,
                        f"{first[0]:.1f} ms" if first else "–",
                        f"{cpp[key]:.2f} ms{where}",
                        "–",
                        "–",
                    ]
                )
        doc.add(
            table(
                [
                    "system",
                    "how",
                    "first op of a new process",
                    "new source",
                    "its disk cache",
                    "its memory cache",
                ],
                rows,
            )
        )
        peers = {
            e.get("system"): state_ms(e, "new_source_ms")
            for e in compiles
            if e.get("system") in ("cupy", "numba")
        }
        tiers = [(key, name) for key, name in TIERS_08 if cpp.get(key) and key in spreads]
        peer_ranges = {}
        for e in compiles:
            v = e["figures"].get("new_source_ms")
            if e.get("system") in ("cupy", "numba") and isinstance(v, list) and v:
                peer_ranges[e.get("system")] = (min(v), max(v))
        if tiers and "one-line kernel" in spreads and peer_ranges:
            rivals = {
                "NVRTC's one-line floor": (cpp["one-line kernel"], spreads["one-line kernel"]),
                **{f"{k}'s new source": (peers[k], r) for k, r in peer_ranges.items()},
            }
            text = (
                "All of these ran in one run (cdl_peers times the C++ suite's new-op stages with cdl_bench"
                " before the peers)."
                if same_run
                else "The C++ figures are the JIT section's, every route interleaved; the peers' ran in the"
                " peers' phase of the same run."
            ) + " A difference is one only where the two spreads do not overlap."
            for key, name in tiers:
                text += (
                    f" {name} compiles and loads a new op in {cpp[key]:.1f} ms: "
                    + "; ".join(
                        f"{against(spreads[key], r)} {rival} ({ms:.1f} ms)"
                        for rival, (ms, r) in rivals.items()
                    )
                    + "."
                )
            doc.add(text + "\n")
        elif jit_costs and bench is not None and python is not None:
            jit_peers = [e for e in compiles if e.get("system") in ("cupy", "numba")]
            fresh = all("constant" in e["figures"] for e in jit_peers)
            doc.add(
                (
                    "CuPy's and Numba's new sources each have a constant no cache has seen, which reaches the"
                    " machine code (a new comment alone is answered by NVRTC's cache, which keys on what its"
                    " front end makes). "
                    if fresh
                    else (
                        "**These peers' new sources differ by a comment only** (a run from before they had"
                        " new constants): NVRTC's cache, which keys on what its front end makes, may have"
                        " answered them. "
                    )
                )
                + "The C++ rows are this report's JIT section's new-op medians, measured at"
                f" {bench.context.get('date', '?')[:16]}, the peers at"
                f" {python.bench.context.get('date', '?')[:16]}: this host's speed moves by tens of per"
                " cent between runs, so a difference smaller than that is not a finding.\n"
            )
    doc.add(
        "Every experiment of the articles' claims, by claim (the claims table below reads its figures):\n"
    )
    doc.add(
        table(
            ["claim", "system", "experiment", "result"],
            [[e.get("claim", "?"), e.get("system", "?"), e["name"], outcome(e)] for e in records],
        )
    )
