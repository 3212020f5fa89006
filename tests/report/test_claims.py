"""The claims (cdl_report/claims/article_NNN.py, one file an article), articles 000 to 002's first
claims: every rule reaches each of its verdicts from figures, and none is a fixed string."""
import unittest

from claims_fixtures import VerdictCase, NOISE, data, exp, hoisted_penalties, one, probe, refused, verdict
from cdl_report.claims import article_000, article_001, article_002, article_004, rules
from cdl_report.claims.rules import DEPENDS, FAILS, HOLDS, UNMEASURED


class RulesReachEveryVerdict(VerdictCase):
    def test_direction(self):
        self.assertEqual(rules.direction([0.5, 0.9], NOISE), HOLDS)
        self.assertEqual(rules.direction([1.5, 1.1], NOISE), FAILS)
        self.assertEqual(rules.direction([0.5, 1.01], NOISE), DEPENDS)
        self.assertEqual(rules.direction([], NOISE), UNMEASURED)
        self.assertEqual(rules.direction([1.5], NOISE, holds_if_below=False), HOLDS)

    def test_the_noise_band_of_each_rule(self):
        # a ratio just inside the noise band is no change, just outside it is one, for every rule
        inside, outside = 1 - NOISE * 0.99, 1 - NOISE * 1.01
        self.assertEqual(rules.direction([inside], NOISE), DEPENDS)
        self.assertEqual(rules.direction([outside], NOISE), HOLDS)
        self.assertEqual(rules.direction([1 + NOISE * 0.99], NOISE), DEPENDS)
        self.assertEqual(rules.direction([1 + NOISE * 1.01], NOISE), FAILS)
        self.assertEqual(rules.gain([inside], NOISE), FAILS)
        self.assertEqual(rules.gain([outside], NOISE), HOLDS)
        from cdl_report import stats

        self.assertEqual(stats.goal_verdict(1.5 * (1 + NOISE * 0.99), 1.5, NOISE, False), stats.WITHIN)
        self.assertEqual(stats.goal_verdict(1.5 * (1 + NOISE * 1.01), 1.5, NOISE, False), "missed")
        self.assertEqual(stats.goal_verdict(1.5 * (1 - NOISE * 1.01), 1.5, NOISE, False), "met")

    def test_gain(self):
        self.assertEqual(rules.gain([0.5, 0.9], NOISE), HOLDS)
        self.assertEqual(rules.gain([1.0, 1.5], NOISE), FAILS)  # no gain beyond the noise is no gain
        self.assertEqual(rules.gain([0.5, 1.0], NOISE), DEPENDS)
        self.assertEqual(rules.gain([], NOISE), UNMEASURED)

    def test_a1_the_njit_argument(self):
        runs = exp(
            "A1",
            "an @njit function as a kernel argument (article 000)",
            figures={"versions": {"numba": "0.68"}},
        )
        refusal = refused(
            runs,
            "numba_cuda/numba/cuda/typing/typeof.py:54 in typeof",
            "ValueError: Cannot determine Numba type of <class 'function'>",
        )
        clash = dict(refusal, error="ValueError: no", raised_at="numba/core/cpu_options.py:51")
        self.assertEqual(verdict(article_000.a1, experiments=[runs]), HOLDS)
        self.assertEqual(verdict(article_000.a1, experiments=[refusal]), FAILS)
        # A failure outside Numba's typing and dispatch (a clash of the installed versions) decides nothing.
        self.assertEqual(verdict(article_000.a1, experiments=[clash]), UNMEASURED)
        self.assertIn("cpu_options.py:51", article_000.a1(data(experiments=[clash]))[1])
        self.assertIn("not counted", article_000.a1(data(experiments=[clash]))[1])
        self.assertEqual(verdict(article_000.a1, experiments=[dict(runs, valid=False)]), UNMEASURED)
        self.assertEqual(verdict(article_000.a1), UNMEASURED)

    def test_a2_the_precompiled_function(self):
        second_calls = {"njit_host_compile_ms": 300, "njit_second_call_ms": 0.1, "device_second_call_ms": 0.1}

        def first_calls(njit, device):
            return one(
                "A2", "a kernel", dict(second_calls, njit_first_call_ms=njit, device_first_call_ms=device)
            )

        self.assert_verdicts(
            article_000.a2, first_calls, {HOLDS: (5, 200), FAILS: (180, 200), DEPENDS: (60, 200)}
        )
        self.assertEqual(
            verdict(article_000.a2, experiments=[dict(first_calls(1, 1)[0], runs=False, error="E")]),
            UNMEASURED,
        )

    def test_a3_and_c2_staging_in_the_article_s_system(self):
        for rule, claim, key in (
            (article_000.a3, "A3", "staged_over_global"),
            (article_002.c2, "C2", "shared_over_plain"),
        ):

            def staged(ratio):
                return one(
                    claim,
                    "staged",
                    {
                        "n": 1 << 24,
                        "function": "f",
                        key: ratio,
                        "staged_ms": ratio,
                        "global_ms": 1.0,
                        "shared_ms": ratio,
                        "plain_ms": 1.0,
                    },
                )

            self.assertEqual(verdict(rule, experiments=staged(0.8)), HOLDS)
            self.assertEqual(verdict(rule, experiments=staged(1.005)), FAILS)
            self.assertEqual(
                rule(data(experiments=staged(0.8)))[0].split(";")[0], "Numba" if claim == "A3" else "PyCUDA"
            )

    def test_a3_and_c2_staging_in_cpp_without_the_article_s_system(self):
        for rule, key in (
            (article_000.a3, ("map", "quadratic", "01/staged")),
            (article_002.c2, ("zip", "add", "01/staged")),
        ):
            self.assertEqual(verdict(rule, staged={key: 0.8}), HOLDS)
            self.assertEqual(verdict(rule, staged={key: 1.08}), FAILS)
            self.assertEqual(verdict(rule, staged={key: 1.08, key[:2] + ("06/staged",): 0.8}), DEPENDS)
            self.assertIn("not the article's", rule(data(staged={key: 0.8}))[0])
            self.assertEqual(verdict(rule), UNMEASURED)

    def test_b1_functions_as_arguments(self):
        lam = exp(
            "B1",
            "a Python lambda as a kernel argument",
            runs=False,
            valid=False,
            raised_at="numba_cuda/numba/cuda/typing/typeof.py:54 in typeof",
        )
        elsewhere = dict(
            lam, name="an @njit function as a kernel argument", raised_at="numba/core/cpu_options.py:51"
        )
        self.assertEqual(verdict(article_001.b1, experiments=[lam]), HOLDS)
        self.assertEqual(
            verdict(article_001.b1, experiments=[lam, elsewhere]), HOLDS, "the refusal counts, not the clash"
        )
        self.assertIn("not counted", article_001.b1(data(experiments=[lam, elsewhere]))[1])
        self.assertEqual(verdict(article_001.b1, experiments=[elsewhere]), UNMEASURED)
        self.assertEqual(verdict(article_001.b1, experiments=[lam, dict(lam, runs=True, valid=True)]), FAILS)
        self.assertEqual(verdict(article_001.b1), UNMEASURED)

    def test_b2_the_branch_against_tables_and_virtual_calls(self):
        def pen(hoisted):
            return hoisted_penalties(hoisted, {"04_function_pointer.table/vec": 2.0, "05_virtual/vec": 3.0})

        self.assertEqual(verdict(article_001.b2, penalty=pen({1: 1.0, 16: 1.0})), HOLDS)
        self.assertEqual(verdict(article_001.b2, penalty=pen({1: 2.5, 16: 3.0})), FAILS)
        self.assertEqual(verdict(article_001.b2, penalty=pen({1: 2.0, 16: 1.0})), DEPENDS)
        self.assertIn("not the article's", article_001.b2(data(penalty=pen({1: 1.0})))[0])
        self.assertEqual(verdict(article_001.b2), UNMEASURED)

    def test_b2_is_decided_in_numba_where_it_ran(self):
        table = exp(
            "B2",
            "a dictionary of device functions indexed in a kernel",
            runs=False,
            valid=False,
            raised_at="numba_cuda/numba/cuda/core/typeinfer.py:1620 in resolve_value_type",
        )
        # The medians of the if/elif and of one device function on one problem.
        ratio = {
            ("map", (("op", "quadratic"),)): {
                "numba.op_switch.hoisted/scalar": {"median": 102.0},
                "numba.device_function/scalar": {"median": 100.0},
            }
        }
        # C++ figures that would say the opposite stand beside and do not decide.
        slower = hoisted_penalties({1: 2.5}, {"04_function_pointer.table/vec": 2.0})
        d = data(experiments=[table], python_problems=ratio, penalty=slower)
        self.assertEqual(article_001.b2(d)[2], HOLDS, "the if/elif runs where the dictionary is refused")
        self.assertEqual(article_001.b2(d)[0], "Numba; CUDA C++ beside")
        self.assertIn("the if/elif once per thread / one device function: 1.02×", article_001.b2(d)[1])
        elsewhere = dict(table, raised_at="numba/core/cpu_options.py:51")
        self.assertEqual(verdict(article_001.b2, experiments=[elsewhere], python_problems=ratio), UNMEASURED)
        self.assertEqual(verdict(article_001.b2, experiments=[table]), UNMEASURED, "no if/elif ran")
        runs = dict(table, runs=True, valid=True, raised_at=None)
        for switch_over_dictionary, expected in ((0.5, HOLDS), (1.5, FAILS), (1.0, DEPENDS)):
            timed = dict(runs, figures={"switch_over_dictionary": switch_over_dictionary})
            self.assertEqual(verdict(article_001.b2, experiments=[timed], python_problems=ratio), expected)
        self.assertEqual(
            verdict(article_001.b2, experiments=[runs], python_problems=ratio), UNMEASURED, "untimed"
        )

    def test_b3_the_article_s_kernel_calling_kernels(self):
        called = exp(
            "B3",
            "article 001's kernel_with_func_select",
            figures={"ptx_kernels": 1, "ptx_functions": 2, "ptx_call_instructions": 0},
        )
        self.assertEqual(verdict(article_001.b3, experiments=[called]), HOLDS)
        refusal = dict(
            called,
            runs=False,
            error="TypingError: x",
            raised_at="numba_cuda/numba/cuda/core/typeinfer.py:1620 in resolve_value_type",
        )
        self.assertEqual(verdict(article_001.b3, experiments=[refusal]), FAILS)
        self.assertEqual(
            verdict(article_001.b3, experiments=[dict(refusal, raised_at="numba/core/cpu_options.py:51")]),
            UNMEASURED,
        )
        self.assertIn("inlined", article_001.b3(data(experiments=[called]))[1])
        # Without the Numba experiment, the C++ probes answer, and say so.
        self.assertEqual(verdict(article_001.b3, facts=probe("global_calls_global", True)), HOLDS)
        self.assertEqual(verdict(article_001.b3, facts=probe("global_calls_global", False)), FAILS)
        self.assertEqual(verdict(article_001.b3), UNMEASURED)

    def test_b3_reads_nvrtc_s_machine_code_and_the_launch_from_a_kernel(self):
        def facts(outer_calls, opcodes, run):
            gg = probe("global_calls_global", False)["facts"][0]
            gg["nvrtc"]["sass"] = {
                "_Z5outerPf": {"instructions": 9, "calls": outer_calls, "opcodes": opcodes}
            }
            dp = {
                "id": "global_launches_global",
                "nvcc": {"compiles": True},
                "nvrtc": {"compiles": True},
                "run": run,
            }
            return {"facts": [gg, dp]}

        inlined = article_001.b3(
            data(facts=facts(0, ["FADD", "LDG", "STG", "EXIT"], {"runs": True, "valid": True}))
        )[1]
        self.assertIn("`inner` inlined", inlined)
        self.assertIn("runs on the GPU, validated", inlined)
        called = article_001.b3(
            data(facts=facts(1, ["CALL", "EXIT"], {"runs": None, "reason": "no CUDA device"}))
        )[1]
        self.assertIn(
            "`inner` not inlined",
            article_001.b3(data(facts=facts(0, ["EXIT"], {"runs": True, "valid": True})))[1],
        )
        self.assertIn("`inner` not inlined", called)
        self.assertIn("not run (no CUDA device)", called)
        failed = article_001.b3(
            data(facts=facts(0, ["LDG"], {"runs": False, "valid": False, "error": "launch failed"}))
        )[1]
        self.assertIn("fails on the GPU: `launch failed`", failed)

    def test_e1_a_device_function_called_from_a_kernel(self):
        runs = exp("E1", "a __global__ function calling a __device__ function")
        self.assertEqual(verdict(article_004.e1, experiments=[runs]), FAILS)
        refusal = refused(runs, "pycuda/compiler.py:130 in compile_plain", "CompileError: nvcc")
        self.assertEqual(verdict(article_004.e1, experiments=[refusal]), HOLDS)
        self.assertEqual(
            verdict(
                article_004.e1,
                experiments=[dict(refusal, error="LogicError: cuInit", raised_at="pycuda/driver.py:1")],
            ),
            UNMEASURED,
            "a driver that would not start says nothing of the compiler",
        )
        self.assertEqual(verdict(article_004.e1, facts=probe("global_calls_device", False)), HOLDS)
        self.assertEqual(verdict(article_004.e1, facts=probe("global_calls_device", True)), FAILS)
        self.assertEqual(verdict(article_004.e1), UNMEASURED)


if __name__ == "__main__":
    unittest.main()
