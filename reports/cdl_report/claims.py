"""The claims of the source articles (reports/articles.md), ids A1-E3, each answered from the
data by a rule written beside it. A rule is a function of the figures: it returns the system the
figures come from, the figures, and a verdict, one of

    holds | does not hold | depends | not measured

"not measured" is itself computed: the figures the rule needs are not in the results (the article's
own system was not run, or the experiment does not exist yet), and the row says what is missing.
A row answered in another system than the article's says so."""
import os
from dataclasses import dataclass
from types import SimpleNamespace

from .document import table
from .results import label
from .stats import span

# The project's page of the claims, quoted with their articles' questions and examples.
ARTICLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "articles.md")

HOLDS, FAILS, DEPENDS, UNMEASURED = "holds", "does not hold", "depends", "not measured"


@dataclass
class Claim:
    id: str
    article: str
    quote: str
    system: str  # the article's own system
    rule: str  # the verdict's rule, as the report prints it
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
    return {
        f"{w} {dict(f).get('op', dict(f).get('layout', ''))} {dict(f).get('type', '')}".strip(): x
        for (w, f, p), x in d.found["python"]["ratio"].items()
        if p == peer and x
    }


def peer_over(d, peer, base):
    """[one Python peer's time / another's] on each problem both ran, from the peers' own medians."""
    out = []
    for row in d.python.bench.problems.values() if d.python else ():
        median = {label(entry): r["median"] for entry, r in row.items()}
        if peer in median and base in median:
            out.append(median[peer] / median[base])
    return out


def experiments(d, claim, start=""):
    """The records of the articles' experiments (bench/python/cdl_peers/articles_*.py) for a claim."""
    return [
        e
        for e in (d.python.experiments if d.python else [])
        if e.get("claim") == claim and e.get("name", "").startswith(start)
    ]


def one(d, claim, start=""):
    found = experiments(d, claim, start)
    return found[0] if found else None


def missing(what):
    return "–", f"Not measured yet: {what}.", UNMEASURED


def outcome(e):
    """How one experiment went, in a few words: validated, a wrong result, or its error and where."""
    if e["runs"]:
        return "runs, validated" if e.get("valid") else "runs, WRONG RESULT"
    where = f" (raised in `{short_path(e['raised_at'])}`)" if e.get("raised_at") else ""
    return f"fails: `{(e.get('error') or '?').splitlines()[0][:160]}`{where}"


def short_path(where):
    """An absolute path of the machine that ran the experiment cut to its last three parts."""
    return "/".join(where.split("/")[-3:]) if where.startswith("/") else where


def gain(ratios, noise):
    """For a claimed speed-up (ratios of the new way's time to the old's): HOLDS when every ratio is
    below 1 by more than the noise, FAILS when none is (no gain beyond the noise, or a loss),
    DEPENDS otherwise; UNMEASURED without ratios."""
    if not ratios:
        return UNMEASURED
    faster = [r < 1 - noise for r in ratios]
    return HOLDS if all(faster) else FAILS if not any(faster) else DEPENDS


# The frames where a system refuses the code an experiment tries (its typing, its dispatcher, its
# lowering's checks, its compiler). A failure raised anywhere else (a clash of installed versions,
# a missing compiler, a driver error) shows nothing about the feature, so it is not counted.
REFUSED_IN = (
    "numba/cuda/typing/",
    "numba/core/typing/",
    "numba/cuda/core/typeinfer.py",
    "numba/core/typeinfer.py",
    "numba/cuda/dispatcher.py",
    "numba/cuda/core/base.py",
    "pycuda/compiler.py",
)
WORKS, REFUSED = "works", "refused"


def tried(e):
    """What an experiment shows of the feature it tries: WORKS (it runs and validates), REFUSED (it
    fails where its system refuses such code, REFUSED_IN), or None (a wrong result, or a failure
    raised elsewhere)."""
    if e["runs"]:
        return WORKS if e.get("valid") else None
    where = e.get("raised_at") or ""
    return REFUSED if any(frame in where for frame in REFUSED_IN) else None


def not_counted(e):
    """The words after a failure that tried() does not count."""
    if e["runs"] or tried(e):
        return ""
    return (
        ": not the feature refused (that frame is outside the system's typing, dispatch and compiler), "
        "not counted"
    )


def by_trial(e, if_works, if_refused):
    """The verdict of a claim one experiment answers: if_works or if_refused, else not measured."""
    return {WORKS: if_works, REFUSED: if_refused}.get(tried(e), UNMEASURED)


def failed_experiment(e, claim):
    return "–", f"The experiment for {claim} failed: {outcome(e)}.", UNMEASURED


# --- the rules ----------------------------------------------------------------------------------


def a1(d):
    e = one(d, "A1")
    if not e:
        return missing("the Numba experiment (bench/python) did not run")
    v = e.get("figures", {}).get("versions", {})
    figures = (
        outcome(e)
        + not_counted(e)
        + (
            f"; numba {v.get('numba')}, numba-cuda {v.get('numba-cuda')} (which requires "
            f"{', '.join(v.get('numba-cuda requires', [])) or '?'}), numpy {v.get('numpy')}"
            if v
            else ""
        )
    )
    return "Numba", figures + ".", by_trial(e, HOLDS, FAILS)


def a2(d):
    e = one(d, "A2")
    if not e:
        return missing("the Numba first-call experiment (bench/python) did not run")
    if not e["runs"]:
        return failed_experiment(e, "A2")
    f = e["figures"]
    njit = f["njit_first_call_ms"] - f["njit_second_call_ms"]
    device = f["device_first_call_ms"] - f["device_second_call_ms"]
    figures = (
        f"In a new process: the @njit function's host compile {f['njit_host_compile_ms']:.0f} ms, then the"
        f" kernel calling it: first call {f['njit_first_call_ms']:.0f} ms, second"
        f" {f['njit_second_call_ms']:.2f} ms; the same kernel with a device function made at run time: first"
        f" call {f['device_first_call_ms']:.0f} ms. The kernel's compile with the 'pre-compiled' function is"
        f" {njit / device:.2f}× the one without."
    )
    verdict = HOLDS if njit < 0.1 * device else FAILS if njit > 0.5 * device else DEPENDS
    return "Numba", figures, verdict if e.get("valid") else UNMEASURED


def staging(d, claim, system, subject, cpp_rows, cpp_label, describe, ratio):
    """A3 and C2: the article's staged kernel against the plain one in its own system, the C++
    staged forms beside it; the C++ forms alone (said so) where the article's experiment is
    missing or failed. cpp_rows(workload, op) picks the C++ staged rows, cpp_label(op, entry) names
    one; describe(figures) says what was measured; figures[ratio] is staged / plain."""
    cpp = {k: v for k, v in d.found["other"].get("staged", {}).items() if cpp_rows(*k[:2])}
    cpp_text = f"C++ {subject}, staged / plain: " + (
        ", ".join(f"{cpp_label(op, e.split('/')[0])}: ×{x:.3f}" for (_, op, e), x in sorted(cpp.items()))
        or "–"
    )
    e = one(d, claim)
    if e and e["runs"] and e.get("valid"):
        f = e["figures"]
        figures = f"{describe(f)}, ×{f[ratio]:.3f}. {cpp_text}."
        return f"{system}; CUDA C++", figures, gain([f[ratio]], d.noise)
    note = f" (the {system} experiment: {outcome(e)})" if e else ""
    return f"CUDA C++ (not the article's {system})", cpp_text + note, gain(list(cpp.values()), d.noise)


def a3(d):
    return staging(
        d,
        "A3",
        "Numba",
        "map",
        lambda workload, op: workload == "map",
        lambda op, entry: f"{op} {entry}",
        lambda f: (
            f"Numba, 2^{int(f['n']).bit_length() - 1} float32, {f['function']}: staged "
            f"{fmt_ms(f['staged_ms'])}, global {fmt_ms(f['global_ms'])}"
        ),
        "staged_over_global",
    )


def fmt_ms(ms):
    return f"{ms * 1e3:.0f} µs" if ms < 1 else f"{ms:.1f} ms"


def b1(d):
    args = [e for e in experiments(d, "A1") + experiments(d, "B1") if "argument" in e["name"]]
    if not args:
        return missing("the Numba function-as-argument experiments did not run")
    trials = [tried(e) for e in args]
    figures = "; ".join(f"{e['name']}: {outcome(e)}{not_counted(e)}" for e in args)
    verdict = FAILS if WORKS in trials else HOLDS if REFUSED in trials else UNMEASURED
    return "Numba", figures + ".", verdict


def b2(d):
    pen = d.found["dispatch"].get("penalty", {})
    hoisted, per_call = [], []
    for p in pen.values():
        indirect = [x for c, x in p.items() if c.startswith(("04_", "05_")) and ".crowded/" not in c]
        if indirect and "03_switch.hoisted/vec" in p:
            hoisted.append(p["03_switch.hoisted/vec"] / min(indirect))
        if indirect and "03_switch/vec" in p:
            per_call.append(p["03_switch/vec"] / min(indirect))
    cpp = (
        "C++, the branch once per thread (the article's place) / the fastest function table or virtual call:"
        f" {span(hoisted)}×; the branch per call: {span(per_call)}× over every op and k."
        if hoisted
        else ""
    )
    # In Numba, the article's system: the if/elif against the dictionary it replaces.
    numba, switch_ran = "", False
    for peer, where in (("numba.op_switch.hoisted", "once per thread"), ("numba.op_switch", "per call")):
        over = peer_over(d, peer, "numba.device_function")
        if over:
            switch_ran = True
            numba += f" Numba, the if/elif {where} / one device function: {span(over)}×."
    table = one(d, "B2", "a dictionary")
    if table:
        numba = f"Numba, a dictionary of functions in a kernel: {outcome(table)}{not_counted(table)}." + numba
        ratio = table.get("figures", {}).get("switch_over_dictionary")
        if tried(table) == REFUSED and switch_ran:
            verdict = HOLDS  # the if/elif runs where the dictionary cannot
        elif tried(table) == WORKS and ratio is not None:
            verdict = direction([ratio], d.noise)
        else:
            verdict = UNMEASURED
        return "Numba" + ("; CUDA C++ beside" if cpp else ""), (numba + " " + cpp).strip(), verdict
    if not hoisted:
        return missing("Numba's dictionary of functions and the C++ dispatch sweep")
    return "CUDA C++ (not the article's Numba)", (cpp + numba).strip(), direction(hoisted, d.noise)


def b3(d):
    e = one(d, "B3", "article 001")
    gg = fact(d.facts, "global_calls_global")
    probe = ""
    if gg:
        probe = (
            f" CUDA C++: nvcc {'accepts' if compiles(gg, 'nvcc') else 'refuses'} a kernel called like a"
            f" function, NVRTC {'accepts' if compiles(gg, 'nvrtc') else 'refuses'} it{sass_of_outer(gg)}."
        )
    launch = (fact(d.facts, "global_launches_global") or {}).get("run")
    if launch:
        probe += (
            " A kernel launching a kernel (dynamic parallelism, nvcc -rdc): "
            + (
                f"not run ({launch.get('reason', '?')})"
                if launch.get("runs") is None
                else (
                    "runs on the GPU, validated"
                    if launch.get("runs") and launch.get("valid")
                    else f"fails on the GPU: `{launch.get('error') or 'WRONG RESULT'}`"
                )
            )
            + "."
        )
    if not e:
        if not gg:
            return missing("the article's Numba example and the build probes (cdl_build_facts)")
        return (
            "CUDA C++ build probes (not the article's Numba)",
            probe.strip(),
            HOLDS if compiles(gg, "nvcc") else FAILS,
        )
    figures = f"Numba, the article's `kernel_with_func_select`: {outcome(e)}"
    f = e.get("figures", {})
    if "ptx_functions" in f:
        figures += (
            f"; its PTX has {f['ptx_kernels']} kernel, {f['ptx_functions']} device functions and "
            f"{f['ptx_call_instructions']} call instructions (the called kernels "
            f"{'inlined' if not f['ptx_call_instructions'] else 'called as device functions'})"
        )
    if "select_over_direct" in f:
        figures += f"; time / `add_arrays` launched directly: ×{f['select_over_direct']:.2f}"
    after = one(d, "B3", "add_arrays launched")
    if after:
        figures += f". Then `add_arrays` launched from the host: {outcome(after)}"
    return (
        "Numba" + ("; CUDA C++" if gg else ""),
        figures + not_counted(e) + "." + probe,
        by_trial(e, HOLDS, FAILS),
    )


def sass_of_outer(probe):
    """What NVRTC made of `outer`, the kernel that calls `inner`, from the CUBIN's SASS
    (cdl_build_facts): inlined when `outer` has no CALL and does `inner`'s load and store itself."""
    sass = ((probe or {}).get("nvrtc") or {}).get("sass") or {}
    outer = next((f for name, f in sass.items() if "outer" in name), None)
    inner = next((f for name, f in sass.items() if "inner" in name), None)
    if outer is None:
        return ""
    inlined = outer["calls"] == 0 and {"LDG", "STG"} <= set(outer.get("opcodes", []))
    same = inner is not None and (inner["instructions"], inner.get("opcodes")) == (
        outer["instructions"],
        outer.get("opcodes"),
    )
    return (
        f"; in its SASS `outer` has {outer['calls']} CALL and {outer['instructions']} instructions"
        f"{', the same as `inner`' if same else ''}, its own load and store "
        f"{'included' if inlined else 'not included'}: `inner` {'inlined' if inlined else 'not inlined'}"
    )


def b4(d):
    e = one(d, "B4")
    worst = {k: w for k, w in d.found["tasks"].get("worst", {}).items() if k.endswith("/per_element")}
    failed = [n for n, _ in d.bench.errors if n.startswith("tasks/")]
    cpp = ""
    if worst:
        cpp = (
            f" C++: {len(worst)} per-element implementations "
            f"{'with ' + str(len(failed)) + ' failures' if failed else 'validated'}; the worst layout costs "
            f"{span(list(worst.values()))}× the uniform one."
        )
    if e:
        f = e.get("figures", {})
        speed = f", {f['GB/s']:.0f} GB/s" if "GB/s" in f else ""
        ran = f"{outcome(e)}{not_counted(e)}{speed}"
        article = f"Numba, the article's `generic_compute_kernel` on 2^24 elements: {ran}.{cpp}"
        return "Numba" + ("; CUDA C++" if worst else ""), article, by_trial(e, HOLDS, FAILS)
    if not worst:
        return missing("the article's Numba example and the tasks workload")
    return "CUDA C++ (not the article's Numba)", cpp.strip(), FAILS if failed else HOLDS


def median_of(values):
    values = sorted(values)
    return values[len(values) // 2] if values else float("nan")


def c1(d):
    """The claim is about logic that arrives at run time: decided in PyCUDA by its route that takes it
    with no compiler (16's interpreter kernel loaded from a file, the op as data) against SourceModule
    on the same problems; without those figures, by the same rule on C++ (16 against 06 over the
    dispatch sweep). A switch over ops built into the program takes no such logic: it decides nothing."""
    pen = d.found["dispatch"].get("penalty", {})
    interpreted = [p["16_interpreter/vec"] for p in pen.values() if "16_interpreter/vec" in p]
    jit = [x for p in pen.values() for c, x in p.items() if c.startswith("06_")]
    cpp = ""
    if interpreted and jit:
        cpp = (
            f"C++: runtime-compiled source (06) runs at {span(jit)}× the compiled template; logic that"
            " arrives at run time run with no compiler (16: 08's language encoded on the host, run by an"
            f" interpreter kernel) at {span(interpreted)}× ({sum(x <= 1 + d.noise for x in interpreted)} of"
            f" {len(interpreted)} (op, k) within the noise or faster)."
        )
        hoisted = [p["03_switch.hoisted/vec"] for p in pen.values() if "03_switch.hoisted/vec" in p]
        if hoisted:
            cpp += (
                " A switch over the ops built into the program, taken once per thread, runs at"
                f" {span(hoisted)}×, but cannot take logic defined at run time."
            )
    over = peer_over(d, "pycuda.interpreter", "pycuda.SourceModule")
    pycuda = ""
    compiled = one(d, "C1", "PyCUDA SourceModule")
    if compiled and compiled["runs"]:
        f = compiled["figures"]
        pycuda += (
            f" SourceModule's compile: a new source {median_of(f['new_source_ms']):.0f} ms (nvcc), the same"
            f" source again {median_of(f['disk_hit_ms']):.2f} ms (PyCUDA's disk cache)."
        )
    data_route = one(d, "C1", "PyCUDA, no compiler")
    if data_route and data_route["runs"] and data_route.get("valid"):
        f = data_route["figures"]
        pycuda += (
            " With no compiler, a new op from its text to its first result on"
            f" 2^{int(f['n']).bit_length() - 1} floats: {f['first_result_ms']:.1f} ms"
            f" ({f['encode_ms']:.1f} ms of it writing its program, a process of cdl_run's); the"
            f" interpreter's file loaded once in {f['module_load_ms']:.1f} ms."
        )
    elif data_route:
        pycuda += f" PyCUDA's route with no compiler: {outcome(data_route)}."
    if over:
        matched = [x <= 1 + d.noise for x in over]
        figures = (
            "PyCUDA, the op as data for 16's interpreter kernel loaded from a file (no compiler at run"
            f" time): {span(over)}× SourceModule's time on the same problems ({sum(matched)} of"
            f" {len(over)} within the noise or faster)." + pycuda + (" " + cpp if cpp else "")
        )
        verdict = FAILS if all(matched) else DEPENDS if any(matched) else HOLDS
        return "PyCUDA; CUDA C++ beside", figures, verdict
    if not cpp:
        return missing(
            "PyCUDA's route with no compiler against SourceModule, or C++'s dispatch sweep with 16"
        )
    matched = [x <= 1 + d.noise for x in interpreted]
    sm = peer_ratios(d, "pycuda.SourceModule")
    figures = (
        cpp
        + (f" PyCUDA's SourceModule: {span(list(sm.values()))}× the C++ same-form kernel." if sm else "")
        + pycuda
        + (" PyCUDA's route with no compiler is not in these results." if not data_route else "")
    )
    verdict = FAILS if all(matched) else DEPENDS if any(matched) else HOLDS
    return "CUDA C++ (16's interpreter); PyCUDA beside", figures, verdict


def c2(d):
    return staging(
        d,
        "C2",
        "PyCUDA",
        "vector add",
        lambda workload, op: (workload, op) == ("zip", "add"),
        lambda op, entry: entry,
        lambda f: (
            f"PyCUDA, the article's `add_shared` on 2^{int(f['n']).bit_length() - 1} float32: "
            f"{fmt_ms(f['shared_ms'])} against {fmt_ms(f['plain_ms'])} for `add`"
        ),
        "shared_over_plain",
    )


def d1(d):
    ratios, parts = [], []
    for e in experiments(d, "D1"):
        if not (e["runs"] and e.get("valid")):
            parts.append(f"{e['system']}: {outcome(e)}")
            continue
        for problem, f in e["figures"].items():
            r = f["gpu_with_transfers_ms"] / f["numpy_ms"]
            ratios.append(r)
            parts.append(
                f"{e['system']} {problem}: NumPy {fmt_ms(f['numpy_ms'])}, GPU with transfers "
                f"{fmt_ms(f['gpu_with_transfers_ms'])} (×{r:.2f}), kernels alone "
                f"{fmt_ms(f.get('gpu_kernels_ms', f.get('gpu_kernel_ms', float('nan'))))}"
            )
    if not ratios:
        return (
            missing("NumPy on the host against CuPy and Numba with their transfers")
            if not parts
            else ("CuPy, Numba", "; ".join(parts) + ".", UNMEASURED)
        )
    return (
        "CuPy, Numba",
        "Time with the transfers / NumPy on the host: " + "; ".join(parts) + ".",
        gain(ratios, d.noise),
    )


def d2(d):
    ratios = {f"C++ {kind} ({op}, k = {k})": x for (kind, op, k), x in d.found["precision"].items()}
    for peer in ("cupy.RawKernel", "cupy.ElementwiseKernel"):
        per = {}
        for (w, f, p), ratio in d.found["python"]["ratio"].items():
            fd = dict(f)
            if p == peer and w == "map" and fd.get("op") == "quadratic" and fd.get("k") == "1" and ratio:
                row = d.python.bench.problems[(w, f)]
                per[fd["type"]] = next(r["median"] for e, r in row.items() if e.startswith(peer)) / int(
                    fd["n"]
                )
        if "f32" in per and "f64" in per:
            ratios[f"{peer} (memory)"] = per["f64"] / per["f32"]
    figures = "; ".join(f"{k}: f64 takes {v:.2f}× per element" for k, v in ratios.items()) or "–"
    e = one(d, "D2")
    if e and e["runs"] and e.get("valid"):
        f32, f64 = e["figures"]["float32"], e["figures"]["float64"]
        n = e["figures"].get("n", 1 << 26)  # the experiment's size: 2^26 where a file does not say
        blocks = n // 128
        figures += (
            ". CuPy's ElementwiseKernel at its default 128 threads a block: float32"
            f" {f32['default']['frac_copy']:.2f} of copy, float64 {f64['default']['frac_copy']:.2f}; at 256:"
            f" float32 {f32['256']['frac_copy']:.2f}. With the same 2^{n.bit_length() - 1} elements, so the"
            f" same {blocks} blocks, float64 moves twice the bytes in"
            f" {f64['default']['ms'] / f32['default']['ms']:.2f}× the time (float32: one block per"
            f" {f32['default']['ms'] * 1e6 / blocks:.2f} ns)"
        )
        if f64["default"]["ms"] < 1.5 * f32["default"]["ms"]:
            figures += ": at 128 threads float32's time follows the number of blocks, not the bytes"
    if not ratios:
        return missing("float32 against float64 in C++ or CuPy")
    systems = [
        s
        for s, used in (
            ("CuPy", any(k.startswith("cupy") for k in ratios) or e),
            ("CUDA C++", d.found["precision"]),
        )
        if used
    ]
    return "; ".join(systems), figures, direction(list(ratios.values()), d.noise, holds_if_below=False)


def d3(d):
    # Beside the verdict: each CuPy way against the C++ one-element-per-thread template kernel.
    ufunc, ew = peer_ratios(d, "cupy.ufunc_chain"), peer_ratios(d, "cupy.ElementwiseKernel")
    cpp = ""
    if ufunc or ew:
        cpp = (
            " Beside it, time / the C++ one-element-per-thread template kernel: ufunc chain "
            + (", ".join(f"{k} {v:.2f}×" for k, v in ufunc.items()) or "–")
            + "; ElementwiseKernel "
            + (", ".join(f"{k} {v:.2f}×" for k, v in ew.items()) or "–")
            + "."
        )
    e = one(d, "D3")
    if not e:
        answered, figures, verdict = missing(
            "article 003's example 3 against CuPy's other ways for the same code"
        )
        return ("CuPy" if cpp else answered), figures + cpp, verdict
    if tried(e) != WORKS:
        return "CuPy", f"Article 003's example 3 and CuPy's other ways: {outcome(e)}." + cpp, UNMEASURED
    ratios, parts = [], []
    for size, row in e["figures"].items():
        others = {k[: -len("_ms")]: v for k, v in row.items() if k != "article_ms"}
        ratios.append(row["article_ms"] / min(others.values()))
        parts.append(
            f"{size}: the article's {fmt_ms(row['article_ms'])}, "
            + ", ".join(f"{k} {fmt_ms(v)}" for k, v in others.items())
            + f" (the article's / the fastest: ×{ratios[-1]:.2f})"
        )
    figures = "Article 003's example 3, CUDA events on the GPU's data: " + "; ".join(parts) + "." + cpp
    fast = [r <= 1 + d.noise for r in ratios]
    return "CuPy", figures, HOLDS if all(fast) else FAILS if not any(fast) else DEPENDS


def e1(d):
    e = one(d, "E1")
    gd = fact(d.facts, "global_calls_device")
    probe = f" nvcc {'compiles' if compiles(gd, 'nvcc') else 'refuses'} the same in C++." if gd else ""
    if e:
        ran = f"{outcome(e)}{not_counted(e)}"
        figures = f"A SourceModule whose `__global__` function calls a `__device__` function: {ran}.{probe}"
        return "PyCUDA" + ("; nvcc" if gd else ""), figures, by_trial(e, FAILS, HOLDS)
    if not gd:
        return missing("the PyCUDA experiment and the build probes (cdl_build_facts)")
    return (
        "nvcc (the compiler PyCUDA's SourceModule runs)",
        (
            f"nvcc {'compiles' if compiles(gd, 'nvcc') else 'refuses'} a "
            "kernel calling a device function; every kernel of this suite calls its op as one."
        ),
        FAILS if compiles(gd, "nvcc") else HOLDS,
    )


def e2(d):
    records = experiments(d, "E2")
    aos = d.found["other"].get("aos_soa", {})
    failed = [n for n, _ in d.bench.errors if n.startswith("points/") and "/aos/" in n]
    if not records:
        if not aos:
            return missing("the structured-array experiments and the points workload")
        return (
            "CUDA C++ (not the article's PyCUDA structured arrays)",
            (
                "One skeleton takes the array of structs and the struct of arrays, "
                f"{'with ' + str(len(failed)) + ' AoS failures' if failed else 'validated'}; AoS / SoA time "
                f"{span(list(aos.values()))}×."
            ),
            HOLDS if failed else FAILS,
        )

    def described(e):
        f = e.get("figures", {})
        sizes = ""
        if "itemsize" in f:
            sizes = (
                f" (itemsize {f['itemsize']}"
                + (f", C sizeof {f['c_sizeof']}" if "c_sizeof" in f else "")
                + ")"
            )
        return f"{e['name']}: {outcome(e)}{sizes}"

    article = [e for e in records if e.get("article") == "004"]
    wider = [e for e in records if e.get("article") != "004"]
    figures = ""
    if article:
        figures = "The article's own struct: " + "; ".join(described(e) for e in article) + "."
    if wider:
        figures += (" Beside it, " if article else "") + "structs of mixed widths: "
        figures += "; ".join(described(e) for e in wider) + "."
    from .sections.python_peers import NAMES

    systems = ", ".join(NAMES.get(s, s) for s in sorted({e.get("system", "?") for e in article or wider}))
    if article:
        # Needing handling shows as a wrong result or a refusal of the struct as it is.
        needs = any((e["runs"] and not e.get("valid")) or tried(e) == REFUSED for e in article)
        verdict = HOLDS if needs else FAILS if all(tried(e) == WORKS for e in article) else UNMEASURED
        return systems, figures.strip(), verdict
    ok = [e["runs"] and e.get("valid") for e in wider]
    packed = [e["runs"] and e.get("valid") for e in wider if "packed" in e["name"]]
    verdict = FAILS if all(ok) else DEPENDS if packed and not all(packed) else UNMEASURED
    return systems + " (not the article's example)", figures.strip(), verdict


def e3(d):
    e = one(d, "E3")
    if not e:
        return missing("host-to-device transfers from page-locked and pageable memory")
    if not (e["runs"] and e.get("valid")):
        return failed_experiment(e, "E3")
    ratios, parts = [], []
    for size, f in e["figures"].items():
        mine = {
            "to the GPU": f["pinned_htod_ms"] / f["pageable_htod_ms"],
            "from the GPU": f["pinned_dtoh_ms"] / f["pageable_dtoh_ms"],
            "allocated for the call, from the GPU (the article's form)": (
                f["pinned_alloc_dtoh_ms"] / f["pageable_alloc_dtoh_ms"]
            ),
        }
        ratios += mine.values()
        kib = int(size) / 1024
        parts.append(f"{kib:.0f} KiB: " if kib < 1024 else f"{kib / 1024:.0f} MiB: ")
        parts[-1] += ", ".join(f"{k} ×{v:.2f}" for k, v in mine.items())
    return "PyCUDA", "Page-locked / pageable time: " + "; ".join(parts) + ".", gain(ratios, d.noise)


CLAIMS = [
    Claim(
        "A1",
        "000",
        "we can pass a pre-compiled Numba function (`@njit`) as a kernel argument",
        "Numba",
        (
            "holds if the article's kernel runs and validates with an `@njit` function as its argument; does"
            " not hold if Numba refuses it (raised in its typing or dispatch); not measured if it fails"
            " anywhere else (the versions and the frame that raised say why) or gives a wrong result"
        ),
        a1,
    ),
    Claim(
        "A2",
        "000",
        'a pre-compiled function avoids "the overhead of dynamic compilation"',
        "Numba",
        (
            "compile = first call − second call of the kernel, each in a new process: holds if the kernel"
            " calling the `@njit` function, compiled on the host first, compiles in under 0.1× the time of"
            " the same kernel calling a device function made at run time; does not hold above 0.5×; depends"
            " between"
        ),
        a2,
    ),
    Claim(
        "A3",
        "000",
        'loading the input into shared memory first gives "improved performance" for an elementwise op',
        "Numba",
        (
            "holds if the article's staged kernel is faster than the same kernel reading global memory by"
            " more than the noise; does not hold if it is not (the same within the noise, or slower)"
        ),
        a3,
    ),
    Claim(
        "B1",
        "001",
        'passing Python functions as kernel arguments "is not supported"',
        "Numba",
        (
            "holds if every attempt to pass a function as a kernel argument that is counted is refused by"
            " Numba (raised in its typing or dispatch); does not hold if one runs and validates; a failure"
            " raised elsewhere is not counted, and with none counted the claim is not measured"
        ),
        b1,
    ),
    Claim(
        "B2",
        "001",
        'an `if/elif` on an integer op id "is a far more efficient and compatible solution"',
        "Numba",
        (
            "in Numba: holds if Numba refuses the dictionary of functions (in its typing or dispatch) and"
            " runs the if/elif, the more compatible and the only one to time; if the dictionary runs, holds"
            " if the if/elif is faster beyond the noise, does not hold if slower, depends between; not"
            " measured if it fails elsewhere or its time is missing. Without Numba, from C++: holds if the"
            " branch once per thread is faster than every function table or virtual call beyond the noise at"
            " every op and k; does not hold if slower at every one; depends otherwise"
        ),
        b2,
    ),
    Claim(
        "B3",
        "001",
        "kernels (`@cuda.jit`) can be called from another kernel as functions",
        "Numba",
        (
            "holds if the article's kernel calling two kernels runs and validates; does not hold if Numba"
            " refuses it; not measured if it fails elsewhere or gives a wrong result"
        ),
        b3,
    ),
    Claim(
        "B4",
        "001",
        'a structured task array can pick the op per element; the lookup "must exist within the GPU kernel"',
        "Numba",
        (
            "holds if the article's kernel reading its op from the task record runs and validates; "
            "does not hold if Numba refuses it; not measured if it fails elsewhere or gives a wrong result"
        ),
        b4,
    ),
    Claim(
        "C1",
        "002",
        "Python cannot run in a kernel, so run-time logic goes into CUDA C compiled at run time",
        "PyCUDA",
        (
            "in PyCUDA: holds if its route that takes logic defined at run time without a compiler (16's"
            " interpreter kernel loaded from a file, the op as data) is slower than SourceModule beyond the"
            " noise on every problem both ran; does not hold if it is as fast or faster on every one; depends"
            " otherwise. Without those figures, the same rule on C++ (16 against 06, every op and k)"
        ),
        c1,
    ),
    Claim(
        "C2",
        "002",
        '"Shared memory offers significant performance improvements" (vector add)',
        "PyCUDA",
        (
            "holds if the article's shared-memory vector add is faster than the plain one by more than the"
            " noise; does not hold if it is not"
        ),
        c2,
    ),
    Claim(
        "D1",
        "003",
        'CuPy and Numba give "significant speedups" over NumPy on one CPU core',
        "CuPy, Numba",
        (
            "holds if the GPU, transfers to and from it included, beats NumPy on the host by more than the"
            " noise in every problem; does not hold if it does in none; depends otherwise"
        ),
        d1,
    ),
    Claim(
        "D2",
        "003",
        '`np.float32` "for optimal GPU performance"',
        "CuPy",
        (
            "holds if float64 takes more time per element than float32 beyond the noise in every case"
            " measured; does not hold if it takes less beyond the noise in every case; depends otherwise"
        ),
        d2,
    ),
    Claim(
        "D3",
        "003",
        "CuPy's ufunc chains and `ElementwiseKernel` are the way to write the GPU code",
        "CuPy",
        (
            "on the article's example 3 in CuPy: holds if the article's form (a ufunc chain, then an"
            " ElementwiseKernel) runs within the noise of the fastest of CuPy's other ways for the same code"
            " (cupy.fuse, one ElementwiseKernel, a RawKernel) at every size; does not hold if slower beyond"
            " the noise at every size; depends otherwise; the C++ kernels stand beside and do not decide"
        ),
        d3,
    ),
    Claim(
        "E1",
        "004",
        '"Direct function calls from a global function to a device function are not permitted"',
        "PyCUDA",
        (
            "holds if PyCUDA's compiler refuses a SourceModule whose kernel calls a `__device__` function;"
            " does not hold if it runs and validates; not measured if it fails elsewhere or gives a wrong"
            " result"
        ),
        e1,
    ),
    Claim(
        "E2",
        "004",
        'struct data "needs explicit handling for memory alignment"',
        "PyCUDA",
        (
            "from the article's own struct array (`Point {float x, y}`) as it is: holds if it gives a wrong"
            " result or is refused; does not hold if it runs and validates; not measured if it fails"
            " elsewhere. Structs of mixed widths stand beside it; without the article's example they answer:"
            " does not hold if every one validates as it is, depends if a packed one does not (it needs"
            " `align=True`)"
        ),
        e2,
    ),
    Claim(
        "E3",
        "004",
        'page-locked host memory (`pagelocked_empty`) for "faster transfer"',
        "PyCUDA",
        (
            "holds if page-locked memory is faster than pageable by more than the noise in every copy"
            " measured (the article's 4 KiB and 256 MiB, each way, and the article's allocate-then-copy);"
            " does not hold if in none; depends otherwise"
        ),
        e3,
    ),
]


def answer_all(bench, facts, found, python):
    """[(claim, answered in, figures, verdict)] for every claim, in id order."""
    d = SimpleNamespace(bench=bench, facts=facts, found=found, python=python, noise=found["noise"])
    return [(c, *c.answer(d)) for c in CLAIMS]


def add(doc, bench, facts, found, python):
    rows = answer_all(bench, facts, found, python)
    doc.add("## The articles' claims, checked\n")
    articles = os.path.relpath(ARTICLES, os.path.abspath(doc.out_dir))
    doc.add(
        f"Each claim of [the articles]({articles}) (each quoted there with its article's question and"
        " examples), by its id, with the figures that answer it and the rule that turns them into the"
        f" verdict (the noise is {found['noise']:.1%}). *Answered in* names the system the figures come from;"
        " where that is not the article's own, it says so, and *not measured* means the figures the rule"
        " needs are not in these results.\n"
    )
    doc.add(
        table(
            ["id", "article", "claim", "article's system", "answered in", "figures", "rule", "verdict"],
            [
                [c.id, c.article, c.quote, c.system, where, figures, c.rule, f"**{verdict}**"]
                for c, where, figures, verdict in rows
            ],
        )
    )
    return rows
