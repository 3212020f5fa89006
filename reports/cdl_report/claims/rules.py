"""What every article's rules share: a claim, the verdicts, and the lookups of the figures and of
the experiments that answer them."""
from dataclasses import dataclass

from ..experiments import REFUSED, WORKS, outcome, tried
from ..results import label

HOLDS, FAILS, DEPENDS, UNMEASURED = "holds", "does not hold", "depends", "not measured"
UNDECIDED = "not decided"  # a timed claim's verdict where the run's repetitions cannot decide


@dataclass
class Claim:
    id: str
    article: str
    quote: str
    system: str  # the article's own system
    rule: str  # the verdict's rule, as the report prints it
    answer: callable  # data -> (answered in, figures, verdict)
    # whether the rule sets times against the noise: in a run that cannot decide (the quick mode's
    # three repetitions) its holds, does not hold or depends is not decided
    timed: bool = False


def direction(ratios, noise, holds_if_below=True):
    """HOLDS when every ratio is beyond the noise in the claimed direction, FAILS when every one is
    beyond it the other way, DEPENDS otherwise; UNMEASURED without ratios."""
    if not ratios:
        return UNMEASURED
    below = [r < 1 - noise for r in ratios]
    above = [r > 1 + noise for r in ratios]
    better, worse = (below, above) if holds_if_below else (above, below)
    return HOLDS if all(better) else FAILS if all(worse) else DEPENDS


def fact(facts, fid):
    return next((f for f in (facts or {}).get("facts", []) if f.get("id") == fid), None)


def compiles(f, compiler):
    v = (f or {}).get(compiler)
    return None if v is None else bool(v.get("compiles"))


def peer_ratios(d, peer):
    """{problem: time / the C++ same-form entry} of one Python peer."""
    return {
        f"{w} {dict(f).get('op', dict(f).get('layout', ''))} {dict(f).get('type', '')}".strip(): x
        for (w, f, p), x in d.found["python"]["ratio"].items()
        if p == peer and x
    }


def peer_over(d, peer, base):
    """[one Python peer's time / another's] on each problem both ran, from the peers' own medians."""
    out = []
    for row in d.python.bench.problems.values() if d.python else ():
        median = {label(entry): r["median"] for entry, r in row.items()}
        if peer in median and base in median:
            out.append(median[peer] / median[base])
    return out


def records_of(d, claim, start=""):
    """The records of the articles' experiments (cdl_peers/experiments/) for a claim."""
    return [
        e
        for e in (d.python.experiments if d.python else [])
        if e.get("claim") == claim and e.get("name", "").startswith(start)
    ]


def one(d, claim, start=""):
    found = records_of(d, claim, start)
    return found[0] if found else None


def missing(what):
    return "–", f"Not measured yet: {what}.", UNMEASURED


def gain(ratios, noise):
    """For a claimed speed-up (ratios of the new way's time to the old's): HOLDS when every ratio is
    below 1 by more than the noise, FAILS when none is (no gain beyond the noise, or a loss),
    DEPENDS otherwise; UNMEASURED without ratios."""
    if not ratios:
        return UNMEASURED
    faster = [r < 1 - noise for r in ratios]
    return HOLDS if all(faster) else FAILS if not any(faster) else DEPENDS


# The frames where a system refuses the code an experiment tries (its typing, its dispatcher, its
# lowering's checks, its compiler). A failure raised anywhere else (a clash of installed versions,
# a missing compiler, a driver error) shows nothing about the feature, so it is not counted.


def by_trial(e, if_works, if_refused):
    """The verdict of a claim one experiment answers: if_works or if_refused, else not measured."""
    return {WORKS: if_works, REFUSED: if_refused}.get(tried(e), UNMEASURED)


def failed_experiment(e, claim):
    return "–", f"The experiment for {claim} failed: {outcome(e)}.", UNMEASURED


def fmt_ms(ms):
    return f"{ms * 1e3:.0f} µs" if ms < 1 else f"{ms:.1f} ms"


def staging(d, claim, system, subject, cpp_rows, cpp_label, describe, ratio):
    """A3 and C2: the article's staged kernel against the plain one in its own system, the C++
    staged forms beside it; the C++ forms alone (said so) where the article's experiment is
    missing or failed. cpp_rows(workload, op) picks the C++ staged rows, cpp_label(op, entry) names
    one; describe(figures) says what was measured; figures[ratio] is staged / plain."""
    cpp = {k: v for k, v in d.found["other"].get("staged", {}).items() if cpp_rows(*k[:2])}
    cpp_text = f"C++ {subject}, staged / plain: " + (
        ", ".join(f"{cpp_label(op, e.split('/')[0])}: ×{x:.3f}" for (_, op, e), x in sorted(cpp.items()))
        or "–"
    )
    e = one(d, claim)
    if e and e["runs"] and e.get("valid"):
        f = e["figures"]
        figures = f"{describe(f)}, ×{f[ratio]:.3f}. {cpp_text}."
        return f"{system}; CUDA C++", figures, gain([f[ratio]], d.noise)
    note = f" (the {system} experiment: {outcome(e)})" if e else ""
    return f"CUDA C++ (not the article's {system})", cpp_text + note, gain(list(cpp.values()), d.noise)
