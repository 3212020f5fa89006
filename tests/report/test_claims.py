"""The claims (reports/cdl_report/claims.py): every rule reaches each of its verdicts from figures,
and none is a fixed string."""
import unittest
from types import SimpleNamespace

import helpers  # noqa: F401  (puts reports/ on the path)
from cdl_report import claims
from cdl_report.claims import DEPENDS, FAILS, HOLDS, UNMEASURED

NOISE = 0.02


def data(staged=None, penalty=None, tasks_worst=None, errors=(), facts=None, experiments=None, python_ratio=None,
         precision=None, aos=None, python_problems=None):
    python = None
    if experiments is not None or python_problems is not None:
        python = SimpleNamespace(experiments=experiments or [], bench=SimpleNamespace(problems=python_problems or {}))
    found = {"other": {"staged": staged or {}, "aos_soa": aos or {}}, "dispatch": {"penalty": penalty or {}},
             "tasks": {"worst": tasks_worst or {}}, "python": {"ratio": python_ratio or {}, "first_ms": {}},
             "precision": precision or {}, "noise": NOISE}
    return SimpleNamespace(bench=SimpleNamespace(errors=list(errors)), facts=facts, found=found, python=python,
                           noise=NOISE)


def verdict(rule, **kw):
    return rule(data(**kw))[2]


def probe(fid, nvcc):
    return {"facts": [{"id": fid, "nvcc": {"compiles": nvcc, "log": ""}, "nvrtc": {"compiles": True}}]}


class RulesReachEveryVerdict(unittest.TestCase):
    def test_direction(self):
        self.assertEqual(claims.direction([0.5, 0.9], NOISE), HOLDS)
        self.assertEqual(claims.direction([1.5, 1.1], NOISE), FAILS)
        self.assertEqual(claims.direction([0.5, 1.01], NOISE), DEPENDS)
        self.assertEqual(claims.direction([], NOISE), UNMEASURED)
        self.assertEqual(claims.direction([1.5], NOISE, holds_if_below=False), HOLDS)

    def test_a1_the_njit_argument(self):
        runs = {"name": "an @njit function as a kernel argument (article 000)", "runs": True, "valid": True}
        fails = dict(runs, runs=False, valid=False, error="ValueError: no")
        self.assertEqual(verdict(claims.a1, experiments=[runs]), HOLDS)
        self.assertEqual(verdict(claims.a1, experiments=[fails]), FAILS)
        self.assertEqual(verdict(claims.a1), UNMEASURED)

    def test_a3_and_c2_staging(self):
        for rule, key in ((claims.a3, ("map", "quadratic", "01/staged")), (claims.c2, ("zip", "add", "01/staged"))):
            self.assertEqual(verdict(rule, staged={key: 0.8}), HOLDS)
            self.assertEqual(verdict(rule, staged={key: 1.08}), FAILS)
            self.assertEqual(verdict(rule, staged={key: 1.08, key[:2] + ("06/staged",): 0.8}), DEPENDS)
            self.assertEqual(verdict(rule), UNMEASURED)

    def test_b1_functions_as_arguments(self):
        lam = {"name": "a Python lambda as a kernel argument", "runs": False}
        self.assertEqual(verdict(claims.b1, experiments=[lam]), HOLDS)
        self.assertEqual(verdict(claims.b1, experiments=[lam, dict(lam, runs=True, valid=True)]), FAILS)
        self.assertEqual(verdict(claims.b1), UNMEASURED)

    def test_b2_the_branch_against_tables_and_virtual_calls(self):
        def pen(hoisted):
            return {("quadratic", k): {"03_switch.hoisted/vec": h, "04_function_pointer.table/vec": 2.0, "05_virtual/vec": 3.0}
                    for k, h in hoisted.items()}
        self.assertEqual(verdict(claims.b2, penalty=pen({1: 1.0, 16: 1.0})), HOLDS)
        self.assertEqual(verdict(claims.b2, penalty=pen({1: 2.5, 16: 3.0})), FAILS)
        self.assertEqual(verdict(claims.b2, penalty=pen({1: 2.0, 16: 1.0})), DEPENDS)
        self.assertEqual(verdict(claims.b2), UNMEASURED)

    def test_b3_and_e1_the_compiler_probes(self):
        self.assertEqual(verdict(claims.b3, facts=probe("global_calls_global", True)), HOLDS)
        self.assertEqual(verdict(claims.b3, facts=probe("global_calls_global", False)), FAILS)
        self.assertEqual(verdict(claims.b3), UNMEASURED)
        self.assertEqual(verdict(claims.e1, facts=probe("global_calls_device", False)), HOLDS)
        self.assertEqual(verdict(claims.e1, facts=probe("global_calls_device", True)), FAILS)
        self.assertEqual(verdict(claims.e1), UNMEASURED)

    def test_b4_per_element_choice(self):
        worst = {"03_switch/per_element": 3.0}
        self.assertEqual(verdict(claims.b4, tasks_worst=worst), HOLDS)
        self.assertEqual(verdict(claims.b4, tasks_worst=worst, errors=[("tasks/03_switch/per_element/x", "WRONG")]), FAILS)
        self.assertEqual(verdict(claims.b4), UNMEASURED)

    def test_c1_runtime_source_against_strategies_without_a_compiler(self):
        def pen(hoisted):
            return {("quadratic", k): {"03_switch.hoisted/vec": h, "06_nvrtc_jit/vec": 1.0} for k, h in hoisted.items()}
        self.assertEqual(verdict(claims.c1, penalty=pen({1: 1.0, 16: 1.01})), FAILS)
        self.assertEqual(verdict(claims.c1, penalty=pen({1: 1.0, 16: 1.1})), DEPENDS)
        self.assertEqual(verdict(claims.c1, penalty=pen({1: 1.2, 16: 1.1})), HOLDS)
        self.assertEqual(verdict(claims.c1), UNMEASURED)

    def test_d2_float32_against_float64(self):
        self.assertEqual(verdict(claims.d2, precision={("memory", "quadratic", 1): 2.0}), HOLDS)
        self.assertEqual(verdict(claims.d2, precision={("memory", "quadratic", 1): 0.9}), FAILS)
        self.assertEqual(verdict(claims.d2, precision={("memory", "quadratic", 1): 2.0, ("arithmetic", "sine", 16): 1.0}),
                         DEPENDS)
        self.assertEqual(verdict(claims.d2), UNMEASURED)

    def test_d3_cupy_against_the_same_form(self):
        def ratios(*values):
            return {("map", (("op", f"op{i}"), ("type", "f32")), "cupy.ElementwiseKernel"): v for i, v in enumerate(values)}
        self.assertEqual(verdict(claims.d3, python_ratio=ratios(1.0, 1.01)), HOLDS)
        self.assertEqual(verdict(claims.d3, python_ratio=ratios(1.4, 5.0)), FAILS)
        self.assertEqual(verdict(claims.d3, python_ratio=ratios(1.0, 5.0)), DEPENDS)
        self.assertEqual(verdict(claims.d3), UNMEASURED)

    def test_e2_structs(self):
        aos = {("16", "01_template_functor"): 0.97}
        self.assertEqual(verdict(claims.e2, aos=aos), FAILS)
        self.assertEqual(verdict(claims.e2, aos=aos, errors=[("points/01_template_functor/aos/x", "WRONG")]), HOLDS)
        self.assertEqual(verdict(claims.e2), UNMEASURED)

    def test_claims_not_yet_measured_say_so(self):
        for c in claims.CLAIMS:
            if c.id in ("A2", "D1", "E3"):
                self.assertEqual(c.answer(data())[2], UNMEASURED, c.id)

    def test_every_claim_of_the_articles_has_one_rule(self):
        self.assertEqual([c.id for c in claims.CLAIMS],
                         ["A1", "A2", "A3", "B1", "B2", "B3", "B4", "C1", "C2", "D1", "D2", "D3", "E1", "E2", "E3"])
        self.assertTrue(all(c.rule and c.quote and c.system for c in claims.CLAIMS))


if __name__ == "__main__":
    unittest.main()
