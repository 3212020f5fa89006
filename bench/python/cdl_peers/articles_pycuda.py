"""Articles 002 and 004 (PyCUDA), answered in PyCUDA: each claim's own form, run, validated and
timed in the peer's process (pycuda_peers.experiments calls experiments(dev) here).

  example  does each example run as written? (002: vector add, matrix multiply, shared-memory
           add; 004: vector add, matrix multiply, structs); where one fails, the error
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

from . import interpreter_file
from .experiment import attempt, close_to, gpu_median_ms, host_median_ms

BLOCK = 256

VECTOR_ADD = """
__global__ void add(float *x, float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = x[i] + y[i];
  }
}
"""

# Article 002's shared-memory form: both operands staged through shared memory, then added.
VECTOR_ADD_SHARED = """
__global__ void add_shared(float *x, float *y, float *out, int n) {
  __shared__ float sx[256];
  __shared__ float sy[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    sx[threadIdx.x] = x[i];
    sy[threadIdx.x] = y[i];
  }
  __syncthreads();
  if (i < n) {
    out[i] = sx[threadIdx.x] + sy[threadIdx.x];
  }
}
"""

MATRIX_MULTIPLY = """
__global__ void multiply(float *A, float *B, float *C, int widthA, int widthB) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < widthA && col < widthB) {
    float sum = 0;
    for (int k = 0; k < widthA; ++k) sum += A[row * widthA + k] * B[k * widthB + col];
    C[row * widthB + col] = sum;
  }
}
"""

DEVICE_FUNCTION = """
__device__ float add_one(float v) { return v + 1.0f; }
__global__ void apply(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = add_one(x[i]);
}
"""

POINTS = """
struct Point {
  float x;
  float y;
};
__global__ void processPoints(Point *points, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) {
    points[i].x *= 2.0f;
    points[i].y += 1.0f;
  }
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
    drv, SourceModule = dev.drv, dev.SourceModule
    n_small = 1024
    rng = np.random.default_rng(5)
    x, y = rng.random(n_small, dtype=np.float32), rng.random(n_small, dtype=np.float32)

    def two_inputs_one_output(f, a, b, *scalars, out=None, **launch):
        """The articles' host code around a kernel f(a, b, c, scalars...): mem_alloc, memcpy_htod
        of a and b, the launch, memcpy_dtoh of c into `out` (default: an array like a)."""
        a_d, b_d, c_d = drv.mem_alloc(a.nbytes), drv.mem_alloc(b.nbytes), drv.mem_alloc(a.nbytes)
        drv.memcpy_htod(a_d, a)
        drv.memcpy_htod(b_d, b)
        f(a_d, b_d, c_d, *scalars, **launch)
        out = np.empty_like(a) if out is None else out
        drv.memcpy_dtoh(out, c_d)
        return out

    vector_grid = {"block": (BLOCK, 1, 1), "grid": ((n_small + BLOCK - 1) // BLOCK, 1)}

    def vector_add(source, name):
        def run():
            f = SourceModule(source).get_function(name)
            out = two_inputs_one_output(f, x, y, np.int32(n_small), **vector_grid)
            return close_to(out, x.astype(np.float64) + y), {}

        return run

    def matrix_multiply(width, width_argument):
        def run():
            a, b = rng.random((width, width), dtype=np.float32), rng.random((width, width), dtype=np.float32)
            f = SourceModule(MATRIX_MULTIPLY).get_function("multiply")
            blocks = (width + 15) // 16
            c = two_inputs_one_output(
                f,
                a,
                b,
                width_argument(width),
                width_argument(width),
                block=(16, 16, 1),
                grid=(blocks, blocks, 1),
            )
            return close_to(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3), {}

        return run

    def add_with_in_argument():  # article 004's example 1: the size passed as cuda.In(n), n an int
        f = SourceModule(VECTOR_ADD).get_function("add")
        c = two_inputs_one_output(
            f, x, y, drv.In(n_small), out=drv.pagelocked_empty(n_small, dtype=np.float32), **vector_grid
        )
        return close_to(c, x.astype(np.float64) + y), {}

    def points_as_written():  # article 004's example 3, its statements in the order they run
        kernel = SourceModule(POINTS).get_function("processPoints")
        points_h = np.zeros(1024, dtype=[("x", np.float32), ("y", np.float32)])
        points_h["x"], points_h["y"] = rng.random(1024), rng.random(1024)
        data = points_h.astype(np.uint8).tobytes()  # the call's argument, evaluated first
        n = 1024
        points_d = drv.mem_alloc(n * 8)  # struct.Struct("ff").size
        points_d_aligned = points_d.get_ptr()
        drv.memcpy_htod(points_d_aligned, data)
        kernel(points_d, drv.In(n), block=(256, 1, 1), grid=((n + 255) // 256, 1))
        result = drv.pagelocked_empty(n, dtype="V2f")
        drv.memcpy_dtoh(result, points_d_aligned)
        # Were it to run: the bytes it sent, as points, against what came back.
        sent = np.frombuffer(data, dtype=points_h.dtype)
        got = np.frombuffer(result.tobytes(), dtype=points_h.dtype)
        return close_to(got["x"], sent["x"] * 2) and close_to(got["y"], sent["y"] + 1), {}

    records = [
        attempt(
            "example",
            "002 example 1: vector add (mem_alloc, memcpy_htod, np.int32(n))",
            vector_add(VECTOR_ADD, "add"),
            article="002",
        ),
        attempt(
            "example",
            "002 example 2: matrix multiply, 1024 x 1024",
            matrix_multiply(1024, np.int32),
            article="002",
        ),
        attempt(
            "example",
            "002 example 3: shared-memory vector add (with example 1's host code, which it elides)",
            vector_add(VECTOR_ADD_SHARED, "add_shared"),
            article="002",
        ),
        attempt(
            "example",
            "004 example 1: vector add with the size passed as cuda.In(n)",
            add_with_in_argument,
            article="004",
        ),
        attempt(
            "example",
            "004 example 2: matrix multiply (64 x 64) with the widths passed as cuda.In(width)",
            matrix_multiply(64, drv.In),
            article="004",
        ),
        attempt(
            "example",
            "004 example 3: Point structs (astype(uint8), get_ptr(), dtype 'V2f')",
            points_as_written,
            article="004",
        ),
    ]
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
