"""The problems the Python peers run, as cdl_problem (bench/problem.cpp) writes them from the C++
workloads: the inputs, the float64 reference and problem.json with the tolerance; and validation
against that reference, element by element, as common/validation.cpp does it. An element that is NaN
fails: the output is poisoned before the first call, so NaN is an element never written."""
import json
import os
from dataclasses import dataclass, field

import numpy as np

PROBLEM_SCHEMA = "cdl-problem/1"


class ProblemError(Exception):
    """A problem directory that is incomplete or not what cdl_problem writes."""


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

    def identify(self, case):
        """(name, label) of case's benchmark on this problem, as record.hpp's identify makes a
        cdl_bench benchmark's: the name, and the fields every record of it carries (the label: the
        problem's fields from problem.json and the case's, "system.way/form" as strategy, variant and
        form), a JSON object with sorted keys, as nlohmann/json writes one."""
        way, _, form = case.partition("/")
        strategy, _, variant = way.partition(".")
        fields = dict(
            self.info["fields"], strategy=strategy, form=form, **({"variant": variant} if variant else {})
        )
        label = json.dumps(fields, sort_keys=True, separators=(",", ":"))
        return f"{self.workload}/{case}/{self.name.split('/', 1)[1]}", label

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
