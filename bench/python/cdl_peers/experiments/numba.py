"""Articles 000, 001, 003 and 004 (Numba), answered in Numba: each claim's own form, run, validated
and timed in the peer's process (numba_peers.experiments calls experiments(dev) here).

  A1, B1  a function handed to a kernel as an argument (an @njit function, a device function,
          a Python lambda), and as a global, which is how Numba takes a function
  A2      "a pre-compiled function avoids the overhead of dynamic compilation": the @njit
          function compiled on the host first, then the kernel's first call, in new processes
  A3      article 000's shared-memory kernel against the same kernel reading global memory
  B2–B4, D1 and a new function's compile in each cache state: numba_later.py
  E2      NumPy structured arrays (mixed field widths, packed and align=True) in a Numba kernel

Where the article's code fails, the record keeps the error and where it was raised; where a
form that runs is measured instead, the record's name says which.
"""
import importlib.metadata
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

from cdl_peers import experiment, harness
from cdl_peers.experiment import attempt, close_to, gpu_median_ms

BLOCK = 256
BIG = 1 << 26  # float32 elements: 256 MiB in, 256 MiB out, far past any L2


def grid(n):
    return (n + BLOCK - 1) // BLOCK


def versions():
    """numba, numba-cuda and numpy, and what numba-cuda's metadata says it needs of the other two."""
    out = {"numpy": np.__version__}
    for package in ("numba", "numba-cuda"):
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            out[package] = "not installed"
    try:
        out["numba-cuda requires"] = [
            r
            for r in importlib.metadata.requires("numba-cuda") or []
            if r.split()[0].startswith(("numba", "numpy")) and "extra" not in r
        ]
    except importlib.metadata.PackageNotFoundError:
        pass
    return out


def experiments(dev, quick):
    """The claims' experiments; `quick` (the quick suite) changes none of them."""
    from . import numba_later as later  # it takes this module's helpers: imported here, not above

    records = function_arguments(dev)
    records.append(precompiled_function())
    records += shared_memory(dev)
    records += later.kernels_calling_kernels(dev)
    records += later.task_records(dev)
    records += later.numpy_against_gpu(dev)
    records += structured_arrays(dev)
    records.append(later.compile_states(dev))
    return records


# --- A1, B1: a function as a kernel argument, and as a global ----------------------------------


def function_arguments(dev):
    """Article 000's apply_lambda kernel, given the function each way the articles suggest."""
    import numba

    cuda = dev.cuda
    x = (np.arange(1000, dtype=np.float32) / np.float32(1000)) + np.float32(0.25)
    expected = x.astype(np.float64) ** 2 + 2 * x.astype(np.float64) + 1
    d_x = cuda.to_device(x)

    def my_lambda(val):
        return val**2 + 2 * val + 1

    def as_argument(func):
        @cuda.jit
        def apply_lambda(xs, out, func):
            idx = cuda.grid(1)
            if idx < xs.size:
                out[idx] = func(xs[idx])

        def run():
            out = cuda.device_array_like(d_x)
            apply_lambda[grid(x.size), BLOCK](d_x, out, func)
            return close_to(out.copy_to_host(), expected), {}

        return run

    def as_global(func):
        @cuda.jit
        def apply_global(xs, out):
            idx = cuda.grid(1)
            if idx < xs.size:
                out[idx] = func(xs[idx])

        def run():
            out = cuda.device_array_like(d_x)
            apply_global[grid(x.size), BLOCK](d_x, out)
            return close_to(out.copy_to_host(), expected), {}

        return run

    njit_arg = attempt(
        "A1",
        "an @njit function as a kernel argument (article 000)",
        as_argument(numba.njit(my_lambda)),
        article="000",
    )
    njit_arg["figures"]["versions"] = versions()
    return [
        njit_arg,
        attempt(
            "B1",
            "a @cuda.jit(device=True) function as a kernel argument",
            as_argument(cuda.jit(device=True)(my_lambda)),
        ),
        attempt(
            "B1", "a Python lambda as a kernel argument", as_argument(lambda val: val**2 + 2 * val + 1)
        ),
        attempt("B1", "an @njit function called from a kernel as a global", as_global(numba.njit(my_lambda))),
        attempt(
            "B1",
            "a device function called from a kernel as a global (closure)",
            as_global(cuda.jit(device=True)(my_lambda)),
        ),
    ]


# --- experiments in a process of their own --------------------------------------------------------


def in_new_process(name, *args):
    """Runs CHILDREN[name](*args) in a new Python process and returns its (valid, figures): for what
    must start cold (A2), and for what may leave the GPU in an error state (a misaligned load)."""
    code = f"import cdl_peers; from cdl_peers.experiments import numba as a; a.child({name!r}, *{args!r})"
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=300
    )
    if r.returncode != 0:
        raise RuntimeError(harness.failure_reason(r.stderr, r.returncode))
    answer = json.loads(r.stdout.strip().splitlines()[-1])
    if "error" in answer:
        raise experiment.ChildError(answer["error"], answer["raised_at"])
    return answer["valid"], answer["figures"]


def child(name, *args):
    """The child's side: its answer, or the exception it raised, as one JSON line."""
    from numba import cuda

    if not hasattr(np, "row_stack"):  # see numba_peers.connect
        np.row_stack = np.vstack
    try:
        valid, figures = CHILDREN[name](cuda, *args)
        print(json.dumps({"valid": valid, "figures": figures}))
    except Exception as e:
        print(json.dumps({"error": harness.error_text(e), "raised_at": experiment.raised_at(e)}))


# --- A2: does a pre-compiled (@njit) function spare the kernel its compile? ----------------------


def precompiled(cuda, mode):
    """In a new process: compiles and runs one unrelated kernel first, so that what is timed is
    this function's compile and not Numba's start-up; then, for mode "njit", the article's @njit
    function compiled on the host by a first call, and a kernel calling it; for mode "device",
    the same kernel calling a device function made at run time."""
    import numba

    x = cuda.to_device((np.arange(1000, dtype=np.float32) / np.float32(1000)) + np.float32(0.25))
    out = cuda.device_array_like(x)

    @cuda.jit
    def warm(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = 0

    warm[grid(x.size), BLOCK](out)
    cuda.synchronize()

    def my_lambda(val):
        return val**2 + 2 * val + 1

    t = {}
    if mode == "njit":
        f = numba.njit(my_lambda)
        t0 = time.perf_counter()
        f(np.float32(1.5))  # the host compile the article calls "pre-compiled"
        t["host_compile_ms"] = (time.perf_counter() - t0) * 1e3
    else:
        f = cuda.jit(device=True)(my_lambda)

    @cuda.jit
    def apply_global(xs, ys):
        idx = cuda.grid(1)
        if idx < xs.size:
            ys[idx] = f(xs[idx])

    for label in ("first_call_ms", "second_call_ms"):
        t0 = time.perf_counter()
        apply_global[grid(x.size), BLOCK](x, out)
        cuda.synchronize()
        t[label] = (time.perf_counter() - t0) * 1e3
    xs = x.copy_to_host().astype(np.float64)
    return close_to(out.copy_to_host(), xs**2 + 2 * xs + 1), t


def precompiled_function():
    def run():
        (njit_ok, njit), (device_ok, device) = in_new_process("precompiled", "njit"), in_new_process(
            "precompiled", "device"
        )
        figures = {
            "njit_host_compile_ms": njit["host_compile_ms"],
            "njit_first_call_ms": njit["first_call_ms"],
            "njit_second_call_ms": njit["second_call_ms"],
            "device_first_call_ms": device["first_call_ms"],
            "device_second_call_ms": device["second_call_ms"],
        }
        return njit_ok and device_ok, figures

    return attempt(
        "A2",
        (
            "a kernel calling the article's @njit function compiled on the host first, against one calling a "
            "device function made at run time, each in a new process"
        ),
        run,
        article="000",
    )


# --- A3: article 000's shared-memory kernel -----------------------------------------------------


def shared_memory(dev):
    """The article's shared_memory_example (its function as an argument fails as in A1, so it is
    a global here), against the same kernel reading global memory, on 2^26 float32 elements. The
    article's barrier sits inside `if idx < x.size`; with n a multiple of the block no thread
    skips it (the article's form, kept; with any other n it would be undefined behaviour)."""
    import numba

    cuda = dev.cuda

    @numba.njit
    def my_lambda_2(val):
        return np.sin(val)

    as_written = attempt(
        "example",
        "000 example 3: shared_memory_example(x, out, my_lambda_2), the function an argument",
        lambda: _shared_as_written(cuda, my_lambda_2),
        article="000",
    )
    x = ((np.arange(BIG, dtype=np.float32) % 4096) / np.float32(4096)).astype(np.float32)
    expected = np.sin(x.astype(np.float64))

    def run():
        try:  # the article's @njit function with np.sin, else a device function with math.sin
            return measure_staging(my_lambda_2, "the article's @njit my_lambda_2 (np.sin)")
        except Exception as e:
            return measure_staging(
                cuda.jit(device=True)(lambda v: math.sin(v)),
                f"a device function with math.sin (the @njit one fails: {harness.error_text(e, 1)})",
            )

    def measure_staging(f, function):
        @cuda.jit
        def global_only(xs, out):
            idx = cuda.grid(1)
            if idx < xs.size:
                out[idx] = f(xs[idx])

        @cuda.jit
        def staged(xs, out):
            s_x = cuda.shared.array(BLOCK, dtype=np.float32)
            idx = cuda.grid(1)
            tid = cuda.threadIdx.x
            if idx < xs.size:
                s_x[tid] = xs[idx]
                cuda.syncthreads()
                out[idx] = f(s_x[tid])

        d_x, out = cuda.to_device(x), cuda.device_array(BIG, dtype=np.float32)
        figures, valid = {"n": BIG, "function": function}, True
        for name, kernel in (("global_ms", global_only), ("staged_ms", staged)):
            dev.poison(out)
            figures[name] = gpu_median_ms(dev, lambda: kernel[grid(BIG), BLOCK](d_x, out))
            valid = valid and close_to(out.copy_to_host(), expected, rtol=1e-5, atol=1e-6)
        figures["staged_over_global"] = figures["staged_ms"] / figures["global_ms"]
        return valid, figures

    return [
        as_written,
        attempt(
            "A3",
            (
                "article 000's shared-memory kernel (function as a global) / the same kernel "
                "reading global memory"
            ),
            run,
            article="000",
        ),
    ]


def _shared_as_written(cuda, func):
    @cuda.jit
    def shared_memory_example(x, out, func):
        s_x = cuda.shared.array(256, dtype=np.float32)
        idx = cuda.grid(1)
        tid = cuda.threadIdx.x
        if idx < x.size:
            s_x[tid] = x[idx]
            cuda.syncthreads()
            out[idx] = func(s_x[tid])

    x = np.arange(1000, dtype=np.float32)
    out = np.empty_like(x)
    shared_memory_example[grid(x.size), BLOCK](x, out, func)
    return close_to(out, np.sin(x.astype(np.float64))), {}


# --- E2: NumPy structured arrays ----------------------------------------------------------------


def structured_arrays(dev):
    """A record of mixed widths (int8, float64, float32) as NumPy lays it out packed (13 bytes)
    and with align=True (24 bytes, C's layout). Numba reads each field at the offset the dtype
    gives; each layout runs in a process of its own, as a packed float64 is a misaligned load
    if Numba does not know it is one."""
    return [
        attempt(
            "E2",
            f"Numba: a structured array (int8, float64, float32), {'align=True' if align else 'packed'}",
            lambda align=align: in_new_process("structured", align),
        )
        for align in (False, True)
    ]


def structured(cuda, align):
    @cuda.jit
    def weigh(recs, out):
        i = cuda.grid(1)
        if i < recs.size:
            r = recs[i]
            out[i] = r.v * r.w + r.tag

    dtype = np.dtype([("tag", np.int8), ("v", np.float64), ("w", np.float32)], align=align)
    recs = np.zeros(1 << 20, dtype=dtype)
    rng = np.random.default_rng(4)
    recs["tag"], recs["v"], recs["w"] = (
        rng.integers(-100, 100, recs.size),
        rng.random(recs.size),
        rng.random(recs.size),
    )
    out = cuda.device_array(recs.size, dtype=np.float64)
    weigh[grid(recs.size), BLOCK](cuda.to_device(recs), out)
    expected = recs["v"] * recs["w"].astype(np.float64) + recs["tag"]
    return close_to(out.copy_to_host(), expected, rtol=1e-12, atol=0), {"itemsize": dtype.itemsize}


CHILDREN = {"precompiled": precompiled, "structured": structured}
