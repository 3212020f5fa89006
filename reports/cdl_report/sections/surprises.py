"""The run's largest surprises, for the first screen: each found by a rule over the figures (two ways
of one strategy far apart, a way faster than the template, an element a thread far below 16-byte
vectors, grouping by op dearer than a switch per element), the largest of each rule."""
import math

from ..document import PAST_L2, anchor, pow2
from ..results import label
from ..queries import TEMPLATE, kernels_facts, map_kernel
from ..stats import compare
from . import tasks


def made_of(resources, entries, op):
    """' (`a`: what its kernel's resources differ in; `b`: ...; both ...)', kernels_facts of the
    two vec kernels (op's where the kernel is per op); '' where either is not in resources.json or the
    two do not differ in registers, stack frame or spills."""
    kernels = [map_kernel(resources, f"{e}/vec", op) for e in entries]
    if not all(kernels) or len({(k["registers"], k["stack"], k["spill_stores"]) for k in kernels}) < 2:
        return ""
    return " (" + kernels_facts(list(zip(entries, kernels))) + ")"


def find(bench, r, noise, headings, found, resources=None, n=None):
    """{"found": [(size, sentence)] of the run's surprises, the largest of each rule, largest first;
    "undecided": how many candidates beyond the noise the test left undecided}, over the ratios `r`
    and what the map and tasks sections found (`found`). size is |log ratio|, so a gain and a loss of
    one factor weigh the same. A candidate is a surprise only where the U test tells its two
    benchmarks apart (stats.compare), as every finding of the report."""
    rules = {"ways": [], "beats": [], "forms": [], "grouping": []}
    undecided = 0
    dispatch_link = f"[the dispatch penalty]({anchor(headings['dispatch'])})"
    rows = {(f["op"], int(f["k"])): es for f, es in bench.select("map", type="f32", n=n) if "k" in f}
    # Two ways of one strategy on the same op and k: the largest ratio between them.
    by_strategy = {}
    for lab in r:
        by_strategy.setdefault(lab.split(".")[0], []).append(lab)
    for labels in by_strategy.values():
        for k, ops in r[labels[0]].items():
            for op in ops:
                have = [(r[l][k][op][0], l) for l in labels if op in r[l].get(k, {})]
                (hi, a), (lo, b) = max(have), min(have)
                if len(have) < 2 or hi / lo <= 1 + noise:
                    continue
                es = rows.get((op, k), {})
                finding = compare(es[b + "/vec"], es[a + "/vec"], noise)[2] if es else None
                undecided += finding is None
                if finding:
                    rules["ways"].append(
                        (
                            math.log(hi / lo),
                            (
                                f"**One strategy, two ways: {hi / lo:.2f}× apart.** `{a}` takes {hi:.2f}× the"
                                f" template's time where `{b}` takes {lo:.2f}× ({op}, k = {k})"
                                f"{made_of(resources, (a, b), op)}: {dispatch_link}."
                            ),
                        )
                    )
    # A way that beats the template it is measured against.
    for lab, ks in r.items():
        for k, ops in ks.items():
            for op, (ratio, finding) in ops.items():
                undecided += lab != TEMPLATE and finding is None and ratio < 1
                if lab != TEMPLATE and finding and ratio < 1:
                    rules["beats"].append(
                        (
                            -math.log(ratio),
                            (
                                f"**Faster than the template: {ratio:.2f}×.** `{lab}/vec` ({op}, k = {k});"
                                " its kernel differs from the template's in more than the call:"
                                f" {dispatch_link}."
                            ),
                        )
                    )
    # Two forms of one strategy on the memory-bound map: an element a thread against 16-byte vectors.
    n_max = found["map"].get("n", 0)
    if n_max and bench.l2_bytes and 8 * n_max >= PAST_L2 * bench.l2_bytes:
        es = found["map"]["entries"]
        for lab in {label(e) for e in es}:
            if lab + "/vec" in es and lab + "/scalar" in es:
                vec, scalar = (es[lab + form]["counters"]["frac_copy"] for form in ("/vec", "/scalar"))
                finding = compare(es[lab + "/vec"], es[lab + "/scalar"], noise)[2]
                undecided += finding is None
                if not finding:
                    continue
                rules["forms"].append(
                    (
                        math.log(vec / scalar),
                        (
                            f"**An element a thread reaches {scalar:.2f} of copy.** `{lab}/scalar`, where its"
                            f" 16-byte vectors reach {vec:.2f} (n = {pow2(n_max)}): [the memory-bound"
                            f" map]({anchor(headings['map'])})."
                        ),
                    )
                )
    # Sorting by op to run each op's template kernel, against a switch per element; where its parts
    # were timed, where its time goes.
    parts = found["tasks"].get("parts", {})
    problems = {(f["layout"], int(f["distinct"])): es for f, es in found["tasks"].get("runs", ())}
    for (layout, distinct), (best, ratio) in found["tasks"].get("grouping", {}).items():
        es = problems[(layout, distinct)]
        finding = compare(es["03_switch/per_element"], es[best], noise)[2]
        undecided += finding is None
        if finding and ratio > 1:
            why = parts.get((layout, distinct))
            rules["grouping"].append(
                (
                    math.log(ratio),
                    (
                        f"**Grouping by op costs {ratio:.1f}× a switch per element.** `{best}` against"
                        f" `03_switch/per_element` ({layout}, {distinct} ops)"
                        + (f"; for `grouped`, {tasks.why_grouping_costs(why)}" if why else "")
                        + f": [per-element dispatch]({anchor(headings['tasks'])})."
                    ),
                )
            )
    return {"found": largest_per_rule(rules), "undecided": undecided}


def largest_per_rule(rules):
    """The largest candidate of each rule, largest first."""
    best = {}
    for rule, candidates in rules.items():
        if candidates:
            best[rule] = max(candidates)
    return sorted(best.values(), reverse=True)
