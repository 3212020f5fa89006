"""Article 003 (CuPy and NumPy), answered in CuPy: its examples run and validated, NumPy on the
host against the GPU with the transfers the article's workflow has, and what sets the speed of
CuPy's own float32 kernel (cupy_peers.experiments calls experiments(dev) here).

  example  article 003's CuPy examples 1 and 3, as written, on its sizes
  D1       NumPy on the host against CuPy, with the transfers to and from the GPU and without
  D3       example 3 as the article writes it (a ufunc chain, then an ElementwiseKernel) against
           the other ways CuPy offers for the same code: cupy.fuse, one ElementwiseKernel, a RawKernel
  D2       ElementwiseKernel's float32 and float64 map at each block size it can be launched
           with, beside the copy bandwidth: what the outlier in the peers table comes from
  E2       a struct of mixed widths from NumPy's record arrays, packed and aligned, to a RawKernel
  compile  a RawKernel on a new source, the same source again (CuPy's memory cache), and after
           CuPy forgets it (its disk cache)
"""
import time

import numpy as np

from cdl_peers import harness
from .pycuda import MIXED, mixed_records
from cdl_peers.experiment import attempt, close_to, fresh_constant, gpu_median_ms, host_median_ms

BLOCK = 256


def experiments(dev, quick):
    cp = dev.cp
    return [
        attempt(
            "example",
            "003 example 1: cp.sin on 1024 x 1024 float32, asarray and asnumpy",
            lambda: (
                close_to(
                    example_sin(cp, example_input(1024))[1],
                    np.sin(example_input(1024).astype(np.float64)),
                    rtol=1e-5,
                    atol=1e-6,
                ),
                {},
            ),
            article="003",
        ),
        attempt(
            "example",
            "003 example 3: cp.exp(cp.sin(x) * cp.cos(x)), then an ElementwiseKernel conditional",
            lambda: (
                close_to(
                    example_chain(cp, example_input(1000))[1],
                    chain_reference(example_input(1000)),
                    rtol=1e-5,
                    atol=1e-6,
                ),
                {},
            ),
            article="003",
        ),
        attempt(
            "D1",
            "NumPy on the host / CuPy with and without the transfers, article 003's examples",
            lambda: numpy_against_cupy(dev),
            article="003",
        ),
        attempt(
            "D3",
            (
                "article 003's example 3 as written (a ufunc chain, then its ElementwiseKernel) / the same"
                " code through cupy.fuse, one ElementwiseKernel and a RawKernel"
            ),
            lambda: example_3_ways(dev),
            article="003",
        ),
        attempt(
            "D2",
            (
                "ElementwiseKernel's map (quadratic, k = 1) at each block size, float32 and float64, against"
                " copy"
            ),
            lambda: elementwise_block_sizes(dev, 1 << (24 if quick else 26)),
            article="003",
        ),
        *structs(dev),
        attempt(
            "compile",
            "CuPy RawKernel: a new source, the same source (memory), the same after clear_memo (disk)",
            lambda: compile_states(dev),
        ),
    ]


def example_input(n):
    return (np.arange(n * n, dtype=np.float32).reshape(n, n) % 1000) / np.float32(1000)


def example_sin(cp, x_cpu):
    """Example 1: to the GPU, one ufunc, back."""
    x_gpu = cp.asarray(x_cpu)
    y_gpu = cp.sin(x_gpu)
    return x_gpu, cp.asnumpy(y_gpu)


_conditional = None


def conditional(cp):
    """The article's ElementwiseKernel of example 3, made at the first call."""
    global _conditional
    if _conditional is None:
        _conditional = cp.ElementwiseKernel("T x", "T y", "y = x > 0.5 ? x * 2 : x / 2", "custom_conditional")
    return _conditional


def example_chain(cp, x_cpu):
    """Example 3: a ufunc chain, then the article's ElementwiseKernel."""
    x_gpu = cp.asarray(x_cpu)
    y_gpu = cp.exp(cp.sin(x_gpu) * cp.cos(x_gpu))
    z_gpu = conditional(cp)(y_gpu)
    return x_gpu, cp.asnumpy(z_gpu)


def chain_reference(x):
    y = np.exp(np.sin(x.astype(np.float64)) * np.cos(x.astype(np.float64)))
    return np.where(y > 0.5, y * 2, y / 2)


# Example 3 in one hand-written kernel, as a RawKernel takes it.
RAW_CHAIN = r"""
extern "C" __global__ void chain(const float* x, float* z, long long n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float y = expf(sinf(x[i]) * cosf(x[i]));
    z[i] = y > 0.5f ? y * 2.0f : y / 2.0f;
  }
}
"""


def example_3_ways(dev):
    """Example 3 as the article writes it (four ufunc kernels and a temporary each, then its
    ElementwiseKernel) against the other ways CuPy offers for the same code, each one kernel:
    cupy.fuse of the whole function, one ElementwiseKernel holding it all, and a RawKernel. Each is
    validated, then timed by CUDA events on data already on the GPU (one untimed call first, so no
    compile is timed), at the article's 1000 x 1000 and at 4096 x 4096."""
    cp = dev.cp
    article = conditional(cp)
    whole = cp.ElementwiseKernel(
        "T x", "T z", "T y = exp(sin(x) * cos(x)); z = y > 0.5 ? y * 2 : y / 2", "example_3_whole"
    )
    raw = cp.RawKernel(RAW_CHAIN, "chain")

    @cp.fuse()
    def fused(x):
        y = cp.exp(cp.sin(x) * cp.cos(x))
        return cp.where(y > 0.5, y * 2, y / 2)

    def raw_call(x):
        z = cp.empty_like(x)
        raw(((x.size + BLOCK - 1) // BLOCK,), (BLOCK,), (x, z, np.int64(x.size)))
        return z

    ways = {
        "article": lambda x: article(cp.exp(cp.sin(x) * cp.cos(x))),
        "fuse": fused,
        "elementwise": whole,
        "raw": raw_call,
    }
    figures, valid = {}, True
    for size in (1000, 4096):
        x_cpu = example_input(size)
        x, reference = cp.asarray(x_cpu), chain_reference(x_cpu)
        row = {}
        for name, way in ways.items():
            if close_to(cp.asnumpy(way(x)), reference, rtol=1e-5, atol=1e-6):
                row[f"{name}_ms"] = gpu_median_ms(dev, lambda: way(x), repetitions=7)
            else:
                valid = False  # a wrong result is never timed
        figures[f"{size}x{size}"] = row
    return valid, figures


def numpy_against_cupy(dev):
    """Each example at the article's size and at 4096 x 4096: NumPy on the host (one core, as the
    article says), CuPy including the copy to the GPU and back (the article's workflow), and
    CuPy's kernels alone (CUDA events, the data already on the GPU). After one untimed call each,
    so no compile is in the figures."""
    cp = dev.cp
    figures, valid = {}, True
    numpy_forms = {
        "sin": lambda x: np.sin(x),
        "chain": lambda x: np.where((y := np.exp(np.sin(x) * np.cos(x))) > 0.5, y * 2, y / 2),
    }
    cupy_forms = {"sin": example_sin, "chain": example_chain}
    for name, size in (("sin", 1024), ("chain", 1000), ("sin", 4096), ("chain", 4096)):
        x = example_input(size)
        reference = np.sin(x.astype(np.float64)) if name == "sin" else chain_reference(x)
        valid = valid and close_to(cupy_forms[name](cp, x)[1], reference, rtol=1e-5, atol=1e-6)
        x_gpu = cp.asarray(x)
        on_gpu = (
            (lambda: cp.sin(x_gpu))
            if name == "sin"
            else (lambda: conditional(cp)(cp.exp(cp.sin(x_gpu) * cp.cos(x_gpu))))
        )
        figures[f"{name} {size}x{size}"] = {
            "numpy_ms": host_median_ms(lambda: numpy_forms[name](x), repetitions=7),
            "gpu_with_transfers_ms": host_median_ms(
                lambda: cupy_forms[name](cp, x), dev.synchronize, repetitions=7
            ),
            "gpu_kernels_ms": gpu_median_ms(dev, on_gpu, repetitions=7),
        }
    return valid, figures


def elementwise_block_sizes(dev, n):
    """The peers table's ElementwiseKernel map at 0.57 of copy in float32 against 0.99 in float64
    (H100): the same kernel launched with each block size, and a one-element-per-thread RawKernel
    beside it. CuPy launches its elementwise kernels with 128 threads a block unless told. n
    elements of each type (2^26; the quick suite's 2^24 is past the L2 all the same)."""
    cp = dev.cp
    copy_gbs = harness.measure_copy_gbs(dev, dev.props["l2_bytes"])
    figures, valid = {"copy_GB/s": copy_gbs, "n": n}, True
    body = "y = x * x + T(2) * x + T(1);"
    kernel = cp.ElementwiseKernel("T x", "T y", body, "cdl_block_size_map")
    for dtype in (np.float32, np.float64):
        x = cp.asarray(np.random.default_rng(8).random(n).astype(dtype))
        y = cp.empty_like(x)
        expected = (lambda v: v * v + 2 * v + 1)(cp.asnumpy(x).astype(np.float64))
        row = {}
        for block in (None, 128, 256, 512, 1024):
            label = "default" if block is None else str(block)
            call = (lambda: kernel(x, y)) if block is None else (lambda b=block: kernel(x, y, block_size=b))
            y.fill(np.nan)
            ms = gpu_median_ms(dev, call)
            valid = valid and close_to(cp.asnumpy(y), expected, rtol=1e-6)
            row[label] = {"ms": ms, "frac_copy": 2 * n * x.itemsize / (ms * 1e-3) / 1e9 / copy_gbs}
        figures[np.dtype(dtype).name] = row
    return valid, figures


def structs(dev):
    """The records as a CuPy array of the structured dtype, and as bytes, to a RawKernel whose C
    struct must match NumPy's layout."""
    cp = dev.cp
    module = cp.RawModule(code='extern "C" {\n' + MIXED + "\n}")

    def as_structured_array():  # an aligned record array handed to the kernel as it is
        recs, expected = mixed_records(True)
        out = cp.empty(recs.size, dtype=cp.float64)
        module.get_function("weigh")(
            ((recs.size + BLOCK - 1) // BLOCK,), (BLOCK,), (cp.asarray(recs), out, np.int32(recs.size))
        )
        return close_to(out.get(), expected, rtol=1e-12, atol=0), {"itemsize": recs.dtype.itemsize}

    def mixed(align):
        size = cp.zeros(1, dtype=cp.int32)
        module.get_function("record_size")((1,), (1,), (size,))
        recs, expected = mixed_records(align)
        c_size = int(size.get()[0])
        buf = cp.zeros(max(recs.nbytes, recs.size * c_size), dtype=cp.uint8)
        buf[: recs.nbytes] = cp.asarray(recs.view(np.uint8))
        out = cp.empty(recs.size, dtype=cp.float64)
        module.get_function("weigh")(
            ((recs.size + BLOCK - 1) // BLOCK,), (BLOCK,), (buf, out, np.int32(recs.size))
        )
        return close_to(out.get(), expected, rtol=1e-12, atol=0), {
            "itemsize": recs.dtype.itemsize,
            "c_sizeof": c_size,
        }

    return [
        attempt(
            "E2",
            "CuPy: cp.asarray of an align=True structured array, handed to the kernel",
            as_structured_array,
        ),
        attempt(
            "E2",
            "CuPy: a struct (char, double, float) from a packed NumPy dtype, as bytes",
            lambda: mixed(False),
        ),
        attempt(
            "E2",
            "CuPy: a struct (char, double, float) from a NumPy dtype with align=True, as bytes",
            lambda: mixed(True),
        ),
    ]


def compile_states(dev):
    """CuPy keys compiled kernels by source and options: in memory (per process) and on disk
    (CUPY_CACHE_DIR, which the peers' runner points at an empty directory)."""
    cp = dev.cp
    c = fresh_constant()  # in the machine code: no cache has seen this kernel
    source = (
        'extern "C" __global__ void op(const float* x, float* y, int n) {\n'
        f"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = x[i] * x[i] + {c}.0f;\n}}\n"
    )
    x = cp.arange(BLOCK, dtype=cp.float32)
    y = cp.empty_like(x)
    figures = {"constant": c}

    def first_call(label):
        t0 = time.perf_counter()
        cp.RawKernel(source, "op")((1,), (BLOCK,), (x, y, np.int32(BLOCK)))
        dev.synchronize()
        figures[label] = (time.perf_counter() - t0) * 1e3

    first_call("new_source_ms")
    first_call("memory_hit_ms")
    clear = getattr(getattr(cp, "_util", None), "clear_memo", None)
    if clear is not None:
        clear()
        first_call("disk_hit_ms")
    else:
        figures["disk_hit_ms"] = "not measured: this CuPy has no cupy._util.clear_memo"
    return close_to(y.get(), cp.asnumpy(x).astype(np.float64) ** 2 + c), figures
