"""PyCUDA's SourceModule, the way articles 002 and 004 write it, where PyCUDA is installed.

  pycuda.SourceModule  the kernel as CUDA C (sources.py), compiled by nvcc when the module is
                       made (PyCUDA caches the cubin on disk, keyed by the source) and called
                       with grid and block given per call.
  pycuda.interpreter   no compiler at run time: strategy 16's interpreter kernel, built ahead of
                       time into a file (module_from_file), runs the op as data, its program
                       written by `cdl_run --steps` (interpreter_file.py); float maps only.

The articles use `import pycuda.autoinit`, which makes a context of PyCUDA's own; here PyCUDA
works on the primary context instead, the one the runtime and the other systems use.
"""
import numpy as np

from . import harness, interpreter_file, sources

NAME = "pycuda"


def connect():
    pycuda, drv, gpuarray, compiler = harness.imported(
        "pycuda", "pycuda", "pycuda.driver", "pycuda.gpuarray", "pycuda.compiler"
    )
    try:
        drv.init()
        if drv.Device.count() < 1:
            raise harness.Unavailable("the driver sees no CUDA device")
    except drv.Error as e:
        raise harness.Unavailable(f"no usable CUDA device ({e})")
    return pycuda.VERSION_TEXT, PycudaDevice(drv, gpuarray, compiler.SourceModule)


class PycudaDevice(harness.Device):
    def __init__(self, drv, gpuarray, source_module):
        self.drv, self.gpuarray, self.SourceModule = drv, gpuarray, source_module
        device = drv.Device(0)
        self.context = device.retain_primary_context()
        self.context.push()
        self.props = {
            "name": device.name(),
            "l2_bytes": int(device.get_attribute(drv.device_attribute.L2_CACHE_SIZE)),
            "cc": "%d.%d" % device.compute_capability(),
        }
        size, self.flush_words, blocks = sources.flush_shape(
            self.props["l2_bytes"], device.get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT)
        )
        self.scratch, self.sink = gpuarray.zeros(size, dtype=np.uint8), gpuarray.zeros(1, dtype=np.uint32)
        self.flush_kernel = source_module(sources.FLUSH_SOURCE, no_extern_c=True).get_function(
            sources.FLUSH_NAME
        )
        self.flush_grid = (blocks, 1)
        self.start, self.stop = drv.Event(), drv.Event()
        self.interpreter_module = None  # 16's kernels from their file, loaded at their first case

    def upload(self, array):
        return self.gpuarray.to_gpu(array)

    def empty_like(self, array):
        return self.gpuarray.empty(array.shape, dtype=array.dtype)

    def download(self, buffer):
        return buffer.get()

    def poison(self, buffer):
        self.drv.memset_d8(buffer.gpudata, 0xFF, buffer.nbytes)

    def flush_l2(self, hold_us=0.0):
        self.flush_kernel(
            self.scratch.gpudata,
            np.uint64(self.flush_words),
            np.uint32(sources.FLUSH_NEVER),
            self.sink.gpudata,
            np.uint64(hold_us * 1e3),
            grid=self.flush_grid,
            block=(sources.BLOCK, 1, 1),
        )

    def elapsed_ms(self, start, stop):
        return stop.time_since(start)

    def copy(self, dst, src):
        self.drv.memcpy_dtod(dst.gpudata, src.gpudata, src.nbytes)

    def synchronize(self):
        self.context.synchronize()

    def properties(self):
        return self.props

    def close(self):
        """Frees what was allocated in the primary context, then pops it: PyCUDA aborts the process
        at exit ("the context stack was not empty") when a pushed context is never popped."""
        import gc

        self.scratch = self.sink = self.flush_kernel = self.interpreter_module = None
        gc.collect()
        self.context.synchronize()
        self.context.pop()


def build_source_module(dev, problem, inputs, out):
    source, name, grid, block, buffers, scalars = sources.kernel_of(problem)
    function = dev.SourceModule(source, no_extern_c=True, options=["--std=c++17"]).get_function(name)
    numpy_type = {"int": np.int32, "unsigned long long": np.uint64}
    values = [b.gpudata for b in buffers(inputs, out)] + [numpy_type[t](v) for v, t in scalars]
    return lambda: (function(*values, grid=grid[:2], block=block), out)[1]


def build_interpreter(dev, problem, inputs, out):
    """The op as data: its program (a process of cdl_run's, before the first call, as a compile
    would be) and 16's kernel for it, from the file the build made."""
    if dev.interpreter_module is None:
        dev.interpreter_module = dev.drv.module_from_file(interpreter_file.fatbin_path())
    doc = interpreter_file.encode(op=problem.info["op"])
    k, n = problem.info["k"], problem.size
    function = dev.interpreter_module.get_function(interpreter_file.scalar_kernel(doc, k))
    program = interpreter_file.program_argument(doc)
    grid, block = ((n + sources.BLOCK - 1) // sources.BLOCK, 1), (sources.BLOCK, 1, 1)
    x = inputs[problem.info["inputs"][0]]
    return lambda: (
        function(x.gpudata, out.gpudata, np.uint64(n), np.int32(k), program, grid=grid, block=block),
        out,
    )[1]


def cases():
    return [
        harness.Case("pycuda.SourceModule/scalar", ("map", "zip", "tasks", "image"), build_source_module),
        harness.Case(
            "pycuda.interpreter/scalar",
            ("map",),
            build_interpreter,
            applies=lambda p: p.info["type"] == "f32",
        ),
    ]


def experiments(dev, quick):
    from .experiments import pycuda

    return pycuda.experiments(dev, quick)
