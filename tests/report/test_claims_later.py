"""The claims from B4 on (articles 001 to 004): every rule reaches each of its verdicts from figures,
and none is a fixed string; without results every claim is not measured, and every claim has one rule."""
import glob
import os
import re
import unittest

from claims_fixtures import VerdictCase, data, exp, hoisted_penalties, one, refused, verdict
from helpers import ROOT
from cdl_report.claims import verdicts as claims
from cdl_report.claims import article_001, article_002, article_003, article_004
from cdl_report.claims.rules import DEPENDS, FAILS, HOLDS, UNMEASURED


class LaterRulesReachEveryVerdict(VerdictCase):
    def test_b4_per_element_choice(self):
        article = exp("B4", "article 001's generic_compute_kernel", figures={"GB/s": 1000.0})
        self.assertEqual(verdict(article_001.b4, experiments=[article]), HOLDS)
        refusal = refused(article, "numba_cuda/numba/cuda/core/typeinfer.py:1620 in resolve")
        self.assertEqual(verdict(article_001.b4, experiments=[refusal]), FAILS)
        self.assertEqual(
            verdict(article_001.b4, experiments=[dict(refusal, raised_at="numba/core/cpu_options.py:51")]),
            UNMEASURED,
        )
        self.assertEqual(verdict(article_001.b4, experiments=[dict(article, valid=False)]), UNMEASURED)
        worst = {"03_switch/per_element": 3.0}
        self.assertEqual(verdict(article_001.b4, tasks_worst=worst), HOLDS)
        self.assertEqual(
            verdict(article_001.b4, tasks_worst=worst, errors=[("tasks/03_switch/per_element/x", "WRONG")]),
            FAILS,
        )
        self.assertEqual(verdict(article_001.b4), UNMEASURED)

    def test_c1_runtime_source_against_a_route_without_a_compiler(self):
        def pen(interpreted):
            return {
                ("quadratic", k): {
                    "16_interpreter/vec": x,
                    "06_nvrtc_jit/vec": 1.0,
                    "03_switch.hoisted/vec": 1.0,
                }
                for k, x in interpreted.items()
            }

        self.assertEqual(verdict(article_002.c1, penalty=pen({1: 1.0, 16: 1.01})), FAILS)
        self.assertEqual(verdict(article_002.c1, penalty=pen({1: 0.9, 16: 1.1})), DEPENDS)
        self.assertEqual(verdict(article_002.c1, penalty=pen({1: 1.2, 16: 4.1})), HOLDS)
        # A switch over built-in ops at the template's speed takes no logic from run time: it decides nothing.
        self.assertEqual(
            verdict(article_002.c1, penalty=hoisted_penalties({1: 1.0}, {"06_nvrtc_jit/vec": 1.0})),
            UNMEASURED,
        )
        self.assertEqual(verdict(article_002.c1), UNMEASURED)

    def test_c1_is_decided_in_pycuda_where_its_route_with_no_compiler_ran(self):
        def problems(*interpreter_over_source):
            return {
                ("map", (("k", str(k)),)): {
                    "pycuda.interpreter/scalar": {"median": 100.0 * x},
                    "pycuda.SourceModule/scalar": {"median": 100.0},
                }
                for k, x in enumerate(interpreter_over_source)
            }

        new_op = exp(
            "C1",
            "PyCUDA, no compiler: a new op as data",
            figures={"n": 1 << 20, "encode_ms": 3.0, "first_result_ms": 3.5, "module_load_ms": 1.0},
        )
        # C++ figures that would say the opposite stand beside and decide nothing.
        matched = {("quadratic", 1): {"16_interpreter/vec": 1.0, "06_nvrtc_jit/vec": 1.0}}
        for ratios, expected in (((2.0, 1.5), HOLDS), ((1.0, 0.9), FAILS), ((1.0, 2.0), DEPENDS)):
            d = data(experiments=[new_op], python_problems=problems(*ratios), penalty=matched)
            label, figures, got = article_002.c1(d)
            self.assertEqual(got, expected, figures)
            self.assertEqual(label, "PyCUDA; CUDA C++ beside")
            self.assertIn("first result on 2^20 floats: 3.5 ms", figures)
        # Without PyCUDA's figures the C++ rule decides, and says the PyCUDA route is missing.
        label, figures, got = article_002.c1(data(penalty=matched))
        self.assertEqual((label, got), ("CUDA C++ (16's interpreter); PyCUDA beside", FAILS))
        self.assertIn("not in these results", figures)

    def test_d2_float32_against_float64(self):
        self.assertEqual(
            verdict(article_003.d2, precision={("memory", "quadratic", 1): (1024, 1.0, 2.0)}), HOLDS
        )
        self.assertEqual(
            verdict(article_003.d2, precision={("memory", "quadratic", 1): (1024, 1.0, 0.9)}), FAILS
        )
        self.assertEqual(
            verdict(
                article_003.d2,
                precision={
                    ("memory", "quadratic", 1): (1024, 1.0, 2.0),
                    ("arithmetic", "sine", 16): (1024, 1.0, 1.0),
                },
            ),
            DEPENDS,
        )
        self.assertEqual(verdict(article_003.d2), UNMEASURED)
        # Answered in the systems whose figures it used.
        self.assertEqual(
            article_003.d2(data(precision={("memory", "quadratic", 1): (1024, 1.0, 2.0)}))[0], "CUDA C++"
        )

    def test_d3_cupy_against_the_same_form(self):
        def ratios(*values):
            return {
                ("map", (("op", f"op{i}"), ("type", "f32")), "cupy.ElementwiseKernel"): v
                for i, v in enumerate(values)
            }

        def ways(*article_over_fastest):
            figures = {
                f"size{i}": {"article_ms": r, "fuse_ms": 1.0, "elementwise_ms": 1.5, "raw_ms": 1.2}
                for i, r in enumerate(article_over_fastest)
            }
            return [exp("D3", "article 003's example 3 / CuPy's other ways", article="003", figures=figures)]

        # The article's example in CuPy decides; the C++ ratios stand beside whatever they say.
        cpp = ratios(5.0, 5.0)
        self.assertEqual(verdict(article_003.d3, experiments=ways(1.0, 1.01), python_ratio=cpp), HOLDS)
        self.assertEqual(verdict(article_003.d3, experiments=ways(1.4, 3.0), python_ratio=ratios(1.0)), FAILS)
        self.assertEqual(verdict(article_003.d3, experiments=ways(1.0, 3.0)), DEPENDS)
        self.assertIn("×3.00", article_003.d3(data(experiments=ways(1.0, 3.0)))[1])
        self.assertIn(
            "ElementwiseKernel map op0 f32 5.00×",
            article_003.d3(data(experiments=ways(1.0), python_ratio=cpp))[1],
        )
        failed = dict(ways(1.0)[0], runs=False, valid=False, error="CompileError", raised_at="cupy/x.py:1")
        self.assertEqual(verdict(article_003.d3, experiments=[failed]), UNMEASURED)
        self.assertEqual(
            verdict(article_003.d3, python_ratio=cpp), UNMEASURED, "the C++ ratios alone decide nothing"
        )
        self.assertEqual(verdict(article_003.d3), UNMEASURED)

    def test_d1_numpy_against_the_gpu_with_transfers(self):
        def timed(*pairs):
            return one(
                "D1",
                "NumPy / CuPy",
                {
                    f"p{i}": {"numpy_ms": a, "gpu_with_transfers_ms": b, "gpu_kernels_ms": 0.1}
                    for i, (a, b) in enumerate(pairs)
                },
            )

        self.assert_verdicts(
            article_003.d1,
            timed,
            {HOLDS: ((10, 2), (5, 1)), FAILS: ((1, 2), (5, 5)), DEPENDS: ((10, 2), (1, 2))},
        )

    def test_e2_structured_arrays(self):
        article = exp("E2", "PyCUDA: article 004's Point", article="004", figures={"itemsize": 8})
        packed = exp(
            "E2", "PyCUDA: a struct from a packed NumPy dtype", figures={"itemsize": 13, "c_sizeof": 24}
        )
        aligned = exp("E2", "PyCUDA: a struct with align=True", figures={"itemsize": 24, "c_sizeof": 24})
        # The article's own struct decides; the structs of mixed widths stand beside it.
        self.assertEqual(
            verdict(article_004.e2, experiments=[dict(article, valid=False), packed, aligned]), HOLDS
        )
        self.assertEqual(verdict(article_004.e2, experiments=[article, packed, aligned]), FAILS)
        self.assertEqual(
            verdict(article_004.e2, experiments=[article, dict(packed, valid=False), aligned]), FAILS
        )
        refusal = refused(article, "numba_cuda/numba/cuda/core/base.py:1039 in x")
        self.assertEqual(verdict(article_004.e2, experiments=[refusal, packed]), HOLDS)
        self.assertEqual(
            verdict(article_004.e2, experiments=[dict(refusal, raised_at="pycuda/driver.py:1"), packed]),
            UNMEASURED,
        )
        answered, figures, _ = article_004.e2(data(experiments=[dict(packed, valid=False), article]))
        self.assertLess(figures.index("article 004's Point"), figures.index("packed"), "the article's first")
        self.assertEqual(
            article_004.e2(data(experiments=[dict(article, system="pycuda"), dict(packed, system="numba")]))[
                0
            ],
            "PyCUDA",
            "answered in the system of the article's example",
        )
        # Without the article's example, the structs of mixed widths answer, and say so.
        self.assertEqual(verdict(article_004.e2, experiments=[packed, aligned]), FAILS)
        self.assertEqual(verdict(article_004.e2, experiments=[dict(packed, valid=False), aligned]), DEPENDS)
        self.assertIn("not the article's", article_004.e2(data(experiments=[packed, aligned]))[0])
        aos = {("16", "01_template_functor"): 0.97}  # without the experiments: the C++ points workload
        self.assertEqual(verdict(article_004.e2, aos=aos), FAILS)
        self.assertEqual(
            verdict(article_004.e2, aos=aos, errors=[("points/01_template_functor/aos/x", "WRONG")]), HOLDS
        )
        self.assertEqual(verdict(article_004.e2), UNMEASURED)

    def test_e3_page_locked_memory(self):
        def copies(pinned, alloc):
            return one(
                "E3",
                "page-locked / pageable",
                {
                    "4096": {
                        "pageable_htod_ms": 1.0,
                        "pageable_dtoh_ms": 1.0,
                        "pageable_alloc_dtoh_ms": 1.0,
                        "pinned_htod_ms": pinned,
                        "pinned_dtoh_ms": pinned,
                        "pinned_alloc_dtoh_ms": alloc,
                    }
                },
            )

        self.assert_verdicts(
            article_004.e3, copies, {HOLDS: (0.2, 0.5), FAILS: (1.2, 2.0), DEPENDS: (0.2, 2.0)}
        )

    def test_without_results_every_claim_is_not_measured(self):
        for c in claims.CLAIMS:
            self.assertEqual(c.answer(data())[2], UNMEASURED, c.id)

    def test_every_claim_of_the_articles_has_one_rule(self):
        self.assertEqual(
            [c.id for c in claims.CLAIMS],
            ["A1", "A2", "A3", "B1", "B2", "B3", "B4", "C1", "C2", "D1", "D2", "D3", "E1", "E2", "E3"],
        )
        self.assertTrue(all(c.rule and c.quote and c.system for c in claims.CLAIMS))

    def test_the_fact_check_names_each_claim_as_its_rule_does(self):
        """A claim is defined once, by its Claim (cdl_report/claims/article_NNN.py); the page that quotes it
        (articles.md) and the experiments that answer it (cdl_peers/experiments/, which run only on a GPU:
        read here as text) name it by its id, and each such id is a claim, of the same article (the
        other records are an article's example as written, or a compile's cost)."""
        room = os.path.dirname(claims.__file__)
        article_of = {c.id: c.article for c in claims.CLAIMS}
        with open(os.path.join(room, "articles.md"), encoding="utf-8") as f:
            page = dict(re.findall(r"(?m)^\| ([A-E][0-9]) \| ([0-9]{3}) \|", f.read()))
        self.assertEqual(page, article_of)
        named = 0
        experiments = os.path.join(ROOT, "bench", "python", "cdl_peers", "experiments")
        for path in glob.glob(os.path.join(experiments, "*.py")):
            with open(path, encoding="utf-8") as f:
                for claim, article in re.findall(
                    r'attempt\(\s*"([^"]+)",(?:[^()]|\([^()]*\))*?(?:article="([0-9]+)")?\s*\)', f.read()
                ):
                    named += 1
                    if claim not in ("example", "compile"):  # an example as written; a compile's cost
                        self.assertIn(claim, article_of, path)
                        self.assertIn(article, ("", article_of[claim]), f"{path}: {claim}")
        self.assertGreater(named, 20)


if __name__ == "__main__":
    unittest.main()
