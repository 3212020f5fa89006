"""The articles' own systems (CuPy, Numba, runtime-compiled source from Python) beside the C++
strategies, problem by problem."""
from ..document import fmt_time, of_copy, of_copy_note, pow2, table
from ..results import label
from ..stats import compare
from ..experiments import NAMES, state_ms
from ..queries import stage_ms
from .python_experiments import experiments

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


def find(bench, python, noise=None):
    """{"ratio": {(workload, fields, peer): its time / the C++ kernel of the same form (None without
    one)}, "first_ms": {the same: its first call, compile included}} of every peer's problem,
    "own": own_function()'s, each system's own function against the template, and "left_out": whether
    the run left the experiments (a new op's compiles among them) to a full run."""
    found = {
        "ratio": {},
        "first_ms": {},
        "own": own_function(bench, python, noise),
        "left_out": bool(python and python.experiments_left_out),
    }
    for (workload, fields), entries in sorted(python.bench.problems.items()) if python else ():
        same = bench.problems.get((workload, fields), {}).get(CPP_SAME_FORM.get(workload, ""))
        for entry, row in entries.items():
            found["ratio"][(workload, fields, label(entry))] = (
                row["median"] / same["median"] if same else None
            )
            found["first_ms"][(workload, fields, label(entry))] = row["counters"].get("first_call_ms")
    return found


def add(doc, bench, python, jit_costs=None, interleaved=None, fresh=None):
    """Renders the section from the results and the run-time compilation's costs."""
    doc.add("## The articles' own systems: CuPy, Numba, runtime-compiled source from Python\n")
    if python is None:
        doc.add(
            "No `python.json` beside the results (or it was set aside, as the report's head says): the Python"
            " peers did not run. `scripts/bench.sh --phases peers` runs them (CuPy, Numba, cuda-python,"
            " PyCUDA, each where it is installed); the claims below that they answer are *not measured*.\n"
        )
        return
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
        base_name = base_entry(workload, cpp)
        base = cpp.get(base_name)
        best_entry = min(cpp, key=lambda e: cpp[e]["median"]) if cpp else None
        rows = []
        for entry, row in sorted(entries.items(), key=lambda kv: kv[1]["median"]):
            c = row["counters"]
            ratio = row["median"] / base["median"] if base else None
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
    own_function_table(
        doc,
        bench,
        python,
        (jit_costs or {}).get("08 compile")
        if interleaved
        else stage_ms(python.cpp_stages, "jit/compile/08/new_op"),
    )
    experiments(doc, python.experiments, jit_costs, bench, python, interleaved, fresh)


OWN_HEADING = "From Python, my own elementwise function"


def event_gaps(python):
    """What an event pair with nothing between took on each event-timed system, from the run."""
    gaps = {n: s["event_gap_us"] for n, s in python.systems.items() if s.get("event_gap_us") is not None}
    if not gaps:
        return "this `python.json` does not say what an event pair alone takes (written before it did)"
    return "an event pair with nothing between took " + ", ".join(
        f"{fmt_time(v)} ({NAMES.get(n, n)})" for n, v in sorted(gaps.items(), key=lambda kv: kv[1])
    )


def own_function(bench, python, noise=None):
    """Each Python system that ran the map with a C++ template beside it: its fastest way, as a
    fraction of copy and × the template (01's vec form) on the memory-bound map (quadratic, k = 1,
    the largest n) and, for the worst op of the catalogue, at the largest k > 1 run; and a new op's
    cost (a warm process, and a new process's first op). {system: {...}}, and that k (None where no
    system ran the map at k > 1 beside a C++ template). With the noise, each ratio carries its finding
    (stats.compare: None where the repetitions cannot decide) after its other fields."""
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
            finding = compare(base, row, noise)[2] if noise is not None else True
            per.setdefault(system, []).append((f, median / base["median"], way, row, finding))
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
            and (
                first[1],
                first[3]["counters"].get("GB/s", float("nan")) / bench.copy_gbs,
                first[0]["n"],
                first[4],
            ),
            "top": worst and (worst[1], worst[0]["op"], worst[4]),
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
