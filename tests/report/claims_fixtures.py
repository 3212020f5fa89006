"""What the claims' tests share: results data built from figures, and a test case that checks a
rule reaches the verdicts it is given."""
import unittest
from types import SimpleNamespace

import helpers  # noqa: F401  (puts reports/ on the path)
from cdl_report.claims.rules import UNMEASURED

NOISE = 0.02


def data(
    staged=None,
    penalty=None,
    tasks_worst=None,
    errors=(),
    facts=None,
    experiments=None,
    python_ratio=None,
    precision=None,
    aos=None,
    python_problems=None,
):
    python = None
    if experiments is not None or python_problems is not None:
        python = SimpleNamespace(
            experiments=experiments or [], bench=SimpleNamespace(problems=python_problems or {})
        )
    found = {
        "other": {"staged": staged or {}, "aos_soa": aos or {}},
        "dispatch": {"penalty": penalty or {}},
        "tasks": {"worst": tasks_worst or {}},
        "python": {"ratio": python_ratio or {}, "first_ms": {}},
        "precision": precision or {},
        "noise": NOISE,
    }
    return SimpleNamespace(
        bench=SimpleNamespace(errors=list(errors)), facts=facts, found=found, python=python, noise=NOISE
    )


def exp(claim, name, runs=True, valid=True, figures=None, **kw):
    """One record of the articles' experiments (bench/python/cdl_peers/experiments/)."""
    return dict(
        claim=claim, name=name, runs=runs, valid=valid, error="", figures=figures or {}, system="s", **kw
    )


def refused(record, raised_at, error=""):
    """`record` as the system refused it: not run, `error` raised at `raised_at`."""
    return dict(record, runs=False, valid=False, error=error, raised_at=raised_at)


def one(claim, name, figures):
    """A claim's experiments as one record, `name`, with its figures."""
    return [exp(claim, name, figures=figures)]


def verdict(rule, **kw):
    return rule(data(**kw))[2]


def probe(fid, nvcc):
    return {"facts": [{"id": fid, "nvcc": {"compiles": nvcc, "log": ""}, "nvrtc": {"compiles": True}}]}


def hoisted_penalties(hoisted, rivals):
    """Dispatch penalties of the quadratic map at each k: the hoisted switch's from `hoisted`
    ({k: penalty}), each rival's as given."""
    return {("quadratic", k): {"03_switch.hoisted/vec": h, **rivals} for k, h in hoisted.items()}


class VerdictCase(unittest.TestCase):
    def assert_verdicts(self, rule, experiments, cases):
        """{verdict: the arguments of experiments() that make it}, each the rule's verdict; and
        without results, none."""
        for want, arguments in cases.items():
            self.assertEqual(verdict(rule, experiments=experiments(*arguments)), want, arguments)
        self.assertEqual(verdict(rule), UNMEASURED)
