"""CuPy, the way article 003 writes it.

  cupy.ufunc_chain     y = x*x + 2*x + 1 as NumPy-style array expressions: no kernel written,
                       but every operator is its own kernel with its own temporary, so the data
                       crosses memory once per operator (quadratic, k = 1; zip: x + y).
  cupy.ElementwiseKernel
                       CuPy writes the indexing loop; the body is a line of CUDA C (the
                       catalogue's op). Compiled by NVRTC at the first call for each dtype, then
                       cached in memory and on disk (~/.cupy/kernel_cache; this harness points
                       CUPY_CACHE_DIR at an empty directory so that the first call is a compile).
  cupy.RawKernel       the whole kernel as CUDA C (sources.py), compiled by NVRTC at the first
                       call: PyCUDA's SourceModule, inside CuPy.

To see the machine code: cupy.RawKernel(...).compile() then .attributes for registers, or set
CUPY_CACHE_SAVE_CUDA_SOURCE=1 and run cuobjdump -sass on the cubin in the cache directory.
"""
import numpy as np

from . import harness, sources

NAME = "cupy"


def connect():
    (cp,) = harness.imported("cupy", "cupy")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise harness.Unavailable("no CUDA device visible")
    except cp.cuda.runtime.CUDARuntimeError as e:
        raise harness.Unavailable(f"no usable CUDA device ({e})")
    return cp.__version__, CupyDevice(cp)


class CupyDevice(harness.Device):
    def __init__(self, cp):
        self.cp = cp
        p = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        self.props = {
            "name": p["name"].decode() if isinstance(p["name"], bytes) else p["name"],
            "l2_bytes": int(p["l2CacheSize"]),
            "cc": f"{p['major']}.{p['minor']}",
        }
        size, self.flush_words, self.flush_blocks = sources.flush_shape(
            self.props["l2_bytes"], int(p["multiProcessorCount"])
        )
        self.scratch, self.sink = cp.zeros(size, dtype=cp.uint8), cp.zeros(1, dtype=cp.uint32)
        self.flush_kernel = cp.RawKernel(sources.FLUSH_SOURCE, sources.FLUSH_NAME)
        self.start, self.stop = cp.cuda.Event(), cp.cuda.Event()

    def upload(self, array):
        return self.cp.asarray(array)

    def empty_like(self, array):
        return self.cp.empty(array.shape, dtype=array.dtype)

    def download(self, buffer):
        return self.cp.asnumpy(buffer)

    def poison(self, buffer):
        buffer.view(self.cp.uint8).fill(0xFF)

    def flush_l2(self, hold_us=0.0):
        self.flush_kernel(
            (self.flush_blocks,),
            (sources.BLOCK,),
            (
                self.scratch,
                np.uint64(self.flush_words),
                np.uint32(sources.FLUSH_NEVER),
                self.sink,
                np.uint64(hold_us * 1e3),
            ),
        )

    def elapsed_ms(self, start, stop):
        return self.cp.cuda.get_elapsed_time(start, stop)

    def copy(self, dst, src):
        self.cp.copyto(dst, src)

    def synchronize(self):
        self.cp.cuda.Device().synchronize()

    def properties(self):
        return self.props


# --- ufunc chain ------------------------------------------------------------------------------


def build_ufunc(dev, problem, inputs, out):
    if problem.workload == "zip":
        x, y = inputs["x"], inputs["y"]
        return lambda: x + y
    x = inputs["x"]
    return lambda: x * x + 2 * x + 1  # Python scalars are "weak": float32 stays float32 (NEP 50)


def ufunc_applies(problem):
    return (problem.workload == "zip" and problem.info["op"] == "add") or (
        problem.info.get("op") == "quadratic" and problem.info.get("k") == 1
    )


# --- ElementwiseKernel ------------------------------------------------------------------------


def build_elementwise(dev, problem, inputs, out):
    cp = dev.cp
    if problem.workload == "zip":
        kernel = cp.ElementwiseKernel(
            "T x, T y", "T z", f"z = {problem.info['source']};", "cdl_zip_" + problem.info["op"]
        )
        x, y = inputs["x"], inputs["y"]
        return lambda: kernel(x, y, out)
    body = f"""
        T acc = T(0);
        for (int j = 0; j < k; ++j) {{
          const T x = x0 + T(j) * T({problem.info['map_delta']!r});
          acc += {problem.info['source']};
        }}
        y = acc;"""
    kernel = cp.ElementwiseKernel("T x0, int32 k", "T y", body, "cdl_map_" + problem.info["op"])
    x, k = inputs["x"], np.int32(problem.info["k"])
    return lambda: kernel(x, k, out)


# --- RawKernel --------------------------------------------------------------------------------


def build_raw(dev, problem, inputs, out):
    source, name, grid, block, buffers, scalars = sources.kernel_of(problem)
    kernel = dev.cp.RawKernel(source, name, options=("--std=c++17",))
    numpy_type = {"int": np.int32, "unsigned long long": np.uint64}
    values = tuple(buffers(inputs, out)) + tuple(numpy_type[t](v) for v, t in scalars)
    return lambda: (kernel(grid, block, values), out)[1]


def cases():
    return [
        harness.Case("cupy.ufunc_chain/scalar", ("map", "zip"), build_ufunc, ufunc_applies),
        harness.Case("cupy.ElementwiseKernel/scalar", ("map", "zip"), build_elementwise),
        harness.Case("cupy.RawKernel/scalar", ("map", "zip", "tasks", "image"), build_raw),
    ]


def experiments(dev, quick):
    from .experiments import cupy

    return cupy.experiments(dev, quick)
