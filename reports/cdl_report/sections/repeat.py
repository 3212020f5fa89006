"""Run to run: the same benchmarks in a second process (repeat.json), and how far their medians moved."""
import os

from ..results import ResultsError
from ..stats import median


def add(doc, bench, repeat, noise):
    if repeat is None:
        return
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
    over = [(d, n) for d, n in diffs if d > noise]
    doc.add("## Run to run\n")
    doc.add(
        f"{len(common)} GPU benchmarks were run again in a second process"
        f" (`{os.path.basename(repeat.path)}`). Their medians differ by {median(d for d, _ in diffs):.2%} at"
        f" the median and {diffs[-1][0]:.2%} at most (`{diffs[-1][1].split('/iterations')[0]}`);"
        f" {len(over)} differ by more than the noise threshold ({noise:.1%}) this gives.\n"
    )
