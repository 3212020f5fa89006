"""What a new op costs in the systems that compile from Python at run time (Triton, torch.compile,
JAX), in each cache state, the way a user meets them:

  fresh process  the first op of a process, every cache empty: what an interactive user pays first
                 (the import and the CUDA context are timed apart, as `import_ms`)
  new source     a new op in a process that has compiled before (a new constant, which reaches the
                 machine code, so no cache can answer)
  disk cache     the same op as the fresh process's, in another new process over the same cache
                 directories (Triton's TRITON_CACHE_DIR, Inductor's TORCHINDUCTOR_CACHE_DIR, JAX's
                 persistent compilation cache, which is off unless asked for and is turned on here)
  memory cache   the same op again in the process that compiled it

Each system's module gives new_op_session(): it imports the system, puts a small input on the GPU
(the context) and returns session(...) of this module: run(constant) -> (valid, milliseconds from
defining the op to its first result, synchronised), the op being y = x * x + constant.

    python3 -m cdl_peers.newop SYSTEM CONSTANT   (a child: prints one JSON line)
"""
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import harness, experiment

N = 1 << 16  # elements of the new op's input: its compile, not its run, is the figure


def new_op_input():
    return np.arange(N, dtype=np.float32) / np.float32(N)


def valid(got, constant):
    x = new_op_input().astype(np.float64)
    return experiment.close_to(np.asarray(got), x * x + constant)


def session(make, synchronize, download):
    """run(constant) for new_op_session(): make(constant) defines the op the system's way and returns
    its call (kept, so the same constant again is the system's memory cache), timed with the first
    call to its synchronised end; the result is validated outside that time."""
    made = {}

    def run(constant):
        t0 = time.perf_counter()
        if constant not in made:
            made[constant] = make(constant)
        y = made[constant]()
        synchronize(y)
        ms = (time.perf_counter() - t0) * 1e3
        return valid(download(y), constant), ms

    return run


def cache_env(cache):
    """Every cache these systems keep on disk, pointed at one directory."""
    return {
        "TRITON_CACHE_DIR": os.path.join(cache, "triton"),
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor"),
        "CDL_JAX_CACHE_DIR": os.path.join(cache, "jax"),
    }


def session_of(system):
    """A system's session: cdl_peers.<system>_peers's, or a module named in full (the tests')."""
    return importlib.import_module(system if "." in system else f"cdl_peers.{system}_peers").new_op_session()


def in_child(system, constant, cache):
    """One new process over `cache`: {import_ms, first_ms, valid}."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, **cache_env(cache))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
    r = subprocess.run(
        [sys.executable, "-m", "cdl_peers.newop", system, str(constant)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        raise experiment.ChildError(
            harness.failure_reason(r.stderr, r.returncode), f"python3 -m cdl_peers.newop {system}"
        )
    return json.loads(lines[-1])


def compile_states(system, label, repetitions=3):
    """The claim record ("compile") of a new op in each cache state, for one system."""

    def run():
        cache = tempfile.mkdtemp(prefix=f"cdl_{system}_newop.")
        try:
            constant = experiment.fresh_constant()
            fresh = in_child(system, constant, cache)
            disk = in_child(system, constant, cache)
            session = session_of(system)
            new, hit, ok = [], [], fresh["valid"] and disk["valid"]
            for _ in range(repetitions):
                c = experiment.fresh_constant()
                for times in (new, hit):
                    good, ms = session(c)
                    times.append(ms)
                    ok = ok and good
            return ok, {
                "fresh_process_ms": fresh["first_ms"],
                "import_ms": fresh["import_ms"],
                "disk_hit_ms": disk["first_ms"],
                "new_source_ms": new,
                "memory_hit_ms": hit,
                "constant": constant,
            }
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    return experiment.attempt(
        "compile", f"{label}: a new op (y = x * x + a new constant), in each cache state", run
    )


def main(argv):
    system, constant = argv[0], int(argv[1])
    t0 = time.perf_counter()
    run = session_of(system)
    import_ms = (time.perf_counter() - t0) * 1e3
    ok, first_ms = run(constant)
    print(json.dumps({"import_ms": import_ms, "first_ms": first_ms, "valid": bool(ok)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
