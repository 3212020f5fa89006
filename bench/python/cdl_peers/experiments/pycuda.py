"""Articles 002 and 004 (PyCUDA), answered in PyCUDA: each claim's own form, run, validated and
timed in the peer's process (pycuda_peers.experiments calls experiments(dev) here).

  example  does each example run as written? (002: vector add, matrix multiply, shared-memory
           add; 004: vector add, matrix multiply, structs); where one fails, the error
           (pycuda_examples.py)
  C1       what runtime-compiled source costs: SourceModule on a new source (nvcc) and on a
           source PyCUDA has compiled before (its disk cache); and the route with no compiler at
           run time, a new op as data for 16's interpreter loaded from a file (interpreter_file.py)
  C2       article 002's shared-memory vector add against the plain one, 2^24 elements
  E1       a __global__ function calling a __device__ function, in a SourceModule
  E2       structs: article 004's Point {float x, y} from a NumPy structured array, and a struct
           of mixed widths from a packed and an align=True dtype
  E3       page-locked against pageable host memory: the copies at the article's size (4 KiB)
           and at 256 MiB, and the article's form (page-locked memory allocated for each call)

The articles use `import pycuda.autoinit`; here the primary context the peer has pushed is
current, which is the same thing for these calls.
"""
import os
import tempfile
import time
import uuid

import numpy as np

from cdl_peers import interpreter_file

from . import pycuda_examples
from .pycuda_examples import BLOCK, POINTS, VECTOR_ADD, VECTOR_ADD_SHARED
from cdl_peers.experiment import attempt, close_to, gpu_median_ms, host_median_ms

DEVICE_FUNCTION = """
__device__ float add_one(float v) { return v + 1.0f; }
__global__ void apply(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = add_one(x[i]);
}
"""

# A struct of mixed widths, as C lays it out: the double aligned to 8 bytes, 24 bytes in all.
MIXED = """
struct Record {
  signed char tag;
  double v;
  float w;
};
__global__ void weigh(const Record *r, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = r[i].v * r[i].w + r[i].tag;
}
__global__ void record_size(int *size) { *size = sizeof(Record); }
"""


def mixed_records(align, n=1 << 20):
    dtype = np.dtype([("tag", np.int8), ("v", np.float64), ("w", np.float32)], align=align)
    recs = np.zeros(n, dtype=dtype)
    rng = np.random.default_rng(4)
    recs["tag"], recs["v"], recs["w"] = rng.integers(-100, 100, n), rng.random(n), rng.random(n)
    return recs, recs["v"] * recs["w"].astype(np.float64) + recs["tag"]


def experiments(dev, quick):  # the quick suite runs them all as they are
    records = pycuda_examples.examples(dev)
    records.append(
        attempt(
            "C1",
            "PyCUDA SourceModule: a new source (nvcc), then the same source (PyCUDA's disk cache)",
            lambda: compile_states(dev),
            article="002",
        )
    )
    records.append(
        attempt(
            "C1",
            "PyCUDA, no compiler: a new op as data, run by 16's interpreter kernel loaded from a file",
            lambda: interpreter_new_op(dev),
            article="002",
        )
    )
    records.append(
        attempt(
            "C2",
            "article 002's shared-memory vector add / the plain one, 2^24 float32",
            lambda: shared_against_plain(dev),
            article="002",
        )
    )
    records.append(
        attempt(
            "E1",
            "a __global__ function calling a __device__ function (SourceModule)",
            lambda: device_function_call(dev),
            article="004",
        )
    )
    records += structs(dev)
    records.append(
        attempt(
            "E3",
            "page-locked / pageable host memory: copies and the article's allocate-then-copy",
            lambda: pinned_against_pageable(dev),
            article="004",
        )
    )
    return records


def compile_states(dev):
    """Three new sources (each a new comment, compiled into an empty cache directory) and the same
    three again (PyCUDA finds the cubin in its disk cache, keyed by the source and options). Both
    include loading the module; nvcc compiles for the device's architecture, so the driver's JIT
    cache plays no part."""
    new, hit = [], []
    with tempfile.TemporaryDirectory(prefix="cdl_pycuda_cache.") as cache:
        for i in range(3):
            source = f"// new op {uuid.uuid4().hex}\n" + DEVICE_FUNCTION.replace("1.0f", f"{i + 1}.0f")
            for times in (new, hit):
                t0 = time.perf_counter()
                f = dev.SourceModule(source, cache_dir=cache).get_function("apply")
                times.append((time.perf_counter() - t0) * 1e3)
        cached = len(os.listdir(cache))
    x = np.arange(BLOCK, dtype=np.float32)
    out = np.empty_like(x)
    f(dev.drv.In(x), dev.drv.Out(out), np.int32(x.size), block=(BLOCK, 1, 1), grid=(1, 1))
    return close_to(out, x + 3.0), {"new_source_ms": new, "disk_hit_ms": hit, "cache_entries": cached}


def interpreter_new_op(dev):
    """A new op (a new number in it) from its text to its first result on 2^20 floats with no
    compiler: its program written by cdl_run (a process), packed, and 16's kernel launched, from a
    module loaded from the build's file once (timed apart: once a process)."""
    drv, gpuarray = dev.drv, dev.gpuarray
    t0 = time.perf_counter()
    module = drv.module_from_file(interpreter_file.fatbin_path())
    load_ms = (time.perf_counter() - t0) * 1e3
    n = 1 << 20
    x = np.random.default_rng(7).random(n, dtype=np.float32)
    x_gpu, y_gpu = gpuarray.to_gpu(x), gpuarray.empty(n, dtype=np.float32)
    c = 1.0 + (uuid.uuid4().int % 1024) / 1024.0  # exact in float, new in every run
    dev.synchronize()
    t0 = time.perf_counter()
    doc = interpreter_file.encode(text=f"x * x + {c!r} * x + 1")
    encode_ms = (time.perf_counter() - t0) * 1e3
    function = module.get_function(interpreter_file.scalar_kernel(doc, 1))
    function(
        x_gpu.gpudata,
        y_gpu.gpudata,
        np.uint64(n),
        np.int32(1),
        interpreter_file.program_argument(doc),
        block=(BLOCK, 1, 1),
        grid=((n + BLOCK - 1) // BLOCK, 1),
    )
    dev.synchronize()
    first_ms = (time.perf_counter() - t0) * 1e3
    x64 = x.astype(np.float64)
    valid = close_to(y_gpu.get(), x64 * x64 + c * x64 + 1)
    return valid, {"module_load_ms": load_ms, "encode_ms": encode_ms, "first_result_ms": first_ms, "n": n}


def shared_against_plain(dev):
    gpuarray = dev.gpuarray
    n = 1 << 24
    rng = np.random.default_rng(6)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    x_gpu, y_gpu, out = gpuarray.to_gpu(x), gpuarray.to_gpu(y), gpuarray.empty(n, dtype=np.float32)
    figures, valid = {"n": n}, True
    for label, source, name in (
        ("plain_ms", VECTOR_ADD, "add"),
        ("shared_ms", VECTOR_ADD_SHARED, "add_shared"),
    ):
        f = dev.SourceModule(source).get_function(name)
        dev.poison(out)
        figures[label] = gpu_median_ms(
            dev,
            lambda: f(
                x_gpu.gpudata,
                y_gpu.gpudata,
                out.gpudata,
                np.int32(n),
                block=(BLOCK, 1, 1),
                grid=((n + BLOCK - 1) // BLOCK, 1),
            ),
        )
        valid = valid and close_to(out.get(), x.astype(np.float64) + y)
    figures["shared_over_plain"] = figures["shared_ms"] / figures["plain_ms"]
    return valid, figures


def device_function_call(dev):
    f = dev.SourceModule(DEVICE_FUNCTION).get_function("apply")
    x = np.arange(1 << 20, dtype=np.float32)
    out = np.empty_like(x)
    f(
        dev.drv.In(x),
        dev.drv.Out(out),
        np.int32(x.size),
        block=(BLOCK, 1, 1),
        grid=((x.size + BLOCK - 1) // BLOCK, 1),
    )
    return close_to(out, x.astype(np.float64) + 1), {}


def structs(dev):
    drv = dev.drv

    def points():
        """Article 004's kernel and struct, the NumPy structured array copied as it is."""
        f = dev.SourceModule(POINTS).get_function("processPoints")
        points_h = np.zeros(1024, dtype=[("x", np.float32), ("y", np.float32)])
        points_h["x"], points_h["y"] = np.linspace(0, 1, 1024), np.linspace(1, 2, 1024)
        points_d = drv.mem_alloc(points_h.nbytes)
        drv.memcpy_htod(points_d, points_h)
        f(points_d, np.int32(1024), block=(BLOCK, 1, 1), grid=(4, 1))
        got = np.empty_like(points_h)
        drv.memcpy_dtoh(got, points_d)
        return (
            close_to(got["x"], points_h["x"] * 2.0) and close_to(got["y"], points_h["y"] + 1.0),
            {"itemsize": points_h.dtype.itemsize},
        )

    def mixed(align):
        module = dev.SourceModule(MIXED)
        size = np.zeros(1, dtype=np.int32)
        module.get_function("record_size")(drv.Out(size), block=(1, 1, 1), grid=(1, 1))
        recs, expected = mixed_records(align)
        # The kernel reads n records of sizeof(Record) bytes: the buffer holds that many, whatever
        # NumPy's itemsize, so a layout that disagrees reads wrong values, never out of bounds.
        buf = np.zeros(max(recs.nbytes, recs.size * int(size[0])), dtype=np.uint8)
        buf[: recs.nbytes] = recs.view(np.uint8)
        out = np.empty(recs.size, dtype=np.float64)
        module.get_function("weigh")(
            drv.In(buf),
            drv.Out(out),
            np.int32(recs.size),
            block=(BLOCK, 1, 1),
            grid=((recs.size + BLOCK - 1) // BLOCK, 1),
        )
        return close_to(out, expected, rtol=1e-12, atol=0), {
            "itemsize": recs.dtype.itemsize,
            "c_sizeof": int(size[0]),
        }

    return [
        attempt(
            "E2",
            "PyCUDA: article 004's Point {float x, y} from a NumPy structured array, copied as it is",
            points,
            article="004",
        ),
        attempt(
            "E2", "PyCUDA: a struct (char, double, float) from a packed NumPy dtype", lambda: mixed(False)
        ),
        attempt(
            "E2",
            "PyCUDA: a struct (char, double, float) from a NumPy dtype with align=True",
            lambda: mixed(True),
        ),
    ]


def pinned_against_pageable(dev):
    drv = dev.drv
    figures, valid = {}, True
    for n in (1024, 1 << 26):  # float32: the article's 4 KiB, and 256 MiB
        d = drv.mem_alloc(4 * n)
        pageable = np.random.default_rng(7).random(n, dtype=np.float32)
        pinned = drv.pagelocked_empty(n, dtype=np.float32)
        pinned[:] = pageable
        row = {}
        for kind, host in (("pageable", pageable), ("pinned", pinned)):
            row[f"{kind}_htod_ms"] = host_median_ms(lambda: drv.memcpy_htod(d, host), repetitions=9)
            back = np.empty_like(host) if kind == "pageable" else drv.pagelocked_empty(n, dtype=np.float32)
            row[f"{kind}_dtoh_ms"] = host_median_ms(lambda: drv.memcpy_dtoh(back, d), repetitions=9)
            valid = valid and bool(np.array_equal(back, pageable))

        def allocate_then_copy(make):  # the article: a new host buffer for each result
            def call():
                c = make()
                drv.memcpy_dtoh(c, d)

            return call

        row["pageable_alloc_dtoh_ms"] = host_median_ms(
            allocate_then_copy(lambda: np.empty(n, dtype=np.float32)), repetitions=9
        )
        row["pinned_alloc_dtoh_ms"] = host_median_ms(
            allocate_then_copy(lambda: drv.pagelocked_empty(n, dtype=np.float32)), repetitions=9
        )
        figures[str(4 * n)] = row
    return valid, figures
