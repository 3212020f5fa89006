"""python3 -m cdl_peers: run the Python peers and write their results beside cdl_bench's.

    python3 -m cdl_peers --cdl-problem build/release/bench/cdl_problem --out results/python.json [--quick]
                         [--systems cupy,numba,cuda_python,pycuda,triton,torch,jax] [--filter TEXT]
                         [--experiments-only]
                         [--work DIR]

Makes each problem's inputs and reference with cdl_problem, then runs each system in a process
of its own (a crash, a context or an import in one cannot touch the others) and merges what
they report into one file in cdl_bench's schema, written atomically. A system that cannot run
is skipped with one line saying why. --quick leaves the articles' experiments out (python.json
says so, and the report names the command that runs them), unless --experiments-only asks for
them. Exit status: 0 when every peer that ran was validated (skips included), 1 when any result
was wrong or any peer failed, 2 for bad arguments or a problem that could not be made.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

try:
    import numpy  # noqa: F401  (every peer needs it: without it the run is skipped, below)
except ImportError:
    print(
        f"cdl_peers: skipped: numpy is not installed for {sys.executable}; the Python peers need it",
        file=sys.stderr,
    )
    sys.exit(0)

from . import (
    cuda_python_peers,
    cupy_peers,
    harness,
    jax_peers,
    numba_peers,
    pycuda_peers,
    torch_peers,
    triton_peers,
)
from .results_file import added, merge

# The articles' systems, then what a Python programmer picks today (no module imports its system
# before it runs: each system's process does).
SYSTEMS = {
    m.NAME: m
    for m in (cupy_peers, numba_peers, cuda_python_peers, pycuda_peers, triton_peers, torch_peers, jax_peers)
}


def problems(quick):
    """The problems the peers run: the C++ suite's own (bench/suite.cpp), in both of its modes, so
    every peer has its C++ counterparts in the same results directory (the quick suite's
    memory-bound map is its dispatch sweep's k = 1, 2^24 elements: past the L2 all the same). The full
    mode adds zip's other op and the tasks' sorted layout, whose times the quick report does not use."""
    return [
        f"map op=quadratic type=f32 n={2 ** 24 if quick else 2 ** 26} k=1",  # memory-bound
        f"map op=quadratic type=f64 n={2 ** 24 if quick else 2 ** 27} k=1",  # float64
        "map op=exp_sin_cos type=f32 n=4194304 k=64",  # arithmetic-bound
        "zip op=add type=f32 n=16777216",
        *([] if quick else ["zip op=multiply type=f32 n=16777216"]),
        "tasks layout=uniform distinct=1 n=16777216",
        *([] if quick else ["tasks layout=sorted distinct=32 n=16777216"]),
        "tasks layout=random distinct=32 n=16777216",
        "image op=box_blur 3840x2160 r=8",
        "image op=sobel 3840x2160 r=1",
    ]


def catalogue_problems(quick):
    """The map over the catalogue's ops at the dispatch sweep's ends (bench/suite.cpp: 2^24 elements,
    k = 1 and the sweep's largest k; the quick sweep's two ops at its k = 64), for the systems that
    write a user's own function (CATALOGUE in their module)."""
    ops = (
        ("quadratic", "exp_sin_cos") if quick else ("quadratic", "square", "sine", "exp_sin_cos", "threshold")
    )
    return [f"map op={op} type=f32 n={2 ** 24} k={k}" for op in ops for k in ((64,) if quick else (1, 256))]


def make_problems(tool, work, specs):
    """Each problem's directory, made by cdl_problem, all at once (inputs and references are CPU work)."""

    def make(numbered):
        i, spec = numbered
        d = os.path.join(work, f"problem{i}")
        return d, spec, subprocess.run([tool, d, *spec.split()], capture_output=True, text=True)

    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        made = list(pool.map(make, enumerate(specs)))
    for _, spec, r in made:
        if r.returncode != 0:
            raise SystemExit(
                f"cdl_peers: cdl_problem could not make '{spec}': {r.stderr.strip() or r.returncode}"
            )
    return [d for d, _, _ in made]


def run_child(args):
    """One system, in this process: the parent starts one of these per system. With --probe,
    only says whether the system can run here (exit status 3 and the reason if not)."""
    if args.probe:
        try:
            _, dev = SYSTEMS[args.system].connect()
            dev.close()
            return 0
        except harness.Unavailable as e:
            print(e)
            return 3
    part = harness.run_system(
        SYSTEMS[args.system],
        args.problems,
        harness.Settings.of(args.quick),
        args.filter,
        args.experiments_only,
    )
    harness.write_json_atomic(args.part, part)
    return 0


def streamed(command, env):
    """Runs a child, passing its stderr (progress lines) through as they come, and returns its exit
    status and that stderr, from which a failure is reported."""
    p = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in p.stderr:
        sys.stderr.write(line)
        sys.stderr.flush()
        lines.append(line)
    return p.wait(), "".join(lines)


# Left out of the quick mode unless named: between them they compile for minutes (torch.compile's
# first function alone takes over ten seconds), more than the quick mode's whole peers phase.
NOT_QUICK = ("triton", "torch", "jax")


# The C++ suite's new-op compiles, timed by cdl_bench in the same run as the peers' own (before the
# first system that can run): a host's speed moves by tens of per cent between runs, so compile
# times set side by side come from one.
CPP_JIT_FILTER = "^jit/(compile/(06|08|08_baseline|one_line_kernel)/new_op|link/07/new_op)/"


def cpp_jit_stages(cdl_problem, work, quick):
    """cdl_bench's JIT stages for a new op (the records of its own JSON), or [] with a line saying why."""
    tool = os.path.join(os.path.dirname(os.path.abspath(cdl_problem)), "cdl_bench")
    if not os.access(tool, os.X_OK):
        print(
            f"cdl_peers: no cdl_bench beside {cdl_problem}: the C++ compiles not timed in this run",
            file=sys.stderr,
        )
        return []
    out = os.path.join(work, "cpp_jit.json")
    print("cdl_peers: the C++ suite's new-op compiles (cdl_bench jit/ stages)", file=sys.stderr, flush=True)
    r = subprocess.run(
        [
            tool,
            *(["--cdl_quick"] if quick else []),
            f"--benchmark_filter={CPP_JIT_FILTER}",
            f"--benchmark_out={out}",
            "--benchmark_out_format=json",
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 or not os.path.exists(out):
        print(
            f"cdl_peers: cdl_bench's JIT stages FAILED: {harness.failure_reason(r.stderr, r.returncode)}",
            file=sys.stderr,
        )
        return []
    with open(out) as f:
        return json.load(f)["benchmarks"]


def summary(doc):
    rows = [b for b in doc["benchmarks"] if b.get("aggregate_name") == "median"]
    print(f"\n{'python peer':34s} {'problem':44s} {'median':>10s} {'of copy':>8s} {'first call':>11s}")
    for b in rows:
        workload, case, rest = b["run_name"].split("/", 2)
        problem = workload + "/" + rest.split("/iterations:")[0]
        print(
            f"{case:34s} {problem:44s} {b['real_time']:8.1f} µs"
            f" {b['frac_copy']:8.3f} {b['first_call_ms']:8.1f} ms"
        )
    for name, s in doc["cdl_python"]["systems"].items():
        if s["status"] != "ran":
            print(f"{name}: {s['status']}: {s.get('reason', '')}")
    failed = [b for b in doc["benchmarks"] if b.get("error_occurred")]
    for b in failed:
        print(f"FAILED {b['run_name']}: {b['error_message']}", file=sys.stderr)
    return failed


def main(argv):
    ap = argparse.ArgumentParser(prog="python3 -m cdl_peers", description=__doc__.split("\n")[0])
    ap.add_argument("--cdl-problem", help="the cdl_problem executable (build/release/bench/cdl_problem)")
    ap.add_argument("--out", help="results file to write (cdl_bench's schema)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="the quick suite's repetitions and sizes; the articles' experiments are left to a full run",
    )
    ap.add_argument(
        "--systems",
        help=(
            f"comma-separated, of: {', '.join(SYSTEMS)} (default: all; with --quick, all but"
            f" {', '.join(NOT_QUICK)})"
        ),
    )
    ap.add_argument("--filter", default="", help="run only benchmarks whose workload/peer contains this text")
    ap.add_argument(
        "--experiments-only",
        action="store_true",
        help="run only the articles' experiments (cdl_peers/experiments/), no benchmarks",
    )
    ap.add_argument(
        "--add",
        action="store_true",
        help="add these systems to the --out file of an earlier call (same device, revision and mode)",
    )
    ap.add_argument(
        "--work", help="directory for the problems' files (default: a temporary one, removed after)"
    )
    ap.add_argument("--system", help=argparse.SUPPRESS)  # child mode
    ap.add_argument("--problems", nargs="*", help=argparse.SUPPRESS)
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.system:
        return run_child(args)
    left_out = []  # systems the quick mode leaves out unless named
    if args.systems is None:
        systems = [s for s in SYSTEMS if not (args.quick and s in NOT_QUICK)]
        left_out = [s for s in SYSTEMS if s not in systems]
    else:
        systems = [s for s in args.systems.split(",") if s]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown or not systems:
        print(
            f"cdl_peers: unknown system {', '.join(unknown) or '(none given)'} (valid: {', '.join(SYSTEMS)})",
            file=sys.stderr,
        )
        return 2
    if not args.out or not args.cdl_problem:
        print("cdl_peers: --out and --cdl-problem are required", file=sys.stderr)
        return 2
    if not os.access(args.cdl_problem, os.X_OK):
        print(
            f"cdl_peers: {args.cdl_problem}: not an executable cdl_problem (build it first)", file=sys.stderr
        )
        return 2
    work = args.work or tempfile.mkdtemp(prefix="cdl_peers.")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.environ.get("PYTHONPATH", "")]
        ),
        CUPY_CACHE_DIR=os.path.join(work, "cupy_cache"),
        TRITON_CACHE_DIR=os.path.join(work, "triton_cache"),
        TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor_cache"),
        PYCUDA_CACHE_DIR=os.path.join(work, "pycuda_cache"),  # PyCUDA does not make it: made below
        XLA_PYTHON_CLIENT_PREALLOCATE="false",  # JAX takes memory as it needs it, not 75 % at its start
        CDL_BENCH_DIR=os.path.dirname(os.path.abspath(args.cdl_problem)),  # the build's programs and files
    )  # empty caches: each system's first call compiles
    os.makedirs(env["PYCUDA_CACHE_DIR"], exist_ok=True)

    def child_command(name, *extra):
        return [sys.executable, "-m", "cdl_peers", "--system", name, *extra]

    def child(name, *extra, **kw):
        return subprocess.run(child_command(name, *extra), env=env, **kw)

    def took(start):
        return f"{time.perf_counter() - start:.1f} s"

    try:
        parts, dirs, cpp_stages = [], None, []
        for name in left_out:
            reason = "not run in the quick mode: `python3 -m cdl_peers` without --quick runs it"
            print(f"cdl_peers: {name} skipped: {reason}", file=sys.stderr, flush=True)
            parts.append(
                {"system": name, "status": "skipped", "reason": reason, "benchmarks": [], "experiments": []}
            )
        # Whether each system can run here (a process that imports it and opens the GPU): every
        # probe at once, before anything is timed.
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(systems)) as pool:
            probes = dict(
                zip(systems, pool.map(lambda n: child(n, "--probe", capture_output=True, text=True), systems))
            )
        print(f"cdl_peers: {len(systems)} systems probed in {took(start)}", file=sys.stderr, flush=True)
        for number, name in enumerate(systems, 1):
            probe = probes[name]
            if probe.returncode == 3:
                reason = probe.stdout.strip()
                print(f"cdl_peers: {name} skipped: {reason}", file=sys.stderr, flush=True)
                parts.append(
                    {
                        "system": name,
                        "status": "skipped",
                        "reason": reason,
                        "benchmarks": [],
                        "experiments": [],
                    }
                )
                continue
            failure = None
            if probe.returncode != 0:
                sys.stderr.write(probe.stderr)
                failure = harness.failure_reason(probe.stderr, probe.returncode)
            else:
                if dirs is None:  # made once, and only when some system can run
                    start = time.perf_counter()
                    base = problems(args.quick)
                    catalogue = (
                        catalogue_problems(args.quick)
                        if any(getattr(SYSTEMS[s], "CATALOGUE", False) for s in systems)
                        else []
                    )
                    dirs = make_problems(args.cdl_problem, work, base + catalogue)
                    print(f"cdl_peers: {len(dirs)} problems made in {took(start)}", file=sys.stderr)
                    # A --filter or --add run is a part of a run: the C++ stages are the whole run's.
                    if not args.filter and not args.add:
                        start = time.perf_counter()
                        cpp_stages = cpp_jit_stages(args.cdl_problem, work, args.quick)
                        print(f"cdl_peers: the C++ compiles timed in {took(start)}", file=sys.stderr)
                print(f"cdl_peers: [{number}/{len(systems)}] {name}", file=sys.stderr, flush=True)
                start = time.perf_counter()
                part_path = os.path.join(work, f"{name}.json")
                rc, stderr = streamed(
                    child_command(
                        name,
                        "--part",
                        part_path,
                        "--filter",
                        args.filter,
                        "--problems",
                        *(dirs if getattr(SYSTEMS[name], "CATALOGUE", False) else dirs[: len(base)]),
                        *(["--quick"] if args.quick else []),
                        *(["--experiments-only"] if args.experiments_only else []),
                    ),
                    env,
                )
                if rc != 0 or not os.path.exists(part_path):
                    failure = harness.failure_reason(stderr, rc)
                print(f"cdl_peers: [{number}/{len(systems)}] {name} done in {took(start)}", file=sys.stderr)
            if failure:
                print(f"cdl_peers: {name} FAILED: {failure}", file=sys.stderr, flush=True)
                parts.append(
                    {
                        "system": name,
                        "status": "failed",
                        "reason": failure,
                        "benchmarks": [],
                        "experiments": [],
                    }
                )
                continue
            with open(part_path) as f:
                parts.append(json.load(f))
        # The build's revision: cdl_problem is its bench/cdl_problem.
        build = os.path.dirname(os.path.dirname(os.path.abspath(args.cdl_problem)))
        doc = merge(parts, args.quick, cpp_stages, build)
        try:
            harness.write_json_atomic(args.out, added(args.out, doc) if args.add else doc)
        except harness.WriteError as e:
            print(f"cdl_peers: {e}", file=sys.stderr)
            return 2
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"cdl_peers: {args.out}")
    failed = summary(doc)
    crashed = [p["system"] for p in parts if p["status"] == "failed"]
    return 1 if failed or crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
