"""What the articles' experiments (cdl_peers/experiments/) and a new op's sessions (newop.py)
share: one record per question for the results file, with where an exception was raised; medians on
the GPU's clock and on the host's; a constant new to every compile cache; a comparison with a
tolerance."""
import itertools
import secrets
import statistics
import sys
import time

import numpy as np

from .harness import error_text
from .problem import CHUNK


class ChildError(Exception):
    """An experiment's exception in a process of its own, with where it was raised there."""

    def __init__(self, text, where):
        super().__init__(text)
        self.where = where


def attempt(claim, name, run, article=None):
    """Runs one experiment: run() returns (valid, figures) where it ran. The record keeps the claim
    it answers (an id of reports/cdl_report/claims/articles.md, or "example" for "does the
    article's example run as written"), whether it ran and validated, its figures, and, where it
    raised, the exception verbatim and where it was raised (the innermost frame, and the type of a
    `value` it rejected)."""
    record = {"claim": claim, "name": name, "runs": False, "valid": False, "error": "", "figures": {}}
    if article:
        record["article"] = article
    start = time.perf_counter()
    try:
        valid, figures = run()
        record.update(runs=True, valid=bool(valid), figures=figures or {})
    except Exception as e:  # the article's form failing is a finding, recorded, never a crash of the run
        record["error"] = str(e) if isinstance(e, ChildError) else error_text(e)
        record["raised_at"] = e.where if isinstance(e, ChildError) else raised_at(e)
    outcome = (
        ("runs, " + ("validated" if record["valid"] else "WRONG RESULT"))
        if record["runs"]
        else "fails: " + record["error"].splitlines()[0][:200]
    )
    print(
        f"cdl_peers: experiment {claim} '{name}': {outcome} ({time.perf_counter() - start:.1f} s)",
        file=sys.stderr,
        flush=True,
    )
    return record


def raised_at(exc):
    """'package/file.py:line in function' of the frame that raised, and the type of the value it
    was checking when that frame has a local called `value` (how a version mismatch shows)."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame, path = tb.tb_frame, tb.tb_frame.f_code.co_filename
    path = path.split("site-packages/")[-1].split("dist-packages/")[-1]
    where = f"{path}:{tb.tb_lineno} in {frame.f_code.co_name}"
    if "value" in frame.f_locals:
        t = type(frame.f_locals["value"])
        where += f" (value of type {t.__module__}.{t.__qualname__})"
    return where


def gpu_median_ms(dev, call, repetitions=15, flush=True):
    """Median of CUDA-event times of call() after one untimed call, the L2 flushed before each."""
    call()
    times = []
    for _ in range(repetitions):
        if flush:
            dev.flush_l2()
        times.append(dev.time_ms(call))
    return statistics.median(times)


def host_median_ms(call, synchronize=lambda: None, repetitions=15, warm=True):
    """Median host-clock time of call() up to synchronize() returning (transfers, NumPy)."""
    if warm:
        call()
        synchronize()
    times = []
    for _ in range(repetitions):
        synchronize()
        t0 = time.perf_counter()
        call()
        synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


# Counts from a random start: new in every call of a process and, all but surely, of every earlier run.
_fresh = itertools.count(secrets.randbelow(1 << 21))


def fresh_constant():
    """An integer below 2^22 (exact in float32, with room for x * x of a small x), new in every call:
    put in a new op as a constant, it reaches the machine code, so no compile cache can answer the
    compile. A new comment is not enough: NVRTC's cache through the driver keys on what its front end
    makes of a source, and answered texts that differed only in a comment (bench/jit_stages.cpp)."""
    return next(_fresh) % (1 << 22) + 1


def close_to(got, expected, rtol=1e-5, atol=1e-6):
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.ndim == 0:
        return bool(np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol))
    got, expected = got.reshape(-1), expected.reshape(-1)
    return all(
        np.allclose(
            got[i : i + CHUNK].astype(np.float64),
            expected[i : i + CHUNK].astype(np.float64),
            rtol=rtol,
            atol=atol,
        )
        for i in range(0, got.size, CHUNK)
    )
