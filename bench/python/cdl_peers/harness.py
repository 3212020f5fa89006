"""The Python side of the measurement protocol: timing and result records (problems and validation
are problem.py's). It mirrors the C++ suite (bench/suite.cpp, common/timing.hpp), so that a Python
peer's figure means what a strategy's figure means:
  * the first call is timed on the host clock, synchronised: for these systems it includes the
    compile, which is what the articles' claims about compilation cost are about;
  * steady time: CUDA events from the peer's own library around each call, the L2 flushed before
    each (outside the events), a fixed number of iterations per repetition chosen from the copy
    bandwidth, the median over repetitions with min, max and cv;
  * the flush also holds the GPU busy for longer than the call's host time (host_us), so that the
    host has queued the call before the GPU reaches the first event: the pair spans the GPU's work
    alone, as JAX's profiler spans do, and a system whose Python costs more than the flush is not
    charged for it inside a GPU time. The host time is a figure of its own, and so is an event pair
    with nothing between (event_gap_us);
  * the copy bandwidth (a device-to-device copy of max(1 GiB, 8 x L2)) is measured by each peer's
    own library in the same process; every bandwidth is a fraction of it.
The records are Google Benchmark entries, as cdl_bench writes them (records.py)."""
import importlib
import json
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np

from .problem import Problem, validate
from .records import error_entry, result_entries

PYTHON_SCHEMA = "cdl-python/1"


class Unavailable(Exception):
    """A peer that cannot run here: its package is missing or broken, or there is no GPU."""


@dataclass
class Settings:
    """The C++ suite's settings (bench/suite.cpp): repetitions and the GPU time aimed at per one."""

    quick: bool
    repetitions: int
    target_s: float
    min_iterations: int
    max_iterations: int

    @staticmethod
    def of(quick):
        return Settings(True, 3, 0.002, 3, 10) if quick else Settings(False, 5, 0.010, 5, 100)

    def iterations_for(self, min_bytes, copy_gbs):
        floor_s = min_bytes / (copy_gbs * 1e9)
        return int(min(max(self.target_s / floor_s, self.min_iterations), self.max_iterations))


# ---------------------------------------------------------------------------------------------
# What a peer system provides


class Device:
    """What the harness needs from a peer's own library. Each system implements it with its own
    memory and events, so that no peer's figures depend on another system being installed."""

    name = "?"

    def upload(self, array):
        raise NotImplementedError

    def empty_like(self, array):
        raise NotImplementedError

    def download(self, buffer):
        raise NotImplementedError

    def poison(self, buffer):  # every byte 0xFF: NaN as float32 and float64
        raise NotImplementedError

    def flush_l2(self, hold_us=0.0):
        """Reads twice the L2 (no dirty line left to write back in the timed call), and keeps the
        GPU busy for at least hold_us from its start."""
        raise NotImplementedError

    spans = False  # True where time_calls_ms takes the GPU's own spans instead of events (JAX)

    def time_ms(self, call):
        """Events around call() on the stream the peer launches on: self.start and self.stop, the
        system's own events (record(), synchronize()), read by its elapsed_ms. A system whose
        events are not objects of that kind, or that has none, overrides this instead."""
        self.start.record()
        call()
        self.stop.record()
        self.stop.synchronize()
        return self.elapsed_ms(self.start, self.stop)

    def elapsed_ms(self, start, stop):
        raise NotImplementedError

    def time_calls_ms(self, call, iterations, hold_us=0.0):
        """One repetition: the mean time of `iterations` calls, each after an L2 flush that holds
        the GPU for hold_us."""
        total = 0.0
        for _ in range(iterations):
            self.flush_l2(hold_us)
            total += self.time_ms(call)
        return total / iterations

    def copy(self, dst, src):
        raise NotImplementedError

    def synchronize(self):
        raise NotImplementedError

    def properties(self):  # {"name", "l2_bytes", "cc": "9.0"}
        raise NotImplementedError

    def close(self):  # gives back what the system needs given back before the process ends
        pass


@dataclass
class Case:
    """One way of writing a workload. build(device, problem, inputs, out) does what a user does
    before the first call (define and compile, or not yet: CuPy and Numba compile at the first
    call) and returns the call: launch() -> the device array holding the result."""

    name: str  # "<system>.<technique>/<form>", like a registry entry
    workloads: tuple
    build: callable
    applies: callable = lambda problem: True


# ---------------------------------------------------------------------------------------------
# Running one system


def measure_copy_gbs(dev, l2_bytes, repetitions=20, batch=8):
    """Device-to-device copy bandwidth (bytes read + written) of max(1 GiB, 8 x L2), as the C++ suite
    measures it. Each timing spans `batch` copies in a row, so that the library's per-call host
    time overlaps the copies and the floor is the memory system's, the same for every system."""
    n = max(1 << 30, 8 * l2_bytes) // 4
    src = dev.upload(np.ones(n, dtype=np.float32))
    dst = dev.empty_like(np.empty(n, dtype=np.float32))
    dev.copy(dst, src)

    def copies():
        for _ in range(batch):
            dev.copy(dst, src)

    times = [dev.time_ms(copies) / batch for _ in range(repetitions)]
    if not np.array_equal(dev.download(dst)[:: 1 << 16], np.ones(n, dtype=np.float32)[:: 1 << 16]):
        raise RuntimeError("the copy bandwidth's copy wrote wrong data")
    return 2 * n * 4 / (statistics.median(times) * 1e-3) / 1e9


def run_case(dev, case, problem, settings, copy_gbs, keep):
    """Builds, calls once (timed, validated), then times; returns result entries. The first result
    is appended to `keep`, which the caller holds for the problem's every case: a system that
    returns a new array each call (torch.compile, JAX) can then never be handed memory where an
    earlier case left the right answer, which would pass for a result it did not write."""
    run_prefix, label = problem.identify(case.name)
    inputs = {k: dev.upload(np.ascontiguousarray(a)) for k, a in problem.inputs.items()}
    out = dev.empty_like(np.empty(problem.size, dtype=problem.dtype))
    dev.poison(out)
    dev.synchronize()
    t0 = time.perf_counter()
    launch = case.build(dev, problem, inputs, out)
    result = launch()
    dev.synchronize()
    first_call_ms = (time.perf_counter() - t0) * 1e3
    keep.append(result)
    v = validate(dev.download(result), problem)
    iterations = settings.iterations_for(problem.info["min_bytes"], copy_gbs)
    run_name = f"{run_prefix}/iterations:{iterations}/repeats:{settings.repetitions}/manual_time"
    if not v.passed:
        return [error_entry(run_name, label, "validation failed: " + v.summary)], v
    launch()  # warm-up beyond the first call
    host_us = host_call_us(dev, launch)
    hold_us = 2 * host_us + 20  # past the call's host time, with room for its spread
    rep_ms = [dev.time_calls_ms(launch, iterations, hold_us) for _ in range(settings.repetitions)]
    gbs = problem.info["min_bytes"] / (statistics.median(rep_ms) * 1e-3) / 1e9
    counters = {
        "GB/s": gbs,
        "bytes_per_second": gbs * 1e9,
        "frac_copy": gbs / copy_gbs,
        "max_rel_err": v.max_rel_error,
        "first_call_ms": first_call_ms,
        "host_us": host_us,
        "hold_us": hold_us,
    }
    return result_entries(run_name, label, rep_ms, counters, settings.repetitions, iterations), v


def host_call_us(dev, launch, calls=7):
    """The host's time to make one call (its return, not the GPU's end), the GPU idle before it:
    the median of `calls`."""
    times = []
    for _ in range(calls):
        dev.synchronize()
        t0 = time.perf_counter()
        launch()
        times.append((time.perf_counter() - t0) * 1e6)
    dev.synchronize()
    return statistics.median(times)


def event_gap_us(dev, pairs=21):
    """An event pair with nothing between, behind a held GPU: what an event-timed figure holds
    beyond the GPU's work (None for a system timed by the GPU's own spans)."""
    if dev.spans:
        return None
    times = []
    for _ in range(pairs):
        dev.flush_l2(200.0)
        times.append(dev.time_ms(lambda: None) * 1e3)
    return statistics.median(times)


def run_system(system, problem_dirs, settings, case_filter="", experiments_only=False):
    """Runs every case of one system (a *_peers module) on every problem it applies to."""
    part = {"system": system.NAME, "benchmarks": [], "experiments": []}
    try:
        version, dev = system.connect()
    except Unavailable as e:
        print(f"cdl_peers: {system.NAME} skipped: {e}", file=sys.stderr, flush=True)
        part.update(status="skipped", reason=str(e))
        return part
    try:
        run_cases(system, dev, version, problem_dirs, settings, case_filter, part, experiments_only)
    finally:
        dev.close()
    return part


def forms_of(doc):
    """{technique: what it is}, from a peer module's docstring: the block after its first line where
    each technique's name is indented two spaces and its description follows (on the same line after
    two spaces or more, or on the lines below, indented further). The report names each form so."""
    forms, name = {}, None
    for line in (doc or "").splitlines()[1:]:
        m = re.match(r"^  (\S+)(?: {2,}(\S.*))?$", line)
        if m:
            name = m.group(1)
            forms[name] = m.group(2) or ""
        elif name and line.startswith("    "):
            forms[name] = f"{forms[name]} {line.strip()}".strip()
        elif forms:
            break
    return forms


def run_cases(system, dev, version, problem_dirs, settings, case_filter, part, experiments_only=False):
    props = dev.properties()
    part.update(
        status="ran",
        version=version,
        device=props,
        notes=getattr(dev, "notes", []),
        forms=forms_of(system.__doc__),
    )
    for note in part["notes"]:
        print(f"cdl_peers: {system.NAME}: {note}", file=sys.stderr, flush=True)
    problems = [] if experiments_only else [Problem.load(d) for d in problem_dirs]
    work = [
        (c, p)
        for p in problems
        for c in system.cases()
        if p.workload in c.workloads and c.applies(p) and case_filter in f"{p.workload}/{c.name}"
    ]
    start = time.perf_counter()
    copy_gbs = measure_copy_gbs(dev, props["l2_bytes"])
    part["copy_bandwidth_gbs"] = copy_gbs
    part["event_gap_us"] = event_gap_us(dev)
    print(
        (
            f"cdl_peers: {system.NAME} {version} on {props['name']}: copy {copy_gbs:.0f} GB/s;"
            f" {len(work)} benchmarks"
        ),
        file=sys.stderr,
        flush=True,
    )
    keep, kept_for = [], None
    for i, (case, problem) in enumerate(work, 1):
        name, label = problem.identify(case.name)
        if problem is not kept_for:
            keep, kept_for = [], problem
        try:
            entries, v = run_case(dev, case, problem, settings, copy_gbs, keep)
            status = v.summary if v.passed else "FAILED " + v.summary
        except Exception as e:  # a compile error or a crash in the peer's library is a failure, loudly
            entries = [error_entry(name, label, error_text(e))]
            status = "FAILED " + error_text(e, 1)
        part["benchmarks"] += entries
        print(
            f"[{system.NAME} {i}/{len(work)}, {time.perf_counter() - start:.1f} s in] {name}: {status}",
            file=sys.stderr,
            flush=True,
        )
    if hasattr(system, "experiments") and not case_filter:
        if settings.quick and not experiments_only:  # left to a full run, unless they are all it runs
            part["experiments_left_out"] = True
            return
        print(f"cdl_peers: {system.NAME}: the articles' experiments", file=sys.stderr, flush=True)
        part["experiments"] = [dict(e, system=system.NAME) for e in system.experiments(dev, settings.quick)]


def failure_reason(stderr, returncode):
    """What a child process that failed says went wrong, in one line: the exception and message of
    its last traceback, else the first line that names an error, else its last line with words in
    it. Never a banner's rule of dashes (PyCUDA's exit banner ends with one)."""
    lines = [l.strip() for l in re.sub(r"\x1b\[[0-9;]*m", "", stderr).splitlines()]
    words = [l for l in lines if re.search(r"[A-Za-z0-9]", l)]
    exceptions = [
        l for l in words if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b(:|$)", l)
    ]
    errors = [l for l in words if re.search(r"\berror\b", l, re.IGNORECASE)]
    line = (exceptions[-1:] or errors[:1] or words[-1:] or [f"exit status {returncode}"])[0]
    return line[:500] + ("" if line.startswith("exit status") else f" (exit status {returncode})")


def error_text(exc, lines=20):
    """An exception as its type and message, as Python prints them, without terminal colours."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", f"{type(exc).__name__}: {exc}")
    return "\n".join(text.splitlines()[:lines])[:3000]


def imported(package, *modules):
    """The modules (import paths) a peer needs from `package`, or Unavailable saying why not."""
    try:
        return [importlib.import_module(m) for m in modules]
    except Exception as e:  # ImportError, or a CUDA library the wheel needs and cannot find
        raise Unavailable(import_failure(package, e))


def import_failure(package, exc):
    """One line for a package that will not import; names numpy's version when numpy is the cause."""
    text = error_text(exc, 1)
    if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] == package.split(".")[0]:
        return f"{package} is not installed for {sys.executable}"
    if "numpy" in text.lower():
        return f"{package} fails to import against numpy {np.__version__} ({text})"
    return f"{package} fails to import ({text})"


class WriteError(Exception):
    """A results file that could not be written: its path and why (the file left as it was)."""


def write_json_atomic(path, doc):
    """doc as JSON at path through a temporary beside it and a rename: path is the old file or the
    whole new one; a failure (a full disk, a folder that cannot be made) is a WriteError naming path."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise WriteError(f"cannot write {path}: {e.strerror or e} (it is left as it was)") from e
