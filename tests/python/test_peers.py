"""Tests of the Python peers (bench/python/cdl_peers) that need no GPU: the problems cdl_problem
writes, validation, the CUDA C the source-compiling peers build, the interpreter's program file,
JAX's timing and the revision recorded (the runner's and the results file's tests are beside it).
Run by ctest:
    test_peers.py CDL_PROBLEM
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import unittest.mock

import numpy as np

import peers_fixtures as fixtures
from cdl_peers import harness, problem as problem_files, results_file, sources  # noqa: E402


class ProblemTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="cdl_peers_test.")
        cls.problems = {}
        for w, spec in fixtures.PROBLEMS.items():
            path, run = fixtures.make_problem(w, spec, cls.dir)
            assert run.returncode == 0, run.stderr
            cls.problems[w] = problem_files.Problem.load(path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_problems_carry_inputs_reference_and_the_catalogue_source(self):
        m = self.problems["map"]
        self.assertEqual(m.name, "map/op:exp_sin_cos/type:f32/n:1000/k:4")  # cdl_bench's name for it
        self.assertEqual(m.inputs["x"].dtype, np.float32)
        self.assertEqual(m.info["source"], "exp(sin(x) * cos(x))")
        self.assertTrue(np.all((m.inputs["x"] >= 0.25) & (m.inputs["x"] < 1.75)))
        t = self.problems["tasks"]
        self.assertEqual(t.inputs["tasks"].dtype.names, ("op", "p1", "p2"))
        self.assertEqual(len(set(t.inputs["tasks"]["op"])), 32)
        self.assertEqual(self.problems["image"].size, 37 * 5)
        self.assertEqual(self.problems["zip"].dtype, np.float64)

    def test_a_peers_benchmark_is_named_and_labelled_as_cdl_bench_names_and_labels_its_own(self):
        """The name as record.hpp's identify makes it, the label its fields (the problem's, from
        cdl_problem, and the case's), a JSON object as nlohmann/json writes one: sorted, compact."""
        name, label = self.problems["map"].identify("numba.op_switch.hoisted/scalar")
        self.assertEqual(name, "map/numba.op_switch.hoisted/scalar/op:exp_sin_cos/type:f32/n:1000/k:4")
        fields = {
            "workload": "map",
            "strategy": "numba",
            "variant": "op_switch.hoisted",
            "form": "scalar",
            "op": "exp_sin_cos",
            "type": "f32",
            "n": "1000",
            "k": "4",
        }
        self.assertEqual(label, json.dumps(fields, sort_keys=True, separators=(",", ":")))
        fields = json.loads(self.problems["image"].identify("cupy.RawKernel/scalar")[1])
        self.assertEqual((fields["variant"], fields["shape"]), ("RawKernel", "37x5"))
        self.assertNotIn("variant", json.loads(self.problems["image"].identify("cupy/scalar")[1]))

    def test_the_reference_is_the_workload_s(self):
        # exp(sin(a) cos(a)) summed over a = x + j/4096, j < k, in float64 from float32 arguments.
        m = self.problems["map"]
        x = m.inputs["x"][:10]
        a = [(x + np.float32(j) * np.float32(1 / 4096)).astype(np.float64) for j in range(4)]
        expected = sum(np.exp(np.sin(v) * np.cos(v)) for v in a)
        np.testing.assert_allclose(m.reference["value"][:10], expected, rtol=1e-12)
        z = self.problems["zip"]
        np.testing.assert_array_equal(z.reference["value"], z.inputs["x"] + z.inputs["y"])

    def test_validation_passes_the_reference_and_catches_errors(self):
        m = self.problems["map"]
        good = m.reference["value"].astype(np.float32)
        self.assertTrue(problem_files.validate(good, m).passed)
        bad = good.copy()
        bad[17] *= 1.001
        v = problem_files.validate(bad, m)
        self.assertFalse(v.passed)
        self.assertEqual(v.failures, 1)
        self.assertIn("first at index 17", v.summary)
        unwritten = good.copy()
        unwritten[3] = np.nan  # what an element left at the poison looks like
        self.assertFalse(problem_files.validate(unwritten, m).passed)
        self.assertFalse(problem_files.validate(good[:-1], m).passed)

    def test_bad_problems_are_refused_and_leave_nothing(self):
        for workload, spec, message in (
            ("map", "op=nope type=f32 n=4 k=1", "unknown map op 'nope'"),
            ("map", "op=square type=f32 n=4", "missing k="),
            ("zip", "op=add type=f32 n=4 k=2", "unknown argument 'k'"),
            ("blur", "n=4", "unknown workload 'blur'"),
            ("tasks", "layout=random distinct=33 n=4", "distinct ops must be 1..32"),
        ):
            path, run = fixtures.make_problem(workload, spec, os.path.join(self.dir, "bad"))
            self.assertEqual(run.returncode, 2, spec)
            self.assertIn(message, run.stderr)
            self.assertFalse(os.path.exists(os.path.join(path, "problem.json")), spec)
        with self.assertRaises(problem_files.ProblemError):
            problem_files.Problem.load(os.path.join(self.dir, "bad", "map"))

    def test_every_case_s_form_is_described_where_its_module_says_what_it_is(self):
        # The report names each form from its module's docstring (harness.forms_of).
        from cdl_peers.__main__ import SYSTEMS

        for name, module in SYSTEMS.items():
            forms = harness.forms_of(module.__doc__)
            for case in module.cases():
                technique = case.name.split("/")[0]
                self.assertIn(technique, forms, f"{name}: {case.name} is not in its module's docstring")
                self.assertGreater(len(forms[technique]), 20, f"{name}: {technique}: {forms[technique]!r}")

    def test_each_system_s_experiments_import_without_its_library(self):
        # The experiments run only on a GPU; each system's module reaches them by a relative import
        # when it runs, so one that no longer imports would surface only there.
        import importlib

        for name in ("cupy", "numba", "numba_later", "pycuda", "pycuda_examples"):
            module = importlib.import_module(f"cdl_peers.experiments.{name}")
            self.assertTrue(module.__doc__, name)
        for name in ("cupy", "numba", "pycuda"):
            self.assertTrue(
                callable(importlib.import_module(f"cdl_peers.experiments.{name}").experiments), name
            )

    def test_today_s_systems_write_the_catalogue_s_ops(self):
        # torch.compile's and JAX's functions are plain array code: run here on NumPy in their place,
        # each must give the workload's reference (the GPU runs the same text through its compiler).
        from cdl_peers import jax_peers, torch_peers

        class Tensor(np.ndarray):  # what the texts ask of a tensor beyond NumPy's
            device = "cpu"

            def sum(self, dim=None, axis=None, **kw):
                return np.ndarray.sum(self, axis=dim if axis is None else axis, **kw)

        class Torch:
            sin, cos, exp, sqrt = np.sin, np.cos, np.exp, np.sqrt

            @staticmethod
            def where(c, a, b):
                return np.where(c, a, b).view(Tensor)

            @staticmethod
            def arange(k, device=None, dtype=None):
                return np.arange(k, dtype=dtype)

        class Lax:
            unrolls = []

            @staticmethod
            def fori_loop(lower, upper, body, value, unroll=1):  # jax.lax.fori_loop's meaning
                Lax.unrolls.append(unroll)
                for j in range(lower, upper):
                    value = body(np.int32(j), value)
                return value

        jax_peers.jnp, jax_peers.lax, torch_peers.torch = np, Lax, Torch
        try:
            for op in ("quadratic", "square", "sine", "exp_sin_cos", "threshold"):
                for k in (1, 4, 12):
                    path, run = fixtures.make_problem(
                        "map", f"op={op} type=f32 n=999 k={k}", self.dir + "/ops"
                    )
                    self.assertEqual(run.returncode, 0, run.stderr)
                    m = problem_files.Problem.load(path)
                    x = np.array(m.inputs["x"]).view(Tensor)
                    for system, f in (
                        ("jax", jax_peers.map_function(m)),
                        ("torch", torch_peers.the_function(m)[0]),
                    ):
                        v = problem_files.validate(np.asarray(f(x)), m)
                        self.assertTrue(v.passed, f"{system} {op} k={k}: {v.summary}")
            # Unrolled by UNROLL, or by k where k is less (no more than the loop has).
            self.assertEqual(set(Lax.unrolls), {4, jax_peers.UNROLL})
            z = self.problems["zip"]
            self.assertTrue(
                problem_files.validate(jax_peers.ZIP_OPS["add"](z.inputs["x"], z.inputs["y"]), z).passed
            )
            f, _ = torch_peers.the_function(z)
            self.assertTrue(problem_files.validate(f(z.inputs["x"], z.inputs["y"]), z).passed)
            t = self.problems["tasks"]
            args = (t.inputs["x"], *(t.inputs["tasks"][n] for n in ("op", "p1", "p2")))
            count = t.info["task_op_count"]
            for system, f in (
                ("jax", jax_peers.select_tasks(count)),
                ("torch", torch_peers.the_function(t)[0]),
            ):
                v = problem_files.validate(f(*args), t)
                self.assertTrue(v.passed, f"{system} tasks: {v.summary}")
            image = self.problems["image"]
            v = problem_files.validate(jax_peers.image_function(image)(image.inputs["in"]), image)
            self.assertTrue(v.passed, f"jax sobel: {v.summary}")
        finally:
            jax_peers.jnp = jax_peers.lax = torch_peers.torch = None

    @unittest.skipUnless(
        shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"), "no nvcc to compile with"
    )
    def test_the_runtime_compiled_sources_compile(self):
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        for w, p in self.problems.items():
            source, name, grid, block, buffers, scalars = sources.kernel_of(p)
            path = os.path.join(self.dir, w + ".cu")
            with open(path, "w") as f:
                f.write(source)
            run = subprocess.run(
                [nvcc, "-cubin", "-arch=sm_90", "--std=c++17", "-o", path + ".cubin", path],
                capture_output=True,
                text=True,
            )
            self.assertEqual(run.returncode, 0, f"{w}:\n{run.stderr}\n{source}")
            self.assertIn(f"void {name}(", source)
            self.assertGreaterEqual(grid[0] * block[0] * grid[1] * block[1], p.size)


class InterpreterFileTest(unittest.TestCase):
    """interpreter_file.py, which PyCUDA's no-compiler route uses: the program cdl_run writes, the
    kernel's argument packed as kernel_program<float>, and kernel names the build's file has."""

    def setUp(self):
        from cdl_peers import interpreter_file

        self.f = interpreter_file
        self.env = os.environ.get("CDL_BENCH_DIR")
        os.environ["CDL_BENCH_DIR"] = os.path.dirname(fixtures.CDL_PROBLEM)

    def tearDown(self):
        if self.env is None:
            os.environ.pop("CDL_BENCH_DIR", None)
        else:
            os.environ["CDL_BENCH_DIR"] = self.env

    def test_a_programs_argument_is_laid_out_as_the_kernel_reads_it(self):
        doc = self.f.encode(op="threshold")
        self.assertEqual(doc["slots"], 2)  # its two branches: one waits in a slot
        arg = self.f.program_argument(doc)
        self.assertEqual(arg.dtype.itemsize, doc["max_steps"] * 4 + doc["max_constants"] * 4 + 4)
        raw = np.frombuffer(bytes(memoryview(arg)), dtype=np.uint8)
        steps = np.asarray(doc["steps"], dtype=np.uint8).reshape(-1)
        self.assertTrue(np.array_equal(raw[: len(steps)], steps))
        self.assertFalse(raw[len(steps) : doc["max_steps"] * 4].any())
        numbers = np.frombuffer(raw[doc["max_steps"] * 4 :][: doc["max_constants"] * 4].tobytes(), np.float32)
        self.assertEqual(list(numbers[: len(doc["constants"])]), [np.float32(c) for c in doc["constants"]])
        self.assertEqual(int(np.frombuffer(raw[-4:].tobytes(), np.int32)[0]), len(doc["steps"]))

    def test_the_kernel_named_is_in_the_builds_file(self):
        with open(self.f.fatbin_path(), "rb") as f:
            fatbin = f.read()
        for op, k, name in (
            ("quadratic", 1, "cdl_interpreter_scalar_f32_1_0"),
            ("quadratic", 256, "cdl_interpreter_scalar_f32_16_0"),
            ("threshold", 1, "cdl_interpreter_scalar_f32_1_4"),
            ("threshold", 16, "cdl_interpreter_scalar_f32_16_4"),
        ):
            self.assertEqual(self.f.scalar_kernel(self.f.encode(op=op), k), name)
            self.assertIn(name.encode(), fatbin)

    def test_a_text_outside_the_language_or_a_missing_build_is_said(self):
        with self.assertRaisesRegex(ValueError, "not in 08's language"):
            self.f.encode(text="x +")
        os.environ["CDL_BENCH_DIR"] = tempfile.gettempdir()
        with self.assertRaisesRegex(self.f.Missing, "cdl_interpreter.fatbin not found"):
            self.f.fatbin_path()
        del os.environ["CDL_BENCH_DIR"]
        with self.assertRaisesRegex(self.f.Missing, "CDL_BENCH_DIR is not set"):
            self.f.encode(op="quadratic")


class JaxTimingTest(unittest.TestCase):
    """JAX is timed from its profiler's trace (jax_peers.call_spans): each call's GPU work, from its
    first kernel's start to its last one's end, between the flushes."""

    @staticmethod
    def trace(*steps):
        meta = [
            {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:GPU:0"}},
            {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "/host:CPU"}},
        ]
        events = [  # listed out of order, as a trace may be
            {"ph": "X", "pid": 1, "ts": ts, "dur": dur, "args": {"hlo_module": module}}
            for ts, dur, module in reversed(steps)
        ]
        host = [{"ph": "X", "pid": 7, "ts": 0.0, "dur": 1e6, "args": {}}]  # the host's: never the GPU's
        return {"traceEvents": meta + host + events}

    def test_a_call_is_its_kernels_from_the_first_start_to_the_last_end(self):
        from cdl_peers import jax_peers

        flush = jax_peers.FLUSH_MODULE
        trace = self.trace(
            (-50.0, 20.0, "jit_g"),  # an earlier case's, still on the GPU as the trace began
            (0.0, 37.0, flush),
            (40.0, 1.5, flush),  # a flush is two kernels
            (100.0, 30.0, "jit_f"),  # one call, one kernel
            (200.0, 37.0, flush),
            (240.0, 1.5, flush),
            (300.0, 10.0, "jit_f"),
            (320.0, 1.0, "jit_f"),
            (350.0, 10.0, "jit_f"),  # a loop, with its gaps
            (400.0, 37.0, flush),
            (440.0, 1.5, flush),  # the flush that ends the last call
            (500.0, 5.0, "jit_h"),  # after it: no call's
        )
        self.assertEqual(jax_peers.call_spans(trace, flush), [30.0, 60.0])

    def test_a_trace_with_no_gpu_is_an_error_not_a_time(self):
        from cdl_peers import jax_peers

        trace = self.trace((0.0, 1.0, "jit_f"))
        trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("pid") != 1 or e["ph"] != "M"]
        with self.assertRaisesRegex(RuntimeError, "no GPU process"):
            jax_peers.call_spans(trace, jax_peers.FLUSH_MODULE)


class RevisionTest(unittest.TestCase):
    def test_the_build_s_revision_is_recorded_where_none_is_given(self):
        """A tree copied with a .git that is not its own (the GPU machine's) records the revision
        its build was configured at, not that .git's."""
        build = tempfile.mkdtemp(prefix="cdl_build.")
        self.addCleanup(shutil.rmtree, build)
        with open(os.path.join(build, "git_revision"), "w") as f:
            f.write("0123abcd\n")
        with unittest.mock.patch.dict(os.environ):
            os.environ.pop("CDL_GIT_REVISION", None)
            self.assertEqual(results_file.git_revision(build), "0123abcd")
            self.assertNotEqual(results_file.git_revision(os.path.join(build, "none")), "0123abcd")
            os.environ["CDL_GIT_REVISION"] = "given"
            self.assertEqual(results_file.git_revision(build), "given")


if __name__ == "__main__":
    fixtures.main()
