"""JAX: the op as a plain Python function of arrays, through jax.jit.

  jax.jit          the function traced by jax.jit; XLA fuses the expression into one kernel. The
                   op's loop over k is lax.fori_loop, JAX's loop, unrolled by 8 (map_function
                   says why and what it costs).
                   Tasks: jnp.select over the 32 ops (each op computed for every element); the
                   blur as lax.reduce_window over an edge-padded image, Sobel as shifted slices
  jax.vmap_switch  tasks: lax.switch on the element's op id under jax.vmap, the way JAX writes a
                   branch per element; vmap turns it into a select over every branch's result, so
                   it computes what jnp.select does

float64 needs jax_enable_x64, which this module turns on (Python scalars stay weak, so float32
stays float32). A new function is a new trace and compile; jit keeps the result in memory, and on
disk only where the persistent compilation cache is turned on (off here but for newop.py's
disk-cache state).

**Timing.** JAX exposes no CUDA events, and the host clock cannot stand in for them: a call timed
alone to its block_until_ready carries JAX's dispatch and the wait (the system's note gives what that
costs a call that does almost nothing: more than the memory-bound map's kernel), and calls
dispatched back to back, less the flushes dispatched alone, let the host set the pace wherever it
dispatches a call more slowly than the GPU runs it (timed that way on the H200, zip and the tasks
came out faster than copy, and the maps at k = 1 slower than their kernels). So each repetition runs under
JAX's profiler (jax.profiler.trace, which records the GPU's own start and end of every kernel and
copy through CUPTI): `iterations` times an L2 flush, then the call, each waited for, and a call's
time is the GPU's, from the start of its first kernel to the end of its last (call_spans), as
events around it would give, less the gap an event pair leaves. A call of several kernels (a
while loop's) keeps the gaps between them.

XLA allocates a new output each call (JAX arrays are immutable): there is no buffer to poison, and
the harness keeps every earlier result of a problem alive, so a new result can never sit in memory
an earlier case already filled with the answer.

To see the machine code: jax.jit(f).lower(x).compile().as_text() gives the optimised HLO (the
fusions); XLA_FLAGS=--xla_dump_to=DIR writes the PTX.
"""
import ctypes
import glob
import gzip
import json
import os
import statistics
import tempfile
import time

import numpy as np

from . import harness, newop

NAME = "jax"
CATALOGUE = True  # runs the map over every op of the catalogue at the sweep's k (cdl_peers's problems)
jax = jnp = lax = None  # once connect() has imported them
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38


def import_jax():
    global jax, jnp, lax
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # take memory as it is used
    try:
        import jax as j
        import jax.numpy as jn
        from jax import lax as jl
    except Exception as e:
        raise harness.Unavailable(harness.import_failure("jax", e))
    jax, jnp, lax = j, jn, jl
    jax.config.update("jax_enable_x64", True)
    cache = os.environ.get("CDL_JAX_CACHE_DIR")
    if cache:  # newop.py's disk-cache state: every compile cached, however small or quick
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        raise harness.Unavailable(f"jax {jax.__version__} finds no GPU ({harness.error_text(e, 1)})")
    return gpus[0]


def connect():
    gpu = import_jax()
    return jax.__version__, JaxDevice(gpu)


def l2_bytes():
    """The L2's size from the driver (JAX does not say), or None."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        value = ctypes.c_int()
        if (
            cuda.cuInit(0) == 0
            and cuda.cuDeviceGetAttribute(ctypes.byref(value), CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 0) == 0
        ):
            return value.value
    except OSError:
        pass
    return None


class Result:
    """Where `copy` leaves its result: JAX arrays are immutable, so there is no buffer to copy into."""

    value = None


def cdl_l2_flush(scratch):
    """The L2 flush: a read of twice the L2. Its name is its XLA module's, jit_cdl_l2_flush, by which
    the trace tells its kernels from the call's."""
    return jnp.max(scratch)


FLUSH_MODULE = "jit_cdl_l2_flush"


def call_spans(trace, flush_module):
    """The GPU time of each call in a perfetto trace of jax.profiler (microseconds): the work on the
    GPU's process between two flushes, from its first start to its last end. What comes before the
    first flush or after the last (an earlier case's work still on the GPU as the trace began) is
    no call's."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    gpu = {
        e["pid"]
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "process_name"
        and "GPU" in e.get("args", {}).get("name", "")
    }
    if not gpu:
        raise RuntimeError("JAX's profiler trace has no GPU process: CUPTI recorded nothing")
    work = sorted((e for e in events if e.get("ph") == "X" and e.get("pid") in gpu), key=lambda e: e["ts"])
    spans, group = [], None  # group: (first start, last end) since the last flush; None before one
    for e in work:
        if e.get("args", {}).get("hlo_module") == flush_module:
            if group and group[0] is not None:
                spans.append(group[1] - group[0])
            group = (None, None)
        elif group is not None:
            start, end = group
            group = (e["ts"] if start is None else start, max(end or e["ts"], e["ts"] + e["dur"]))
    return spans


class JaxDevice(harness.Device):
    def __init__(self, gpu):
        l2 = l2_bytes()
        self.notes = []
        if l2 is None:
            l2 = 128 << 20
            self.notes.append("the L2's size unknown (no libcuda.so.1): the flush reads 256 MiB")
        cc = getattr(gpu, "compute_capability", "?")
        self.props = {"name": gpu.device_kind, "l2_bytes": l2, "cc": str(cc)}
        self.scratch = jax.device_put(np.zeros(2 * l2 // 4, dtype=np.int32))
        self.flush = jax.jit(cdl_l2_flush)
        self.identity = jax.jit(lambda a: a)  # XLA copies a parameter it returns: a device copy
        self.last = None
        one = jax.device_put(np.ones(1, dtype=np.float32))
        tiny = jax.jit(lambda a: a + 1)
        floor = [self.time_ms(lambda: tiny(one)) for _ in range(50)]
        self.notes.append(
            "timed by the GPU's clock through JAX's profiler (CUPTI; JAX has no CUDA events): a call's"
            " first kernel's start to its last one's end; the other systems' event pairs, opened behind a"
            " flush that holds the GPU past the call's host time, add only an event pair's own time"
            " (their event_gap_us); a jitted call on one element, timed alone on the host"
            f" to its block_until_ready, takes {statistics.median(floor) * 1e3:.1f} µs"
        )

    def upload(self, array):
        if array.dtype.names:
            return {name: self.upload(np.ascontiguousarray(array[name])) for name in array.dtype.names}
        return jax.device_put(np.ascontiguousarray(array))

    def empty_like(self, array):
        return Result()

    def download(self, buffer):
        return np.asarray(buffer.value if isinstance(buffer, Result) else buffer)

    def poison(self, buffer):
        pass  # nothing to poison: every call writes a new array (the module's docstring)

    spans = True  # timed by the GPU's spans: no hold needed, no event pair to count

    def flush_l2(self, hold_us=0.0):
        self.flush(self.scratch).block_until_ready()

    def time_ms(self, call):
        t0 = time.perf_counter()
        r = call()
        jax.block_until_ready(self.last if r is None else r)
        return (time.perf_counter() - t0) * 1e3

    def time_calls_ms(self, call, iterations, hold_us=0.0):
        """One repetition's time per call (the module's docstring says how)."""
        with tempfile.TemporaryDirectory(prefix="cdl_jax_trace.") as where:
            with jax.profiler.trace(where, create_perfetto_trace=True):
                for _ in range(iterations):
                    self.flush_l2()
                    jax.block_until_ready(call())
                self.flush_l2()  # the last call's end: call_spans times what lies between two flushes
            traces = glob.glob(os.path.join(where, "**", "*perfetto_trace.json.gz"), recursive=True)
            if not traces:
                raise RuntimeError(f"jax.profiler.trace wrote no perfetto trace under {where}")
            with gzip.open(traces[0]) as f:
                spans = call_spans(json.load(f), FLUSH_MODULE)
        if len(spans) != iterations:
            raise RuntimeError(
                f"JAX's profiler trace shows {len(spans)} calls' GPU work for the {iterations} made:"
                " no time is taken from it"
            )
        return sum(spans) / iterations * 1e-3

    def copy(self, dst, src):
        dst.value = self.last = self.identity(src)

    def synchronize(self):
        if self.last is not None:
            jax.block_until_ready(self.last)

    def properties(self):
        return self.props


# The catalogue's ops (common/ops.cuh) as a JAX user writes them.
OPS = {
    "quadratic": lambda x: x * x + 2 * x + 1,
    "square": lambda x: x * x,
    "sine": lambda x: jnp.sin(x),
    "exp_sin_cos": lambda x: jnp.exp(jnp.sin(x) * jnp.cos(x)),
    "threshold": lambda x: jnp.where(x > 0.5, 2 * x, x / 2),
}
# fori_loop's unroll for the map's loop over k (map_function).
UNROLL = 8
ZIP_OPS = {"add": lambda x, y: x + y, "multiply": lambda x, y: x * y}


def map_function(problem):
    """y = sum over j < k of op(x + j * delta), the loop a lax.fori_loop, the loop JAX's documentation
    gives for a carried value, with its `unroll` at UNROLL. XLA keeps a fori_loop a while loop whose
    body is one fused kernel over the whole array, so each step reads and writes the array: unrolled,
    a step computes UNROLL terms for one such pass, and a memory-bound op pays the pass 1 / UNROLL
    times as often. The other forms compile for far longer: a Python loop is unrolled by the trace
    into k terms, and the loop as a dimension of its own, summed, fuses into one kernel, whose
    compile XLA takes far longer over."""
    op, k, delta = OPS[problem.info["op"]], problem.info["k"], problem.info["map_delta"]
    if k == 1:
        return op

    def looped(x0):
        def step(j, y):
            return y + op(x0 + j.astype(x0.dtype) * delta)

        return lax.fori_loop(0, k, step, jnp.zeros_like(x0), unroll=min(UNROLL, k))

    return looped


def task_op(i):
    def op(x, p1, p2):
        acc = x
        for _ in range(i % 4 + 1):
            acc = acc * p1 + p2
        return acc + i * 0.125

    return op


def select_tasks(count):
    ops = [task_op(i) for i in range(count)]

    def f(x, op, p1, p2):
        return jnp.select([op == i for i in range(count)], [g(x, p1, p2) for g in ops], x)

    return f


def switch_tasks(count):
    ops = [task_op(i) for i in range(count)]
    return jax.vmap(lambda op, x, p1, p2: lax.switch(op, ops, x, p1, p2), in_axes=(0, 0, 0, 0))


def image_function(problem):
    h, w, r = problem.info["height"], problem.info["width"], problem.info["r"]
    if problem.info["op"] == "box_blur":
        side = 2 * r + 1

        def f(img):
            padded = jnp.pad(img.reshape(h, w), r, mode="edge")
            s = lax.reduce_window(padded, np.float32(0), lax.add, (side, side), (1, 1), "VALID")
            return s / (side * side)

        return f

    def f(img):
        p = jnp.pad(img.reshape(h, w), 1, mode="edge")

        def at(dy, dx):
            return p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]

        gx = at(-1, 1) + 2 * at(0, 1) + at(1, 1) - (at(-1, -1) + 2 * at(0, -1) + at(1, -1))
        gy = at(1, -1) + 2 * at(1, 0) + at(1, 1) - (at(-1, -1) + 2 * at(-1, 0) + at(-1, 1))
        return jnp.sqrt(gx * gx + gy * gy)

    return f


def build_jit(dev, problem, inputs, out):
    w = problem.workload
    if w == "map":
        f, args = map_function(problem), (inputs["x"],)
    elif w == "zip":
        f, args = ZIP_OPS[problem.info["op"]], (inputs["x"], inputs["y"])
    elif w == "tasks":
        t = inputs["tasks"]
        f, args = select_tasks(problem.info["task_op_count"]), (inputs["x"], t["op"], t["p1"], t["p2"])
    else:
        f, args = image_function(problem), (inputs["in"],)
    f = jax.jit(f)
    return lambda: f(*args)


def build_switch(dev, problem, inputs, out):
    t = inputs["tasks"]
    f = jax.jit(switch_tasks(problem.info["task_op_count"]))
    args = (t["op"], inputs["x"], t["p1"], t["p2"])
    return lambda: f(*args)


IMAGE_OPS = ("box_blur", "sobel")


def cases():
    return [
        harness.Case(
            "jax.jit/array",
            ("map", "zip", "tasks", "image"),
            build_jit,
            lambda p: p.workload != "image" or p.info["op"] in IMAGE_OPS,
        ),
        harness.Case("jax.vmap_switch/array", ("tasks",), build_switch),
    ]


def new_op_session():
    """newop.py's session: a new lambda with the constant in it, jitted."""
    import_jax()
    x = jax.device_put(newop.new_op_input())
    x.block_until_ready()

    def make(constant):
        c = float(constant)
        f = jax.jit(lambda v: v * v + c)
        return lambda: f(x)

    return newop.session(make, jax.block_until_ready, np.asarray)


def experiments(dev, quick):
    return [newop.compile_states(NAME, "JAX: a new lambda with the constant in it, jax.jit")]
