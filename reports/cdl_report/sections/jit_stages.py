"""The jit/ stages of bench/jit_stages.cpp as the report reads them: what answers each (its cache
state), a stage's time and counters, the interleaved new-op benchmark's routes with their spread, a
new process's first result, and a cost in NVRTC's floor."""
from ..document import fmt_time
from ..queries import stage_row

# What answers each stage, by the state in its name (bench/jit_stages.cpp).
ANSWERED_BY = {
    "new_op": "nothing: a text no cache has seen, every iteration",
    "same_text": "NVRTC's own cache, through the driver, where there is one",
    "same_inputs": "nvJitLink's own cache, through the driver, where there is one",
    "cache_memory_hit": "this project's cache, in memory",
    "cache_disk_hit": "this project's cache, on disk",
    "cache_disk_hit_fresh_process": "this project's cache, on disk, in a new process",
    "load": "(loading a CUBIN: no compile)",
}


def assembled_by_driver(stages):
    """Whether 08's PTX is assembled by the driver at the load (jit/load/08_ptx), as it is now, or
    by nvJitLink before the load (jit/link/08_ptx_to_cubin), as in runs before that change."""
    return any(n.startswith("jit/load/08_ptx") for n in stages)


def answered_by(name, by_driver):
    """What answers a stage: its cache state's usual answer; 08 has no C++ compiler, and libNVVM keeps no
    cache, so only its PTX step can be answered (by the cache of what assembles it)."""
    state = state_of(name)
    if state == "same_text" and "/08/" in name:
        if by_driver:
            return (
                "the driver's own cache for the PTX it assembles at the load, where there is one (libNVVM"
                " keeps none)"
            )
        return (
            "nvJitLink's own cache for the PTX step, through the driver, where there is one (libNVVM keeps"
            " none)"
        )
    return ANSWERED_BY.get(state, "(its name gives no cache state)")


def state_of(name):
    return next((s for s in ANSWERED_BY if f"/{s}" in name or name.startswith(f"jit/{s}")), "?")


# The routes from a new op's text to its first result (bench/jit_stages.cpp's interleaved benchmark and
# new-process probes), by the name it gives them, and the registry's way each is.
ROUTES = {
    "06": "06_nvrtc_jit",
    "06_fast_compile": "06_nvrtc_jit.fast_compile",
    "07": "07_jit_lto",
    "08": "08_expression_jit",
    "08_baseline": "08_expression_jit.baseline",
    "16": "16_interpreter",
    "17": "17_copy_and_patch",
    "10": "10_tiered_dispatch.expression",
    "one_line_kernel": "NVRTC's one-line kernel (no load, no launch)",
}


def interleaved(stages):
    """{route: {"p10", "p50", "p90" (ms), "x_floor" (its p50)}} from the run's interleaved new-op
    benchmark, every route's compile in turn in one process; {} for a run without it."""
    row = stage_row(stages, "jit/interleaved/new_op")
    if not row:
        return {}
    c = row["counters"]
    return {
        r: {q: c[f"{r}_{q}_ms"] for q in ("p10", "p50", "p90")} | {"x_floor": c.get(f"{r}_x_floor_p50")}
        for r in ROUTES
        if f"{r}_p50_ms" in c
    }


def spread(route):
    """'38.3 ms (p10–p90 35.1–44.0 ms)' of an interleaved route."""
    ms = lambda v: fmt_time(1000 * v)  # noqa: E731
    return f"{ms(route['p50'])} (p10–p90 {ms(route['p10'])}–{ms(route['p90'])})"


def overlap(a, b):
    """Whether two interleaved routes' p10–p90 ranges overlap: a difference inside the spread."""
    return a["p10"] <= b["p90"] and b["p10"] <= a["p90"]


def first_in_process(stages, eager=False):
    """{route: (median, min, max) ms over the repetitions} of a new process's first result through each
    route (jit/first_result_in_process/; with `eager`, the runtime loading every kernel with the
    context, before the clock: jit/first_result_in_process_eager/)."""
    out = {}
    prefix = "jit/first_result_in_process" + ("_eager/" if eager else "/")
    for name, row in stages.items():
        if name.startswith(prefix):
            out[name.split("/")[2]] = tuple(
                row.get(q, row["median"]) / 1000 for q in ("median", "min", "max")
            )
    return out


def times_floor(c, route):
    """A route's cost in NVRTC's floor (a new one-line kernel), and how it was measured: each iteration's
    ratio to a floor compiled beside it (x_floor, bench/jit_stages.cpp) where the run paired them, else
    the ratio of the two stages' medians."""
    paired = c.get(f"{route} x floor")
    if paired:
        return (
            paired,
            (
                "paired: each iteration against a one-line kernel compiled beside it,"
                f" {c[f'{route} floor']:.0f} ms"
            ),
        )
    if c[route] and c["one-line kernel"]:
        return c[route] / c["one-line kernel"], "the ratio of the two medians, measured apart"
    return None, ""


# A new op's cost for each route that runs an op typed at run time: the stages it pays, summed
# (bench/jit_stages.cpp). 16's is its text to a first result, a launch included, so its one-time
# cost is not understated.
NEW_OP = {
    "06_nvrtc_jit": ("jit/compile/06/new_op", "jit/load/06/"),
    "07_jit_lto": ("jit/compile/07_op_ltoir/new_op", "jit/link/07/new_op"),
    "08_expression_jit": ("jit/compile/08/new_op",),  # its compile and its load
    "08_expression_jit.baseline": ("jit/compile/08_baseline/new_op",),
    "16_interpreter": ("jit/first_result/16/new_op",),  # no compile: its text to a map's result
    "17_copy_and_patch": ("jit/first_result/17/new_op",),  # no compile: patched, loaded, launched
}


def new_op_costs(stages):
    """{way: (low, median, high) ms} of a new op through each NEW_OP way: the interleaved benchmark's
    p10, p50 and p90 where the run has it, else its stages' min, median and max summed; a way whose
    stages the run lacks is left out."""
    spreads = {ROUTES[r]: v for r, v in interleaved(stages).items()}
    out = {}
    for way, names in NEW_OP.items():
        if way in spreads:
            out[way] = tuple(spreads[way][q] for q in ("p10", "p50", "p90"))
            continue
        rows = [stage_row(stages, name) for name in names]
        if None not in rows:
            out[way] = tuple(
                sum(r.get(q, r["median"]) for r in rows) / 1000 for q in ("min", "median", "max")
            )
    return out


def same_text_cause(stages, uncached):
    """Whether the same text's shorter compile is the driver's cache, by the run with the caches off:
    it is where the same text then takes longer than any repetition took with them on."""
    on = stage_row(stages, "jit/compile/06/same_text")
    off = stage_row(uncached.stages, "jit/compile/06/same_text") if uncached else None
    if not on or not off:
        return ": whether that is the compiler's cache, no run with the caches off says"
    if off["median"] > on.get("max", on["median"]):
        return (
            f"; with the caches off (`CUDA_CACHE_DISABLE=1`) it takes {off['median'] / 1000:.0f} ms: that is"
            " the compiler's cache, not the compiler"
        )
    return (
        f"; with the caches off it takes {off['median'] / 1000:.0f} ms, inside the range it took with them"
        " on: not the driver's cache"
    )
