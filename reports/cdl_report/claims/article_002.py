"""The claims of article 002 (C1, C2): each claim, its rule in words, and the function that
answers it from the figures."""
from ..experiments import median_of, outcome
from ..stats import span
from .rules import DEPENDS, FAILS, HOLDS, Claim, fmt_ms, missing, one, peer_over, peer_ratios, staging


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


CLAIMS = [
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
        timed=True,
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
        timed=True,
    ),
]
