"""The claims of the source articles (shared/seeds/README.md), each answered from the data: a row per
claim, its verdict computed by the rule written beside it."""
from .document import table
from .stats import span


def verdict_ratio(values, noise, holds_if_below=True):
    """'holds' when every ratio is beyond the noise in the claimed direction, 'does not hold' when every
    one is beyond it the other way, else 'depends'."""
    if not values:
        return "no data"
    better = [v < 1 - noise for v in values] if holds_if_below else [v > 1 + noise for v in values]
    worse = [v > 1 + noise for v in values] if holds_if_below else [v < 1 - noise for v in values]
    return "holds" if all(better) else "does not hold" if all(worse) else "depends"


def fact(facts, fid):
    for f in (facts or {}).get("facts", []):
        if f.get("id") == fid:
            return f
    return None


def compiles(f, compiler):
    v = (f or {}).get(compiler)
    return None if v is None else bool(v.get("compiles"))


def python_ratios(found, peer):
    """{problem text: time / C++ same form} of one Python peer."""
    return {f"{w} {dict(f).get('op', dict(f).get('layout', ''))} {dict(f).get('type', '')}".strip(): x
            for (w, f, p), x in found["python"]["ratio"].items() if p == peer and x}


def numba_switch(found):
    sw, fn = python_ratios(found, "numba.op_switch"), python_ratios(found, "numba.device_function")
    both = [sw[k] / fn[k] for k in sw if k in fn and k.startswith("map")]
    return f" Numba: the if/elif kernel takes {span(both)}× the time of the kernel calling one device function." if both else ""


def python_source_text(found):
    parts = []
    for peer, what in (("cuda_python.nvrtc", "NVRTC through cuda-python"), ("cupy.RawKernel", "CuPy's RawKernel"),
                       ("pycuda.SourceModule", "PyCUDA's SourceModule")):
        ratios = python_ratios(found, peer)
        first = [v for (w, f, p), v in found["python"]["first_ms"].items() if p == peer and v]
        if ratios:
            parts.append(f"{what}: first call {span(first, '{:.0f}')} ms, then {span(list(ratios.values()))}× the C++ same-form time")
    return (" From Python, " + "; ".join(parts) + ".") if parts else ""


def add(doc, bench, facts, found, python):
    noise = found["noise"]
    rows = []
    no_python = ("no data", "Needs the Python peers' results (bench/python); none beside this run.")
    numba = (python.systems.get("numba", {}) if python else {})

    njit = python.experiment("an @njit function as a kernel argument") if python else None
    if njit:
        works = [e["name"] for e in python.experiments if e["runs"] and e.get("valid") and "factory" not in e["name"]]
        rows.append(["000", "An `@njit` function can be passed as a kernel argument", f"Numba {numba.get('version', '')}",
                     "holds" if njit["runs"] and njit.get("valid") else "does not hold",
                     ("It runs and validates" if njit["runs"] else f"`{njit['error'].splitlines()[0][:160]}`") +
                     (f". What does run: {'; '.join(works)}." if works else ".")])
    else:
        rows.append(["000", "An `@njit` function can be passed as a kernel argument", "Numba",
                     *(no_python if not numba else ("no data", f"Numba {numba.get('status')}: {numba.get('reason', '')}"))])

    staged = found["other"].get("staged", {})
    v = verdict_ratio(list(staged.values()), noise)
    rows.append(["000, 002", "Staging elementwise data in shared memory improves performance (incl. vector add)",
                 "map/zip `staged` against `scalar`, largest n", v,
                 ", ".join(f"{w} {op} {e.split('/')[0]}: ×{x:.3f}" for (w, op, e), x in sorted(staged.items())) or "–"])

    costs = found["jit"].get("costs", {})
    best = found["map"].get("best", {})
    jit_ratio = None
    if "06_nvrtc_jit" in best and "01_template_functor" in best:
        jit_ratio = best["01_template_functor"][1] / best["06_nvrtc_jit"][1]
    if costs.get("first compile, new process"):
        text = (f"A JIT pays {costs['first compile, new process']:.1f} ms for a new op's first compile in a new process, "
                f"{costs['compile']:.1f} ms "
                f"for later ones, {costs['disk hit (fresh process)']:.2f} ms for a disk-cache hit; a pre-compiled "
                "kernel pays none of it")
        if jit_ratio:
            text += f", and afterwards the JIT kernel runs at {jit_ratio:.3f}× the template's time"
        factory = python.experiment("kernel factory") if python else None
        numba_first = [v for (w, f, p), v in found["python"]["first_ms"].items() if p.startswith("numba.") and v]
        if numba_first:
            text += f". Numba compiles at a kernel's first call: {span(numba_first, '{:.0f}')} ms here"
            if factory and "reuse_ms" in factory:
                text += f"; a factory's second call with the same function takes {factory['reuse_ms']:.2f} ms"
        rows.append(["000", "A pre-compiled function avoids the overhead of dynamic compilation", "`jit/` stages, map",
                     "holds", text + "."])
    else:
        rows.append(["000", "A pre-compiled function avoids the overhead of dynamic compilation", "`jit/` stages", "no data", "–"])

    pen = found["dispatch"].get("penalty", {})
    vs_indirect, vs_static = [], []
    for (op, k), p in pen.items():
        sw = p.get("03_switch/vec")
        ind = [x for c, x in p.items() if c.startswith(("04_", "05_"))]
        if sw and ind:
            vs_indirect.append(sw / min(ind))
        if sw:
            vs_static.append(sw)
    if vs_indirect:
        v_ind, v_st = verdict_ratio(vs_indirect, noise), verdict_ratio(vs_static, noise)
        v = "holds" if v_ind == v_st == "holds" else "does not hold" if v_ind == "does not hold" else "depends"
        rows.append(["001", "If/else selection on an op id is \"far more efficient\" than the alternatives",
                     "map dispatch sweep, vec forms", v,
                     f"switch / fastest indirect call: {min(vs_indirect):.2f}–{max(vs_indirect):.2f}× over the ops and k; "
                     f"switch / template functor: {min(vs_static):.2f}–{max(vs_static):.2f}× (the template and the JIT "
                     "are the efficient alternatives)." + numba_switch(found)])
    tasks = found["tasks"]
    per_element = {e: w for e, w in tasks.get("worst", {}).items() if e.endswith("/per_element")}
    failed_tasks = [n for n, _ in bench.errors if n.startswith("tasks/")]
    if per_element:
        rows.append(["001", "A per-element task array can pick the op per element", "tasks workload, validated",
                     "does not hold" if failed_tasks else "holds",
                     f"{len(per_element)} per-element implementations validated; their worst layout costs "
                     f"{min(per_element.values()):.2f}–{max(per_element.values()):.2f}× the uniform one (divergence)."])
    gg, gl = fact(facts, "global_calls_global"), fact(facts, "global_launches_global")
    if gg:
        nvcc, nvrtc = compiles(gg, "nvcc"), compiles(gg, "nvrtc")
        text = f"nvcc: {'accepts' if nvcc else 'refuses' if nvcc is not None else 'not run'} a kernel called like a function"
        if nvcc is False:
            first = next((l for l in gg["nvcc"]["log"].splitlines() if "error" in l), "")
            text += f" (`{first.split('error:')[-1].strip()}`)"
        text += f"; NVRTC {'accepts it (and inlines the callee as a device function)' if nvrtc else 'refuses it'}"
        if gl:
            text += f"; a launch from a kernel (dynamic parallelism, `-rdc`) {'compiles' if compiles(gl, 'nvcc') else 'does not compile'} with nvcc"
        rows.append(["001", "A kernel may call other kernels as functions", "build probes (`cdl_build_facts`)",
                     "does not hold" if nvcc is False else "holds" if nvcc else "no data", text + "."])
    if jit_ratio and pen:
        sw = [p.get("03_switch/vec") for p in pen.values() if p.get("03_switch/vec")]
        rows.append(["002", "Runtime-compiled C++ source is *the* way to get run-time-chosen logic into a kernel",
                     "06 against 01 and 03/04/05", "depends",
                     f"The JIT runs at {jit_ratio:.3f}× the template's time, but a switch, function pointers and virtual "
                     f"calls also take a run-time choice without a compiler, at {min(sw):.2f}–{max(sw):.2f}× (switch) in the "
                     "dispatch sweep: the JIT is the way when the op is not known at build time or the call is hot." +
                     python_source_text(found)])
    ufunc, elementwise = python_ratios(found, "cupy.ufunc_chain"), python_ratios(found, "cupy.ElementwiseKernel")
    if ufunc or elementwise:
        ratios = list(ufunc.values()) + list(elementwise.values())
        fast = [x <= 1 + noise for x in ratios]
        rows.append(["003", "CuPy ufunc chains and `ElementwiseKernel` are a fast path", "CuPy, against C++ `01_template_functor/scalar`",
                     "holds" if all(fast) else "does not hold" if not any(fast) else "depends",
                     "Time / the C++ template functor's one-element-per-thread kernel: ufunc chain " +
                     ", ".join(f"{k} {v:.2f}×" for k, v in ufunc.items()) + "; ElementwiseKernel " +
                     ", ".join(f"{k} {v:.2f}×" for k, v in elementwise.items()) +
                     ". A chain of operators is a kernel and a temporary per operator."])
    else:
        rows.append(["003", "CuPy ufunc chains and `ElementwiseKernel` are a fast path", "CuPy",
                     *(no_python if not python else ("no data", "CuPy: " + python.systems.get("cupy", {}).get(
                         "reason", "not among the systems run")))])
    prec = found["precision"]
    if prec:
        v = verdict_ratio(list(prec.values()), noise, holds_if_below=False)
        rows.append(["003", "float32 matters for performance", "map, f64 against f32", v,
                     "; ".join(f"{kind} ({op}, k = {k}): f64 takes {x:.2f}× per element" for (kind, op, k), x in sorted(prec.items())) + "."])
    gd = fact(facts, "global_calls_device")
    if gd:
        nvcc = compiles(gd, "nvcc")
        rows.append(["004", "A `__global__` function cannot call a `__device__` function directly",
                     "build probe; every skeleton", "does not hold" if nvcc else "holds" if nvcc is False else "no data",
                     f"nvcc {'compiles' if nvcc else 'refuses'} it, NVRTC {'compiles' if compiles(gd, 'nvrtc') else 'refuses'} it; "
                     "every kernel of this suite calls its op as a device function."])
    aos = found["other"].get("aos_soa", {})
    aos_fact = fact(facts, "aos_struct")
    if aos:
        rows.append(["004", "Struct (AoS) data needs special handling", "points workload; build probe",
                     "does not hold" if (compiles(aos_fact, "nvcc") is not False) else "holds",
                     f"The same skeleton takes both layouts, validated; AoS / SoA time {min(aos.values()):.2f}–{max(aos.values()):.2f}× "
                     "(a cost of layout, not a need for special code)."])
    doc.add("## The articles' claims, checked\n")
    doc.add("Each claim of `shared/seeds/` with the measurement or build that answers it. The verdict is computed: "
          f"*holds* when every figure is beyond the {noise:.1%} noise in the claimed direction, *does not hold* when every "
          "one is beyond it the other way, *depends* otherwise.\n")
    doc.add(table(["article", "claim", "answered by", "verdict", "figures"], rows))
    return rows
