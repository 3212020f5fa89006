"""The articles' experiments from Python (cdl_peers/experiments/): whether each example
runs as written, and what a new op costs to compile in each system and cache state, beside this
suite's routes."""
from ..document import table
from ..experiments import NAMES, outcome, state_ms
from ..queries import stage_ms


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


def experiments(doc, records, jit_costs=None, bench=None, python=None, interleaved=None, fresh=None):
    """The articles' experiments (cdl_peers/experiments/): whether each example runs as
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
