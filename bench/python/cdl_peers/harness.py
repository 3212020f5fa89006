"""The Python side of the measurement protocol: problems, validation, timing, result records.

It mirrors the C++ suite (bench/suite.cpp, common/timing.hpp) so that a Python peer's figure
means what a strategy's figure means:
  * inputs and the float64 reference come from cdl_problem, i.e. from the C++ workloads; the
    tolerance is theirs too, and an element that is NaN (the output is poisoned before the
    first call) fails;
  * the first call is timed on the host clock, synchronised: for these systems it includes
    the compile, which is what the articles' claims about compilation cost are about;
  * steady time: CUDA events from the peer's own library around each call, the L2 flushed
    before each (outside the events), a fixed number of iterations per repetition chosen from
    the copy bandwidth, the median over repetitions with min, max and cv;
  * the flush also holds the GPU busy for longer than the call's host time (measured for each
    case: host_us), so that the host has queued the call before the GPU reaches the first
    event: the pair spans the GPU's work alone, as JAX's profiler spans do, and a system whose
    Python costs more than the flush is not charged for it inside a GPU time. The host time is
    a figure of its own, and so is an event pair with nothing between (event_gap_us);
  * the copy bandwidth (device-to-device copy of max(1 GiB, 8 x L2)) is measured by each peer's
    own library in the same process, and every bandwidth is reported as a fraction of it.
The records are Google Benchmark aggregates, as cdl_bench writes them.
"""
import importlib
import itertools
import json
import os
import re
import secrets
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np

PROBLEM_SCHEMA = "cdl-problem/1"
PYTHON_SCHEMA = "cdl-python/1"


class Unavailable(Exception):
    """A peer that cannot run here: its package is missing or broken, or there is no GPU."""


class ProblemError(Exception):
    """A problem directory that is incomplete or not what cdl_problem writes."""


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
# Problems


@dataclass
class Problem:
    """One problem as cdl_problem wrote it: inputs, reference and what problem.json says."""

    dir: str
    info: dict
    inputs: dict = field(default_factory=dict)  # name -> numpy array (host)
    reference: np.ndarray = None  # records (value, scale), float64

    @property
    def name(self):
        return self.info["name"]

    @property
    def workload(self):
        return self.info["workload"]

    @property
    def dtype(self):
        return np.float32 if self.info["type"] == "f32" else np.float64

    @property
    def size(self):
        return len(self.reference)

    @staticmethod
    def load(path):
        try:
            with open(os.path.join(path, "problem.json")) as f:
                info = json.load(f)
        except (OSError, ValueError) as e:
            raise ProblemError(f"{path}: no readable problem.json ({e}); make it with cdl_problem")
        if not isinstance(info, dict) or info.get("schema") != PROBLEM_SCHEMA:
            raise ProblemError(f"{path}/problem.json: not a {PROBLEM_SCHEMA} file")
        try:
            # Mapped, not read: a system reads only the problems its cases run, as they run.
            p = Problem(path, info)
            p.inputs = {n: np.load(os.path.join(path, n + ".npy"), mmap_mode="r") for n in info["inputs"]}
            p.reference = np.load(os.path.join(path, "reference.npy"), mmap_mode="r")
        except (OSError, ValueError, KeyError) as e:
            raise ProblemError(f"{path}: cannot read its arrays: {e}")
        if p.reference.dtype.names != ("value", "scale") or any(
            len(a) != len(p.reference) for a in p.inputs.values()
        ):
            raise ProblemError(f"{path}: reference.npy and the inputs do not match")
        return p


@dataclass
class Validation:
    passed: bool
    failures: int
    max_rel_error: float
    summary: str


# Elements compared at a time: the float64 temporaries stay in the CPU's caches (a whole 2^26-element
# array at once was four times slower).
CHUNK = 1 << 20


def validate(got, problem):
    """Every element against the float64 reference, as common/validation.cpp does it."""
    ref, tol = problem.reference, problem.info["tolerance"]
    got = np.asarray(got).reshape(-1)
    if got.shape != ref.shape:
        return Validation(
            False, len(ref), float("inf"), f"WRONG RESULT: {got.size} elements, expected {ref.size}"
        )
    failures, max_rel, first = 0, 0.0, None
    for start in range(0, got.size, CHUNK):
        r = ref[start : start + CHUNK]
        err = np.abs(got[start : start + CHUNK].astype(np.float64) - r["value"])
        scale = r["scale"]
        rel = np.where(scale > 0, err / np.where(scale > 0, scale, 1.0), err)
        ok = rel <= tol  # NaN (an element never written over the poison) compares false
        bad = int(ok.size - np.count_nonzero(ok))
        if bad and first is None:
            first = start + int(np.argmin(ok))
        failures += bad
        max_rel = max(max_rel, float(np.nanmax(np.where(np.isnan(rel), np.inf, rel))))
    if failures == 0:
        return Validation(
            True, 0, max_rel, f"ok: {ref.size} elements, max rel error {max_rel:.3g} (tolerance {tol:.3g})"
        )
    return Validation(
        False,
        failures,
        max_rel,
        (
            f"WRONG RESULT: {failures} of {ref.size} elements out of tolerance {tol:.3g}; first at index"
            f" {first}: got {float(got[first]):.9g}, expected {ref['value'][first]:.9g}; max rel error"
            f" {max_rel:.3g}"
        ),
    )


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


def result_entries(run_name, rep_ms, counters, repetitions, iterations):
    """Every repetition, then Google Benchmark's aggregates (median, mean, min, max, cv), in
    microseconds, as cdl_bench writes them."""
    mean = statistics.fmean(rep_ms)
    values = {
        "median": statistics.median(rep_ms),
        "mean": mean,
        "min": min(rep_ms),
        "max": max(rep_ms),
        "cv": (statistics.stdev(rep_ms) / mean) if len(rep_ms) > 1 and mean > 0 else 0.0,
    }
    out = [
        {
            "name": run_name,
            "run_name": run_name,
            "run_type": "iteration",
            "repetitions": repetitions,
            "repetition_index": i,
            "threads": 1,
            "iterations": iterations,
            "real_time": ms * 1e3,
            "cpu_time": 0.0,
            "time_unit": "us",
        }
        for i, ms in enumerate(rep_ms)
    ]
    for agg, v in values.items():
        e = {
            "name": f"{run_name}_{agg}",
            "run_name": run_name,
            "run_type": "aggregate",
            "repetitions": repetitions,
            "threads": 1,
            "aggregate_name": agg,
            "aggregate_unit": "percentage" if agg == "cv" else "time",
            "iterations": iterations,
            "real_time": v if agg == "cv" else v * 1e3,
            "cpu_time": 0.0,
            "time_unit": "us",
        }
        e.update(counters)
        out.append(e)
    return out


def error_entry(run_name, message):
    return {
        "name": run_name,
        "run_name": run_name,
        "run_type": "iteration",
        "error_occurred": True,
        "error_message": message,
    }


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
    run_prefix = f"{problem.workload}/{case.name}/{problem.name.split('/', 1)[1]}"
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
        return [error_entry(run_name, "validation failed: " + v.summary)], v
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
    return result_entries(run_name, rep_ms, counters, settings.repetitions, iterations), v


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
        run_cases(system, dev, version, [] if experiments_only else problem_dirs, settings, case_filter, part)
    finally:
        dev.close()
    return part


FORM_LINE = re.compile(r"^  (\S+)(?: {2,}(\S.*))?$")


def forms_of(doc):
    """{technique: what it is}, from a peer module's docstring: the block after its first line where
    each technique's name is indented two spaces and its description follows (on the same line after
    two spaces or more, or on the lines below, indented further). The report names each form so."""
    forms, name = {}, None
    for line in (doc or "").splitlines()[1:]:
        m = FORM_LINE.match(line)
        if m:
            name = m.group(1)
            forms[name] = m.group(2) or ""
        elif name and line.startswith("    "):
            forms[name] = f"{forms[name]} {line.strip()}".strip()
        elif forms:
            break
    return forms


def run_cases(system, dev, version, problem_dirs, settings, case_filter, part):
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
    problems = [Problem.load(d) for d in problem_dirs]
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
        label = f"{problem.workload}/{case.name}/{problem.name.split('/', 1)[1]}"
        if problem is not kept_for:
            keep, kept_for = [], problem
        try:
            entries, v = run_case(dev, case, problem, settings, copy_gbs, keep)
            status = v.summary if v.passed else "FAILED " + v.summary
        except Exception as e:  # a compile error or a crash in the peer's library is a failure, loudly
            entries = [error_entry(label, error_text(e))]
            status = "FAILED " + error_text(e, 1)
        part["benchmarks"] += entries
        print(
            f"[{system.NAME} {i}/{len(work)}, {time.perf_counter() - start:.1f} s in] {label}: {status}",
            file=sys.stderr,
            flush=True,
        )
    if hasattr(system, "experiments") and not case_filter:
        print(f"cdl_peers: {system.NAME}: the articles' experiments", file=sys.stderr, flush=True)
        part["experiments"] = [dict(e, system=system.NAME) for e in system.experiments(dev, settings.quick)]


# ---------------------------------------------------------------------------------------------
# The articles' experiments (articles_*.py): one record per question, in the results file


class ChildError(Exception):
    """An experiment's exception in a process of its own, with where it was raised there."""

    def __init__(self, text, where):
        super().__init__(text)
        self.where = where


def attempt(claim, name, run, article=None):
    """Runs one experiment: run() returns (valid, figures) where it ran. The record keeps the claim
    it answers (an id of reports/articles.md, or "example" for "does the article's example run
    as written"), whether it ran and validated, its figures, and, where it raised, the exception
    verbatim and where it was raised (the innermost frame, and the type of a `value` it rejected)."""
    record = {"claim": claim, "name": name, "runs": False, "valid": False, "error": "", "figures": {}}
    if article:
        record["article"] = article
    start = time.perf_counter()
    try:
        valid, figures = run()
        record.update(runs=True, valid=bool(valid), figures=figures or {})
    except Exception as e:  # the article's form failing is a finding, recorded, never a crash of the run
        record["error"] = str(e) if isinstance(e, ChildError) else error_text(e)
        record["raised_at"] = e.where if isinstance(e, ChildError) else raised_at(e)
    outcome = (
        ("runs, " + ("validated" if record["valid"] else "WRONG RESULT"))
        if record["runs"]
        else "fails: " + record["error"].splitlines()[0][:200]
    )
    print(
        f"cdl_peers: experiment {claim} '{name}': {outcome} ({time.perf_counter() - start:.1f} s)",
        file=sys.stderr,
        flush=True,
    )
    return record


def raised_at(exc):
    """'package/file.py:line in function' of the frame that raised, and the type of the value it
    was checking when that frame has a local called `value` (how a version mismatch shows)."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame, path = tb.tb_frame, tb.tb_frame.f_code.co_filename
    path = path.split("site-packages/")[-1].split("dist-packages/")[-1]
    where = f"{path}:{tb.tb_lineno} in {frame.f_code.co_name}"
    if "value" in frame.f_locals:
        t = type(frame.f_locals["value"])
        where += f" (value of type {t.__module__}.{t.__qualname__})"
    return where


def gpu_median_ms(dev, call, repetitions=15, flush=True):
    """Median of CUDA-event times of call() after one untimed call, the L2 flushed before each."""
    call()
    times = []
    for _ in range(repetitions):
        if flush:
            dev.flush_l2()
        times.append(dev.time_ms(call))
    return statistics.median(times)


def host_median_ms(call, synchronize=lambda: None, repetitions=15, warm=True):
    """Median host-clock time of call() up to synchronize() returning (transfers, NumPy)."""
    if warm:
        call()
        synchronize()
    times = []
    for _ in range(repetitions):
        synchronize()
        t0 = time.perf_counter()
        call()
        synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


# Counts from a random start: new in every call of a process and, all but surely, of every earlier run.
_fresh = itertools.count(secrets.randbelow(1 << 21))


def fresh_constant():
    """An integer below 2^22 (exact in float32, with room for x * x of a small x), new in every call:
    put in a new op as a constant, it reaches the machine code, so no compile cache can answer the
    compile. A new comment is not enough: NVRTC's cache through the driver keys on what its front end
    makes of a source, and answered texts that differed only in a comment (bench/jit_stages.cpp)."""
    return next(_fresh) % (1 << 22) + 1


def close_to(got, expected, rtol=1e-5, atol=1e-6):
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.ndim == 0:
        return bool(np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol))
    got, expected = got.reshape(-1), expected.reshape(-1)
    return all(
        np.allclose(
            got[i : i + CHUNK].astype(np.float64),
            expected[i : i + CHUNK].astype(np.float64),
            rtol=rtol,
            atol=atol,
        )
        for i in range(0, got.size, CHUNK)
    )


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


def write_json_atomic(path, doc):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)
