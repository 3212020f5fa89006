"""The lookups the report's sections share, below every section so that none borrows from another:
the template every ratio is set against, the dispatch sweep and its ratios, a jit/ stage's time and
counters, a map kernel's resources (and what they say in words), and a profiled kernel's waits."""
from collections import defaultdict

from .stats import compare, mode

TEMPLATE = "01_template_functor"  # the static case every ratio is set against
BASE = TEMPLATE + "/vec"  # its vec form: what the dispatch sweep's ratios are over


# --- The dispatch sweep -------------------------------------------------------------------------


def k_sweep(bench):
    """{op: {k: {entry: median}}} for the dispatch sweep (f32, the most common n among k > 1)."""
    runs = [(f, e) for f, e in bench.select("map", type="f32") if f.get("k") not in (None, "1")]
    if not runs:
        return None, {}
    n = mode(f["n"] for f, _ in runs)
    sweep = defaultdict(dict)
    for f, e in bench.select("map", type="f32", n=n):
        sweep[f["op"]][int(f["k"])] = {entry: row["median"] for entry, row in e.items()}
    return int(n), sweep


def penalties(bench, n, noise, op=None):
    """{(op, k): {entry: (time / the template's, finding?)}} of the vec forms at n elements."""
    out = {}
    for f, es in bench.select("map", type="f32", n=n):
        if (op and f["op"] != op) or BASE not in es:
            continue
        out[(f["op"], int(f["k"]))] = {
            e: compare(es[BASE], row, noise)[::2] for e, row in es.items() if e.endswith("/vec") and e != BASE
        }
    return out


# --- The jit/ stages (bench/jit_stages.cpp) ----------------------------------------------------


def stage_row(stages, prefix):
    return next((row for n, row in stages.items() if n.startswith(prefix)), None)


def stage_ms(stages, prefix):
    row = stage_row(stages, prefix)
    return row["median"] / 1000 if row else None


def stage_counter(stages, prefix, counter):
    """A counter of a stage (median over its repetitions), or None where the run did not record it."""
    row = stage_row(stages, prefix)
    return row.get("counters", {}).get(counter) if row else None


# --- A map kernel's resources (resources.json) -------------------------------------------------

# How each strategy's float map kernel for the quadratic op is named in the build: the invoker in its
# template arguments (or the op's own kernel, for 00 and the hoisted switch). The run-time compiled
# kernels (06, 07, 08) are found by their records' registry entry, op and type (JIT_ENTRIES).
MAP_INVOKER = {
    "00_inline": "",
    "01_template_functor": "cdl::ops::quadratic>",
    "02_device_lambda": "cdl::ops::quadratic>",
    "03_switch": "switch_invoker",
    "03_switch.hoisted": "",
    "04_function_pointer.symbol": "pointer_invoker",
    "04_function_pointer.crowded": "pointer_invoker",
    "04_function_pointer.table": "table_invoker",
    "05_virtual": "virtual_invoker",
    "05_virtual.crowded": "virtual_invoker",
    "12_variant_visit": "variant_invoker",
}


JIT_ENTRIES = (
    "06_nvrtc_jit",
    "06_nvrtc_jit.fast_compile",
    "07_jit_lto",
    "07_jit_lto.preoptimised",
    "08_expression_jit",
    "08_expression_jit.baseline",
)


def map_kernel(resources, entry, op="quadratic"):
    """The resource record of an entry's float map kernel (of op where the kernel is per op),
    e.g. '04_function_pointer.crowded/scalar'; None when the build does not have it."""
    if not resources:
        return None
    for k in resources["kernels"]:
        if k.get("entry") == entry and k.get("op") == op and k.get("type") == "f32":
            return k
    lab, form = entry.split("/")
    strategy, _, variant = lab.partition(".")
    if lab not in MAP_INVOKER:
        return None
    # 04 and 05 are compiled once per workload (strategies/suite/one_workload.hpp), and whole as `crowded`.
    part = (
        ("crowded" if variant == "crowded" else "map")
        if strategy in ("04_function_pointer", "05_virtual")
        else None
    )
    # The suite's form of a strategy is strategies/suite/NN_<name>.cu (strategies/NN_<name>.cu before
    # the lessons took that name: older results say so).
    sources = (
        {f"strategies/{strategy}.{part}.cu"}
        if part
        else {f"strategies/suite/{strategy}.cu", f"strategies/{strategy}.cu"}
    )
    names = {
        "00_inline": f"map_quadratic_{form}<float>",
        "03_switch.hoisted": f"map_hoisted_kernel<float, (cdl::map_form){0 if form == 'scalar' else 1}>",
    }
    want = names.get(lab, f"map_{form}_kernel<float")
    for k in resources["kernels"]:
        if k["source"] in sources and want in k["name"] and MAP_INVOKER[lab] in k["name"]:
            return k
    return None


def short_kernel(name):
    """'void cdl::skeleton::map_vec_kernel<float, X>(args)' -> 'map_vec_kernel<float, X>', without
    namespaces."""
    head = name.replace("(anonymous namespace)", "{anon}")
    head = head[5:] if head.startswith("void ") else head
    depth, cut = 0, len(head)
    for i, ch in enumerate(head):  # strip the argument list at top level
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            cut = i
            break
    head = head[:cut]
    for junk in ("cdl::skeleton::", "cdl::{anon}::", "{anon}::", "cdl::ops::", "cdl::"):
        head = head.replace(junk, "")
    return head


def occupancy_missing(resources):
    """Why the report has no occupancy, or for which kernels not, in a sentence; None when every
    kernel has it (or there is no resources.json, which its section says)."""
    if not resources:
        return None
    if resources.get("occupancy_missing"):
        return f"`resources.json` has none ({resources['occupancy_missing']})"
    without = [k for k in resources["kernels"] if k.get("occupancy") is None]
    if not without:
        return None
    names = ", ".join(f"`{short_kernel(k['name'])}` ({k['source']})" for k in without[:5])
    more = f" and {len(without) - 5} more" if len(without) > 5 else ""
    return (
        f"`resources.json` has none for {len(without)} of {len(resources['kernels'])} kernels: {names}{more}"
    )


DEMONSTRATION = ".crowded/"  # 04 and 05 compiled whole (strategies/suite/one_workload.hpp), to show the cost


def fact_phrases(k):
    """A kernel's resources as phrases: calls, registers, occupancy, spills, stack frame."""
    return [
        *([] if k.get("indirect_calls") is None else [f"{k['indirect_calls']} calls through a register"]),
        f"{k.get('registers')} registers",
        *(
            []
            if k.get("occupancy") is None
            else [f"{k['blocks_per_sm']} blocks of {k['block']} per SM ({k['occupancy']:.2f} occupancy)"]
        ),
        f"{k.get('spill_stores', 0)} B of spill stores",
        f"{k.get('stack', 0)} B stack frame",
    ]


def kernel_facts(k):
    """A kernel's resources as a phrase."""
    return ", ".join(fact_phrases(k))


def kernels_facts(named):
    """Several kernels' resources as one phrase, [(name, kernel)]: what differs, kernel by kernel, then
    what they share, so that the difference reads first."""
    phrases = [fact_phrases(k) for _, k in named]
    shared = [p for p in phrases[0] if all(p in other for other in phrases[1:])]
    own = [
        f"`{name}`: " + ", ".join(p for p in mine if p not in shared)
        for (name, _), mine in zip(named, phrases)
        if len(mine) > len(shared)
    ]
    common = ("both " if len(named) == 2 else "each ") + ", ".join(shared) if shared else ""
    return "; ".join(own + ([common] if common else []))


# --- A profiled kernel's waits (profile.json) --------------------------------------------------

NOT_WAITING = ("selected", "not_selected")


def waits(k, top=3):
    """The top waiting reasons, 'name share' each."""
    w = [(r, s) for r, s in k["stalls"].items() if r not in NOT_WAITING]
    return ", ".join(f"{r} {s:.0%}" for r, s in w[:top]) or "–"


def top_wait(k):
    return next(((r, s) for r, s in k["stalls"].items() if r not in NOT_WAITING), ("–", 0.0))
