"""Strategy 16's interpreter from Python with no compiler at run time: its kernels built ahead of
time into build/<preset>/plugins/cdl_interpreter.fatbin (strategies/suite/interpreter_f32.cu's kernels),
an op's program written by `cdl_run --steps` (common/bytecode.hpp's encoder, in C++), and the
kernel's last argument, strategies/suite/interpreter_kernels.cuh's kernel_program<float>, packed here as a
NumPy structured scalar. A loader (pycuda_peers) loads the file, picks the kernel and launches it.

The build's programs are found through CDL_BENCH_DIR (the folder of cdl_problem, which cdl_peers
sets for its systems)."""
import json
import os
import subprocess
import tempfile

import numpy as np

SCHEMA = "cdl-steps/1"


class Missing(Exception):
    """The build's file or program is not there: the route is not run, saying why."""


def bench_dir():
    d = os.environ.get("CDL_BENCH_DIR")
    if not d:
        raise Missing("CDL_BENCH_DIR is not set: cdl_peers sets it to the folder of cdl_problem")
    return d


def fatbin_path():
    path = os.path.join(bench_dir(), os.pardir, "plugins", "cdl_interpreter.fatbin")
    if not os.path.exists(path):
        raise Missing(f"{os.path.normpath(path)} not found: the build makes it (strategies/CMakeLists.txt)")
    return os.path.normpath(path)


def encode(op=None, text=None):
    """The program of a catalogue op (op) or of a text of 08's language (text), as `cdl_run --steps`
    writes it: a dict with the steps, the numbers, the slots and the limits."""
    tool = os.path.join(bench_dir(), "cdl_run")
    if not os.access(tool, os.X_OK):
        raise Missing(f"no cdl_run in {bench_dir()}")
    with tempfile.TemporaryDirectory(prefix="cdl_steps.") as tmp:
        path = os.path.join(tmp, "steps.json")
        what = ["--op", op] if text is None else ["--expr", text]
        r = subprocess.run([tool, *what, "--steps", path], capture_output=True, text=True)
        if r.returncode != 0:
            raise ValueError(f"cdl_run --steps: {r.stderr.strip() or r.returncode}")
        with open(path) as f:
            doc = json.load(f)
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"cdl_run --steps wrote a {doc.get('schema')!r} file, not {SCHEMA}")
    return doc


def program_dtype(doc):
    """kernel_program<float>: the steps (4 bytes each), the numbers as float, the count of steps."""
    return np.dtype(
        [
            ("code", np.uint8, (doc["max_steps"], 4)),
            ("constants", np.float32, (doc["max_constants"],)),
            ("length", np.int32),
        ]
    )


def program_argument(doc):
    """The kernel's last argument, by value: a NumPy structured scalar (PyCUDA packs its bytes)."""
    steps = np.asarray(doc["steps"], dtype=np.uint8).reshape(-1, 4)
    if len(steps) > doc["max_steps"] or len(doc["constants"]) > doc["max_constants"]:
        raise ValueError("the program is past the kernel's limits")
    p = np.zeros((), dtype=program_dtype(doc))
    p["code"][: len(steps)] = steps
    p["constants"][: len(doc["constants"])] = doc["constants"]
    p["length"] = len(steps)
    return p[()]


def scalar_kernel(doc, k):
    """The scalar form's kernel suite/16_interpreter.cu launches for float: 16 lanes where k has
    them, else one; the kernel with slots where the program uses any."""
    lanes = 16 if k >= 16 else 1
    slots = doc["max_slots"] if doc["slots"] > 0 else 0
    return f"cdl_interpreter_scalar_f32_{lanes}_{slots}"
