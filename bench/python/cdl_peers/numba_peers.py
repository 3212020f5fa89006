"""numba.cuda, the ways articles 000, 001 and 003 write it.

  numba.inline           the op written in the kernel's body (article 003's example 2)
  numba.device_function  a kernel calling a @cuda.jit(device=True) function; Numba compiles the
                         two together at the kernel's first call and inlines the callee
  numba.op_switch        one kernel, the op chosen by an integer id through if/elif (article
                         001); for the tasks workload the id is per element, over 32 ops
  numba.op_switch.hoisted
                         the same if/elif once per thread, each arm with its own loop: where
                         article 001 puts its branch (around whole kernel bodies)
  numba.factory          make_map_kernel(f): a kernel closing over a device function, compiled
                         once per new function and reused from a cache after that

How Numba sees a function: a kernel argument must have a Numba type. A device function or an
@njit function has a dispatcher type, not a value a kernel can receive, so the articles'
"pass the function as an argument" depends on the Numba version; experiments() tries each
form the articles use and records the exact error where it fails. What always works is to
make the function a *global* or a *closure variable* of the kernel: it is then a compile-time
constant, and a new function means a new kernel (the factory).

Element type: Numba types a literal 2 as int64 and 2.0 as float64, so `x * 2.0` with float32 x
is computed in float64. The ops below take their constants from the element type.

To see the machine code: kernel.inspect_sass() (needs nvdisasm) or kernel.inspect_asm() (PTX),
after the first call.
"""
import importlib.metadata
import math

import statistics

import numpy as np

from . import harness, numba_switch, sources

NAME = "numba"
BLOCK = 256


def connect():
    numba, cuda = harness.imported("numba", "numba", "numba.cuda")
    if not cuda.is_available():
        raise harness.Unavailable("numba.cuda.is_available() is false: no usable CUDA device or driver")
    try:
        version = f"{numba.__version__} (numba-cuda {importlib.metadata.version('numba-cuda')})"
    except importlib.metadata.PackageNotFoundError:
        version = numba.__version__
    notes = []
    # numba-cuda (0.30 seen) registers an overload of numpy.row_stack at its first compile; numpy
    # 2.4 removed that alias of numpy.vstack, and every compile then fails with "module 'numpy'
    # has no attribute 'row_stack'". Restoring the alias, in this process only, is safe: it names
    # the same function numba-cuda expects.
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
        notes.append(
            f"numpy {np.__version__} has no numpy.row_stack, which numba-cuda needs at its first compile; "
            "restored as numpy.vstack (its former alias) in this process"
        )
    numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    global cuda_module
    cuda_module = cuda
    try:  # compile and run one kernel: a numba that cannot is reported here, in one line
        dev = NumbaDevice(cuda)
        dev.flush_l2()
        cuda.synchronize()
    except Exception as e:
        raise harness.Unavailable(
            f"numba {version} cannot compile and run a kernel with numpy {np.__version__}: "
            + harness.error_text(e, 1)
        )
    dev.notes = notes
    return version, dev


cuda_module = None  # numba.cuda, once connect() has imported it


class NumbaDevice(harness.Device):
    def __init__(self, cuda):
        self.cuda = cuda
        d = cuda.get_current_device()
        name = d.name.decode() if isinstance(d.name, bytes) else d.name
        self.props = {"name": name, "l2_bytes": int(d.L2_CACHE_SIZE), "cc": "%d.%d" % d.compute_capability}

        @cuda.jit
        def fill(a, value):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = value

        # The L2 flush (sources.FLUSH_SOURCE, written for Numba): reads twice the L2, writes
        # nothing that stays, so no dirty line's write-back lands in the timed call.
        # Numba reads no GPU clock, so the hold is a count of 1 µs sleeps, its length measured below.
        @cuda.jit
        def read_flush(words, never, sink, sleeps):
            acc = np.uint32(0)
            i, stride = cuda.grid(1), cuda.gridsize(1)
            while i < words.size:
                acc ^= words[i]
                i += stride
            if acc == never:
                sink[0] = acc
            if cuda.grid(1) == 0:
                for _ in range(sleeps):
                    cuda.nanosleep(1000)

        self.fill, self.read_flush = fill, read_flush
        size, _, self.flush_blocks = sources.flush_shape(self.props["l2_bytes"], int(d.MULTIPROCESSOR_COUNT))
        self.scratch = cuda.to_device(np.zeros(size // 4, dtype=np.uint32))
        self.sink = cuda.to_device(np.zeros(1, dtype=np.uint32))
        self.start, self.stop = cuda.event(timing=True), cuda.event(timing=True)
        self.sleep_us = 1.0
        self.sleep_us = self.hold_per_sleep_us()

    def hold_per_sleep_us(self, sleeps=400):
        """One sleep's length on this GPU: a flush holding for `sleeps` of them against one without."""
        self.flush_l2()
        t = lambda hold: statistics.median(self.time_ms(lambda: self.flush_l2(hold)) for _ in range(5))
        return max(0.05, (t(sleeps * self.sleep_us) - t(0.0)) * 1e3 / sleeps)

    def _fill(self, bytes_view, value):
        self.fill[(bytes_view.size + BLOCK - 1) // BLOCK, BLOCK](bytes_view, np.uint8(value))

    def upload(self, array):
        return self.cuda.to_device(array)

    def empty_like(self, array):
        return self.cuda.device_array(array.shape, dtype=array.dtype)

    def download(self, buffer):
        return buffer.copy_to_host()

    def poison(self, buffer):
        self._fill(buffer.view(np.uint8), 0xFF)

    def flush_l2(self, hold_us=0.0):
        sleeps = np.int64(np.ceil(hold_us / self.sleep_us))
        self.read_flush[self.flush_blocks, BLOCK](
            self.scratch, np.uint32(sources.FLUSH_NEVER), self.sink, sleeps
        )

    def elapsed_ms(self, start, stop):
        return self.cuda.event_elapsed_time(start, stop)

    def copy(self, dst, src):
        dst.copy_to_device(src)

    def synchronize(self):
        self.cuda.synchronize()

    def properties(self):
        return self.props


# --- The catalogue's ops (common/ops.cuh) in Python ---------------------------------------------


def python_ops(T):
    """The map ops for element type T (np.float32 or np.float64), as plain Python functions that
    Numba compiles for the device. The constants are of type T: closure variables are frozen as
    typed constants, and a bare 2.0 would make float32 arithmetic float64."""
    one, two, half = T(1), T(2), T(0.5)

    def quadratic(x):
        return x * x + two * x + one

    def square(x):
        return x * x

    def sine(x):
        return math.sin(x)

    def exp_sin_cos(x):
        return math.exp(math.sin(x) * math.cos(x))

    def threshold(x):
        return two * x if x > half else x / two

    return {
        "quadratic": quadratic,
        "square": square,
        "sine": sine,
        "exp_sin_cos": exp_sin_cos,
        "threshold": threshold,
    }


OP_IDS = {name: i for i, name in enumerate(python_ops(np.float32))}  # the catalogue's order


def _grid(n):
    return (n + BLOCK - 1) // BLOCK


def _map_args(problem, inputs, out):
    T = problem.dtype
    return inputs["x"], out, problem.info["k"], T(problem.info["map_delta"])


# --- inline --------------------------------------------------------------------------------------


def build_inline(dev, problem, inputs, out):
    cuda, T = dev.cuda, problem.dtype
    if problem.workload == "zip":

        @cuda.jit
        def add(x, y, z):
            i = cuda.grid(1)
            if i < x.size:
                z[i] = x[i] + y[i]

        x, y = inputs["x"], inputs["y"]
        return lambda: (add[_grid(problem.size), BLOCK](x, y, out), out)[1]
    if problem.workload == "image":
        return build_image_inline(dev, problem, inputs, out)
    zero, one, two = T(0), T(1), T(2)
    if problem.info["op"] == "quadratic":

        @cuda.jit
        def kernel(xs, ys, k, delta):
            i = cuda.grid(1)
            if i < xs.size:
                acc = zero
                for j in range(k):
                    x = xs[i] + T(j) * delta
                    acc += x * x + two * x + one
                ys[i] = acc

    else:

        @cuda.jit
        def kernel(xs, ys, k, delta):
            i = cuda.grid(1)
            if i < xs.size:
                acc = zero
                for j in range(k):
                    x = xs[i] + T(j) * delta
                    acc += math.exp(math.sin(x) * math.cos(x))
                ys[i] = acc

    args = _map_args(problem, inputs, out)
    return lambda: (kernel[_grid(problem.size), BLOCK](*args), out)[1]


def build_image_inline(dev, problem, inputs, out):
    cuda = dev.cuda
    w, h, r = problem.info["width"], problem.info["height"], problem.info["r"]
    f0, two = np.float32(0), np.float32(2)
    if problem.info["op"] == "box_blur":
        area = np.float32((2 * r + 1) * (2 * r + 1))

        @cuda.jit
        def kernel(img, dst, w, h, r):
            x, y = cuda.grid(2)
            if x < w and y < h:
                s = f0
                for dy in range(-r, r + 1):
                    yy = min(max(y + dy, 0), h - 1)
                    for dx in range(-r, r + 1):
                        s += img[yy * w + min(max(x + dx, 0), w - 1)]
                dst[y * w + x] = s / area

    else:  # sobel

        @cuda.jit
        def kernel(img, dst, w, h, r):
            x, y = cuda.grid(2)
            if x < w and y < h:
                xl, xr = max(x - 1, 0), min(x + 1, w - 1)
                yu, yd = max(y - 1, 0), min(y + 1, h - 1)
                gx = (
                    img[yu * w + xr]
                    + two * img[y * w + xr]
                    + img[yd * w + xr]
                    - (img[yu * w + xl] + two * img[y * w + xl] + img[yd * w + xl])
                )
                gy = (
                    img[yd * w + xl]
                    + two * img[yd * w + x]
                    + img[yd * w + xr]
                    - (img[yu * w + xl] + two * img[yu * w + x] + img[yu * w + xr])
                )
                dst[y * w + x] = math.sqrt(gx * gx + gy * gy)

    grid = ((w + 31) // 32, (h + 7) // 8)
    src = inputs["in"]
    return lambda: (kernel[grid, (32, 8)](src, out, w, h, r), out)[1]


INLINE_OPS = {"map": ("quadratic", "exp_sin_cos"), "zip": ("add",), "image": ("box_blur", "sobel")}


def inline_applies(problem):
    """Whether build_inline has this problem's op written out."""
    return problem.info["op"] in INLINE_OPS[problem.workload]


# --- a device function called from a kernel; the factory ------------------------------------------


def make_map_kernel(f, T):
    """A kernel closing over the device function f: a compile-time constant to Numba, so f is
    inlined, and each new f is a new kernel to compile."""
    cuda = cuda_module
    zero = T(0)

    @cuda.jit
    def kernel(xs, ys, k, delta):
        i = cuda.grid(1)
        if i < xs.size:
            acc = zero
            for j in range(k):
                acc += f(xs[i] + T(j) * delta)
            ys[i] = acc

    return kernel


def build_device_function(dev, problem, inputs, out):
    f = dev.cuda.jit(device=True)(python_ops(problem.dtype)[problem.info["op"]])
    kernel = make_map_kernel(f, problem.dtype)  # defined here, so the first call compiles it
    args = _map_args(problem, inputs, out)
    return lambda: (kernel[_grid(problem.size), BLOCK](*args), out)[1]


_factory_cache = {}


def kernel_for(op, T):
    """The factory users write: one kernel per (function, type), compiled once, then reused."""
    key = (op, T)
    if key not in _factory_cache:
        f = cuda_module.jit(device=True)(python_ops(T)[op])
        _factory_cache[key] = make_map_kernel(f, T)
    return _factory_cache[key]


def build_factory(dev, problem, inputs, out):
    kernel = kernel_for(problem.info["op"], problem.dtype)
    args = _map_args(problem, inputs, out)
    return lambda: (kernel[_grid(problem.size), BLOCK](*args), out)[1]


# --- op-id switch (article 001) ------------------------------------------------------------------


def build_switch(dev, problem, inputs, out, hoisted=False):
    if problem.workload == "tasks":
        kernel = numba_switch.make_tasks_switch_kernel(cuda_module, problem.info["task_op_count"])
        x, tasks = inputs["x"], inputs["tasks"]
        return lambda: (kernel[_grid(problem.size), BLOCK](x, tasks, out), out)[1]
    make = numba_switch.make_hoisted_switch_kernel if hoisted else numba_switch.make_switch_kernel
    kernel = make(cuda_module, python_ops(problem.dtype), problem.dtype)
    xs, ys, k, delta = _map_args(problem, inputs, out)
    op = OP_IDS[problem.info["op"]]
    return lambda: (kernel[_grid(problem.size), BLOCK](xs, ys, op, k, delta), out)[1]


def cases():
    return [
        harness.Case("numba.inline/scalar", tuple(INLINE_OPS), build_inline, inline_applies),
        harness.Case("numba.device_function/scalar", ("map",), build_device_function),
        harness.Case("numba.op_switch/scalar", ("map", "tasks"), build_switch),
        harness.Case(
            "numba.op_switch.hoisted/scalar",
            ("map",),
            lambda dev, problem, inputs, out: build_switch(dev, problem, inputs, out, hoisted=True),
        ),
        harness.Case("numba.factory/scalar", ("map",), build_factory),
    ]


# --- The articles' claims, in Numba (experiments/numba.py) ---------------------------


def experiments(dev, quick):
    from .experiments import numba

    return numba.experiments(dev, quick)
