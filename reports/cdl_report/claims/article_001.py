"""The claims of article 001 (B1, B2, B3, B4): each claim, its rule in words, and the function that
answers it from the figures."""
from ..experiments import REFUSED, WORKS, not_counted, outcome, tried
from ..stats import span
from .rules import FAILS, HOLDS, UNMEASURED
from .rules import Claim, by_trial, compiles, direction, fact, missing, one, peer_over, records_of


def b1(d):
    args = [e for e in records_of(d, "A1") + records_of(d, "B1") if "argument" in e["name"]]
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


CLAIMS = [
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
        timed=True,
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
]
