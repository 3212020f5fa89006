"""The claims of article 000 (A1, A2, A3): each claim, its rule in words, and the function that
answers it from the figures."""
from ..experiments import not_counted, outcome
from .rules import DEPENDS, FAILS, HOLDS, UNMEASURED
from .rules import Claim, by_trial, failed_experiment, fmt_ms, missing, one, staging


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
        timed=True,
    ),
]
