"""The claims of the source articles (shared/seeds/README.md), ids A1-E3, each answered from the
data by a rule written beside it. A rule is a function of the figures: it returns the system the
figures come from, the figures, and a verdict, one of

    holds | does not hold | depends | not measured

"not measured" is itself computed: the figures the rule needs are not in the results (the article's
own system was not run, or the experiment does not exist yet), and the row says what is missing.
A row answered in another system than the article's says so."""
from dataclasses import dataclass
from types import SimpleNamespace

from .document import table
from .stats import span

HOLDS, FAILS, DEPENDS, UNMEASURED = "holds", "does not hold", "depends", "not measured"


@dataclass
class Claim:
    id: str
    article: str
    quote: str
    system: str  # the article's own system
    rule: str    # the verdict's rule, as the report prints it
    answer: callable  # data -> (answered in, figures, verdict)


def direction(ratios, noise, holds_if_below=True):
    """HOLDS when every ratio is beyond the noise in the claimed direction, FAILS when every one is
    beyond it the other way, DEPENDS otherwise; UNMEASURED without ratios."""
    if not ratios:
        return UNMEASURED
    below = [r < 1 - noise for r in ratios]
    above = [r > 1 + noise for r in ratios]
    better, worse = (below, above) if holds_if_below else (above, below)
    return HOLDS if all(better) else FAILS if all(worse) else DEPENDS


def fact(facts, fid):
    return next((f for f in (facts or {}).get("facts", []) if f.get("id") == fid), None)


def compiles(f, compiler):
    v = (f or {}).get(compiler)
    return None if v is None else bool(v.get("compiles"))


def peer_ratios(d, peer):
    """{problem: time / the C++ same-form entry} of one Python peer."""
    return {f"{w} {dict(f).get('op', dict(f).get('layout', ''))} {dict(f).get('type', '')}".strip(): x
            for (w, f, p), x in d.found["python"]["ratio"].items() if p == peer and x}


def experiments(d, start):
    return [e for e in (d.python.experiments if d.python else []) if e.get("name", "").startswith(start)]


def missing(what):
    return "–", f"Not measured yet: {what}.", UNMEASURED


# --- the rules ----------------------------------------------------------------------------------

def a1(d):
    e = experiments(d, "an @njit function as a kernel argument")
    if not e:
        return missing("the Numba experiment (bench/python) did not run")
    e = e[0]
    figures = "It runs and validates." if e["runs"] and e.get("valid") else f"`{(e.get('error') or '?').splitlines()[0][:160]}`"
    return "Numba", figures, HOLDS if e["runs"] and e.get("valid") else FAILS


def a3(d):
    staged = {k: v for k, v in d.found["other"].get("staged", {}).items() if k[0] == "map"}
    figures = ", ".join(f"{op} {e.split('/')[0]}: ×{x:.3f}" for (_, op, e), x in sorted(staged.items())) or "–"
    return "CUDA C++ (not the article's Numba)", figures, direction(list(staged.values()), d.noise)


def b1(d):
    tried = experiments(d, "")
    args = [e for e in tried if "argument" in e["name"]]
    if not args:
        return missing("the Numba function-as-argument experiments did not run")
    ran = [e["name"] for e in args if e["runs"] and e.get("valid")]
    figures = "; ".join(f"{e['name']}: {'runs' if e['runs'] else 'fails'}" for e in args)
    return "Numba", figures + ".", FAILS if ran else HOLDS


def b2(d):
    pen = d.found["dispatch"].get("penalty", {})
    hoisted, per_call = [], []
    for p in pen.values():
        indirect = [x for c, x in p.items() if c.startswith(("04_", "05_")) and ".crowded/" not in c]
        if indirect and "03_switch.hoisted/vec" in p:
            hoisted.append(p["03_switch.hoisted/vec"] / min(indirect))
        if indirect and "03_switch/vec" in p:
            per_call.append(p["03_switch/vec"] / min(indirect))
    if not hoisted:
        return missing("the dispatch sweep with the switch, function pointer and virtual strategies")
    figures = (f"Branch once per thread (the article's place) / the fastest function table or virtual call: "
               f"{span(hoisted)}×; branch per call: {span(per_call)}× over every op and k (C++).")
    sw, fn = peer_ratios(d, "numba.op_switch"), peer_ratios(d, "numba.device_function")
    both = [sw[k] / fn[k] for k in sw if k in fn]
    if both:
        figures += f" Numba: the if/elif kernel / one device function: {span(both)}×."
    return "CUDA C++; Numba (no function table runs in Numba)", figures, direction(hoisted, d.noise)


def b3(d):
    gg = fact(d.facts, "global_calls_global")
    if not gg:
        return missing("the build probes (cdl_build_facts) and the article's Numba example")
    nvcc, nvrtc = compiles(gg, "nvcc"), compiles(gg, "nvrtc")
    figures = (f"nvcc {'accepts' if nvcc else 'refuses'} a kernel called like a function; NVRTC "
               f"{'accepts' if nvrtc else 'refuses'} it. The article's Numba example is not run yet.")
    return "CUDA C++ build probes (not the article's Numba)", figures, HOLDS if nvcc else FAILS


def b4(d):
    worst = {e: w for e, w in d.found["tasks"].get("worst", {}).items() if e.endswith("/per_element")}
    if not worst:
        return missing("the tasks workload")
    failed = [n for n, _ in d.bench.errors if n.startswith("tasks/")]
    figures = (f"{len(worst)} per-element implementations, each reading the op and its parameters from the task "
               f"record inside the kernel, {'with ' + str(len(failed)) + ' failures' if failed else 'validated'}; "
               f"the worst layout costs {span(list(worst.values()))}× the uniform one.")
    return "CUDA C++ (not the article's Numba)", figures, FAILS if failed else HOLDS


def c1(d):
    pen = d.found["dispatch"].get("penalty", {})
    hoisted = [p["03_switch.hoisted/vec"] for p in pen.values() if "03_switch.hoisted/vec" in p]
    jit = [x for p in pen.values() for c, x in p.items() if c.startswith("06_")]
    if not hoisted or not jit:
        return missing("the dispatch sweep with 03 and 06")
    matched = [abs(h - 1) <= d.noise for h in hoisted]
    figures = (f"Runtime-compiled source (06) runs at {span(jit)}× the compiled template; a switch taken once per "
               f"thread, with no compiler at run time, at {span(hoisted)}× ({sum(matched)} of {len(hoisted)} (op, k) "
               "within the noise), for the ops built into the program.")
    sm = peer_ratios(d, "pycuda.SourceModule")
    if sm:
        figures += f" PyCUDA's SourceModule: {span(list(sm.values()))}× the C++ same-form kernel."
    return "PyCUDA; CUDA C++", figures, FAILS if all(matched) else DEPENDS if any(matched) else HOLDS


def c2(d):
    staged = {k: v for k, v in d.found["other"].get("staged", {}).items() if k[:2] == ("zip", "add")}
    figures = ", ".join(f"{e.split('/')[0]}: ×{x:.3f}" for (_, _, e), x in sorted(staged.items())) or "–"
    return "CUDA C++ (not the article's PyCUDA)", "vector add, staged / plain: " + figures, direction(list(staged.values()), d.noise)


def d2(d):
    ratios = {f"C++ {kind} ({op}, k = {k})": x for (kind, op, k), x in d.found["precision"].items()}
    for peer in ("cupy.RawKernel", "cupy.ElementwiseKernel"):
        per = {}
        for (w, f, p), ratio in d.found["python"]["ratio"].items():
            fd = dict(f)
            if p == peer and w == "map" and fd.get("op") == "quadratic" and fd.get("k") == "1" and ratio:
                row = d.python.bench.problems[(w, f)]
                per[fd["type"]] = next(r["median"] for e, r in row.items() if e.startswith(peer)) / int(fd["n"])
        if "f32" in per and "f64" in per:
            ratios[f"{peer} (memory)"] = per["f64"] / per["f32"]
    figures = "; ".join(f"{k}: f64 takes {v:.2f}× per element" for k, v in ratios.items()) or "–"
    return "CuPy; CUDA C++", figures, direction(list(ratios.values()), d.noise, holds_if_below=False)


def d3(d):
    ufunc, ew = peer_ratios(d, "cupy.ufunc_chain"), peer_ratios(d, "cupy.ElementwiseKernel")
    ratios = list(ufunc.values()) + list(ew.values())
    if not ratios:
        return missing("CuPy did not run")
    fast = [x <= 1 + d.noise for x in ratios]
    figures = ("Time / the C++ one-element-per-thread template kernel: ufunc chain " +
               ", ".join(f"{k} {v:.2f}×" for k, v in ufunc.items()) + "; ElementwiseKernel " +
               ", ".join(f"{k} {v:.2f}×" for k, v in ew.items()) + ".")
    return "CuPy", figures, HOLDS if all(fast) else FAILS if not any(fast) else DEPENDS


def e1(d):
    gd = fact(d.facts, "global_calls_device")
    if not gd:
        return missing("the build probes (cdl_build_facts)")
    nvcc = compiles(gd, "nvcc")
    return ("nvcc (the compiler PyCUDA's SourceModule runs)",
            f"nvcc {'compiles' if nvcc else 'refuses'} a kernel calling a device function; every kernel of this suite "
            "calls its op as one.", FAILS if nvcc else HOLDS)


def e2(d):
    aos = d.found["other"].get("aos_soa", {})
    if not aos:
        return missing("the points workload")
    failed = [n for n, _ in d.bench.errors if n.startswith("points/") and "/aos/" in n]
    return ("CUDA C++ (not the article's PyCUDA structured arrays)",
            f"One skeleton takes the array of structs and the struct of arrays, "
            f"{'with ' + str(len(failed)) + ' AoS failures' if failed else 'validated'}; AoS / SoA time "
            f"{span(list(aos.values()))}×.", HOLDS if failed else FAILS)


def never(what):
    return lambda d: missing(what)


CLAIMS = [
    Claim("A1", "000", "we can pass a pre-compiled Numba function (`@njit`) as a kernel argument", "Numba",
          "holds if the article's kernel runs and validates with an `@njit` function as its argument; does not hold if "
          "it fails", a1),
    Claim("A2", "000", "a pre-compiled function avoids \"the overhead of dynamic compilation\"", "Numba",
          "holds if the `@njit` function reaches the kernel with no compile at its first call (first call within the "
          "noise of the second); does not hold if that first call compiles", never("the `@njit` first and second call, "
          "and a new process, in Numba")),
    Claim("A3", "000", "loading the input into shared memory first gives \"improved performance\" for an elementwise op",
          "Numba", "holds if the staged map is faster than the plain one beyond the noise at every size measured; does "
          "not hold if slower at every one", a3),
    Claim("B1", "001", "passing Python functions as kernel arguments \"is not supported\"", "Numba",
          "holds if every attempt to pass a function as a kernel argument fails; does not hold if one runs and "
          "validates", b1),
    Claim("B2", "001", "an `if/elif` on an integer op id \"is a far more efficient and compatible solution\"", "Numba",
          "holds if the branch in the article's place (once per thread) is faster than every alternative that runs on the "
          "device (a function table, a virtual call) beyond the noise at every op and k; does not hold if slower at "
          "every one; depends otherwise", b2),
    Claim("B3", "001", "kernels (`@cuda.jit`) can be called from another kernel as functions", "Numba",
          "holds if a kernel called like a function compiles; does not hold if the compiler refuses it", b3),
    Claim("B4", "001", "a structured task array can pick the op per element; the lookup \"must exist within the GPU "
          "kernel\"", "Numba", "holds if every per-element implementation validates; does not hold if one fails", b4),
    Claim("C1", "002", "Python cannot run in a kernel, so run-time logic goes into CUDA C compiled at run time", "PyCUDA",
          "holds if no strategy without a compiler at run time matches the compiled kernel's speed at any op and k; "
          "does not hold if one matches it at every op and k; depends otherwise", c1),
    Claim("C2", "002", "\"Shared memory offers significant performance improvements\" (vector add)", "PyCUDA",
          "holds if the staged vector add is faster than the plain one beyond the noise; does not hold if slower", c2),
    Claim("D1", "003", "CuPy and Numba give \"significant speedups\" over NumPy on one CPU core", "CuPy, Numba",
          "holds if the GPU system, transfers included, beats NumPy on the host beyond the noise in every problem",
          never("NumPy on the host, and the GPU systems with their transfers")),
    Claim("D2", "003", "`np.float32` \"for optimal GPU performance\"", "CuPy",
          "holds if float64 takes more time per element than float32 beyond the noise in every case measured; does not "
          "hold if it never does", d2),
    Claim("D3", "003", "CuPy's ufunc chains and `ElementwiseKernel` are the way to write the GPU code", "CuPy",
          "holds if every ufunc chain and ElementwiseKernel runs within the noise of the C++ same-form kernel; does "
          "not hold if none does; depends otherwise", d3),
    Claim("E1", "004", "\"Direct function calls from a global function to a device function are not permitted\"",
          "PyCUDA", "holds if nvcc refuses a kernel that calls a device function; does not hold if it compiles it", e1),
    Claim("E2", "004", "struct data \"needs explicit handling for memory alignment\"", "PyCUDA",
          "holds if an array of structs needs code of its own to be processed; does not hold if the same kernel "
          "serves it, validated", e2),
    Claim("E3", "004", "page-locked host memory (`pagelocked_empty`) for \"faster transfer\"", "PyCUDA",
          "holds if transfers from page-locked memory are faster than from pageable memory beyond the noise",
          never("host-to-device transfers from page-locked and pageable memory")),
]


def answer_all(bench, facts, found, python):
    """[(claim, answered in, figures, verdict)] for every claim, in id order."""
    d = SimpleNamespace(bench=bench, facts=facts, found=found, python=python, noise=found["noise"])
    return [(c, *c.answer(d)) for c in CLAIMS]


def add(doc, bench, facts, found, python):
    rows = answer_all(bench, facts, found, python)
    doc.add("## The articles' claims, checked\n")
    doc.add("Each claim of `shared/seeds/README.md`, by its id, with the figures that answer it and the rule that turns "
            f"them into the verdict (the noise is {found['noise']:.1%}). *Answered in* names the system the figures come "
            "from; where that is not the article's own, it says so, and *not measured* means the figures the rule needs "
            "are not in these results.\n")
    doc.add(table(["id", "article", "claim", "article's system", "answered in", "figures", "rule", "verdict"],
                  [[c.id, c.article, c.quote, c.system, where, figures, c.rule, f"**{verdict}**"]
                   for c, where, figures, verdict in rows]))
    return rows
