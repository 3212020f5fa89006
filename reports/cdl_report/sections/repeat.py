"""Run to run: the same benchmarks in a second process (repeat.json), and how far their medians moved."""
import os

from ..results import ResultsError
from ..stats import median


def find(bench, repeat):
    """{"file", "diffs": sorted [(|repeat / first - 1|, name)] of the GPU benchmarks in both}, or None
    without repeat.json; a repeat.json with no benchmark in common is an error of the input."""
    if repeat is None:
        return None
    common = [
        n
        for n in bench.rows
        if n in repeat.rows
        and "median" in bench.rows[n]
        and "median" in repeat.rows[n]
        and not n.startswith("jit/")
    ]
    if not common:
        raise ResultsError(f"{repeat.path}: no benchmark in common with {bench.path}")
    diffs = sorted((abs(repeat.rows[n]["median"] / bench.rows[n]["median"] - 1), n) for n in common)
    return {"file": os.path.basename(repeat.path), "diffs": diffs}


def add(doc, found, noise):
    if found is None:
        return
    diffs = found["diffs"]
    over = [(d, n) for d, n in diffs if d > noise]
    doc.add("## Run to run\n")
    doc.add(
        f"{len(diffs)} GPU benchmarks were run again in a second process"
        f" (`{found['file']}`). Their medians differ by {median(d for d, _ in diffs):.2%} at"
        f" the median and {diffs[-1][0]:.2%} at most (`{diffs[-1][1].split('/iterations')[0]}`);"
        f" {len(over)} differ by more than the noise threshold ({noise:.1%}) this gives.\n"
    )
