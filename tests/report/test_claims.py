"""The claims (reports/cdl_report/claims/, one file an article): every rule reaches each of its
verdicts from figures, and none is a fixed string."""
import unittest
from types import SimpleNamespace

import helpers  # noqa: F401  (puts reports/ on the path)
from cdl_report import claims
from cdl_report.claims import article_000, article_001, article_002, article_003, article_004, rules
from cdl_report.claims.rules import DEPENDS, FAILS, HOLDS, UNMEASURED

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
    """One record of the articles' experiments (bench/python/cdl_peers/articles_*.py)."""
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


class RulesReachEveryVerdict(unittest.TestCase):
    def assert_verdicts(self, rule, experiments, cases):
        """{verdict: the arguments of experiments() that make it}, each the rule's verdict; and
        without results, none."""
        for want, arguments in cases.items():
            self.assertEqual(verdict(rule, experiments=experiments(*arguments)), want, arguments)
        self.assertEqual(verdict(rule), UNMEASURED)

    def test_direction(self):
        self.assertEqual(rules.direction([0.5, 0.9], NOISE), HOLDS)
        self.assertEqual(rules.direction([1.5, 1.1], NOISE), FAILS)
        self.assertEqual(rules.direction([0.5, 1.01], NOISE), DEPENDS)
        self.assertEqual(rules.direction([], NOISE), UNMEASURED)
        self.assertEqual(rules.direction([1.5], NOISE, holds_if_below=False), HOLDS)

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


if __name__ == "__main__":
    unittest.main()
