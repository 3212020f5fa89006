"""Runtime-compiled CUDA C from Python with NVIDIA's cuda-python (cuda.bindings): NVRTC compiles
the source to a cubin, the driver API loads it and launches it.

  cuda_python.nvrtc    what PyCUDA's SourceModule does underneath (there with nvcc), written out:
                       nvrtcCreateProgram / nvrtcCompileProgram for the device's architecture,
                       cuModuleLoadData, cuModuleGetFunction, cuLaunchKernel with the arguments
                       packed by hand. No cache: every new source is a compile.

It stands in for PyCUDA (article 002, 004), which few installs carry today; pycuda_peers.py runs
PyCUDA itself where it is installed. The source is the same as CuPy's RawKernel (sources.py), so
a difference between the two is in how they compile, load and call.

To see the machine code: write the cubin from nvrtcGetCUBIN to a file and run cuobjdump -sass.
"""
import ctypes

import numpy as np

from . import harness, sources

NAME = "cuda_python"


def connect():
    driver, nvrtc = harness.imported("cuda.bindings", "cuda.bindings.driver", "cuda.bindings.nvrtc")
    import importlib.metadata

    try:
        version = importlib.metadata.version("cuda-python")
    except importlib.metadata.PackageNotFoundError:
        version = "cuda-bindings " + importlib.metadata.version("cuda-bindings")
    (err,) = driver.cuInit(0)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise harness.Unavailable(
            f"cuInit failed: {driver.cuGetErrorName(err)[1].decode()} (no usable GPU or driver)"
        )
    err, count = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or count < 1:
        raise harness.Unavailable("the driver sees no CUDA device")
    return version, DriverDevice(driver, nvrtc)


class DriverDevice(harness.Device):
    """Device memory, events and launches through the driver API, on the primary context (the one
    the CUDA runtime, CuPy and Numba share)."""

    def __init__(self, driver, nvrtc):
        self.cu, self.nvrtc = driver, nvrtc
        self.device = self.check(driver.cuDeviceGet(0))
        self.context = self.check(driver.cuDevicePrimaryCtxRetain(self.device))
        self.check(driver.cuCtxSetCurrent(self.context))
        name = self.check(driver.cuDeviceGetName(256, self.device)).split(b"\0")[0].decode()
        attr = driver.CUdevice_attribute
        major = self.check(
            driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device)
        )
        minor = self.check(
            driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device)
        )
        l2 = self.check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, self.device))
        self.props = {"name": name, "l2_bytes": int(l2), "cc": f"{major}.{minor}"}
        sms = self.check(
            driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.device)
        )
        size, words, self.flush_blocks = sources.flush_shape(int(l2), int(sms))
        self.scratch, self.sink = self.upload(np.zeros(size, dtype=np.uint8)), self.upload(
            np.zeros(1, dtype=np.uint32)
        )
        self.flush_kernel = self.compile(sources.FLUSH_SOURCE, sources.FLUSH_NAME)
        self.flush_args = [
            ctypes.c_void_p(int(self.scratch[0])),
            ctypes.c_ulonglong(words),
            ctypes.c_uint(sources.FLUSH_NEVER),
            ctypes.c_void_p(int(self.sink[0])),
            ctypes.c_ulonglong(0),  # hold_ns, set by each flush
        ]
        self.flush_pointers = (ctypes.c_void_p * 5)(*[ctypes.addressof(v) for v in self.flush_args])
        self.start = self.check(driver.cuEventCreate(0))
        self.stop = self.check(driver.cuEventCreate(0))

    def check(self, result, what=""):
        """cuda.bindings returns (error, values...); anything but success raises with the error's name."""
        err, *values = result
        if isinstance(err, self.cu.CUresult) and err != self.cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA driver error {self.cu.cuGetErrorName(err)[1].decode()} {what}")
        if isinstance(err, self.nvrtc.nvrtcResult) and err != self.nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC error {self.nvrtc.nvrtcGetErrorString(err)[1].decode()} {what}")
        return values[0] if len(values) == 1 else values

    # Buffers are (device pointer, shape, dtype).
    def upload(self, array):
        buf = self.empty_like(array)
        self.check(self.cu.cuMemcpyHtoD(buf[0], array.ctypes.data, array.nbytes), "(cuMemcpyHtoD)")
        return buf

    def empty_like(self, array):
        return (
            self.check(self.cu.cuMemAlloc(max(array.nbytes, 1)), "(cuMemAlloc)"),
            array.shape,
            array.dtype,
        )

    def download(self, buffer):
        host = np.empty(buffer[1], dtype=buffer[2])
        self.check(self.cu.cuMemcpyDtoH(host.ctypes.data, buffer[0], host.nbytes), "(cuMemcpyDtoH)")
        return host

    def nbytes(self, buffer):
        return int(np.prod(buffer[1])) * np.dtype(buffer[2]).itemsize

    def poison(self, buffer):
        self.check(self.cu.cuMemsetD8(buffer[0], 0xFF, self.nbytes(buffer)), "(cuMemsetD8)")

    def flush_l2(self, hold_us=0.0):
        self.flush_args[4].value = int(hold_us * 1e3)
        self.check(
            self.cu.cuLaunchKernel(
                self.flush_kernel,
                self.flush_blocks,
                1,
                1,
                sources.BLOCK,
                1,
                1,
                0,
                0,
                ctypes.addressof(self.flush_pointers),
                0,
            ),
            "(cuLaunchKernel, the flush)",
        )

    def time_ms(self, call):
        self.check(self.cu.cuEventRecord(self.start, 0))
        call()
        self.check(self.cu.cuEventRecord(self.stop, 0))
        self.check(self.cu.cuEventSynchronize(self.stop))
        return self.check(self.cu.cuEventElapsedTime(self.start, self.stop))

    def copy(self, dst, src):
        self.check(self.cu.cuMemcpyDtoDAsync(dst[0], src[0], self.nbytes(src), 0), "(cuMemcpyDtoDAsync)")

    def synchronize(self):
        self.check(self.cu.cuCtxSynchronize(), "(cuCtxSynchronize)")

    def properties(self):
        return self.props

    def compile(self, source, name):
        """NVRTC to a cubin for this device, then the driver loads it. The log is in the error."""
        nv = self.nvrtc
        prog = self.check(nv.nvrtcCreateProgram(source.encode(), b"cdl_peer.cu", 0, [], []))
        arch = "sm_" + self.props["cc"].replace(".", "")
        options = [b"--std=c++17", f"--gpu-architecture={arch}".encode()]
        (err,) = nv.nvrtcCompileProgram(prog, len(options), options)
        if err != nv.nvrtcResult.NVRTC_SUCCESS:
            size = self.check(nv.nvrtcGetProgramLogSize(prog))
            log = b" " * size
            self.check(nv.nvrtcGetProgramLog(prog, log))
            raise RuntimeError(f"NVRTC could not compile {name}:\n{log.decode(errors='replace')}")
        size = self.check(nv.nvrtcGetCUBINSize(prog))
        cubin = b" " * size
        self.check(nv.nvrtcGetCUBIN(prog, cubin))
        self.check(nv.nvrtcDestroyProgram(prog))
        module = self.check(self.cu.cuModuleLoadData(cubin), "(cuModuleLoadData)")
        return self.check(self.cu.cuModuleGetFunction(module, name.encode()), "(cuModuleGetFunction)")


C_TYPES = {"int": ctypes.c_int, "unsigned long long": ctypes.c_ulonglong}


def build_nvrtc(dev, problem, inputs, out):
    source, name, grid, block, buffers, scalars = sources.kernel_of(problem)
    function = dev.compile(source, name)
    # cuLaunchKernel takes an array of pointers, one to each argument's value.
    values = [ctypes.c_void_p(int(b[0])) for b in buffers(inputs, out)] + [C_TYPES[t](v) for v, t in scalars]
    pointers = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])

    def launch():
        dev.check(
            dev.cu.cuLaunchKernel(function, *grid, *block, 0, 0, ctypes.addressof(pointers), 0),
            "(cuLaunchKernel)",
        )
        return out

    launch.keep = (values, pointers)  # the argument array must outlive every launch
    return launch


def cases():
    return [harness.Case("cuda_python.nvrtc/scalar", ("map", "zip", "tasks", "image"), build_nvrtc)]
