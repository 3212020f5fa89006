"""Tests of the Python peers (bench/python/cdl_peers) that need no GPU: the problems cdl_problem
writes, validation, the CUDA C the source-compiling peers build, skipping a system that cannot
run, and the results file the report reads. Run by ctest:
    test_peers.py CDL_PROBLEM
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = os.path.join(ROOT, "bench", "python")
sys.path.insert(0, PEERS)
sys.path.insert(0, os.path.join(ROOT, "tests", "report"))
from cdl_peers import __main__ as runner, harness, sources  # noqa: E402
from helpers import report_text  # noqa: E402

CDL_PROBLEM = None
PROBLEMS = {
    "map": "op=exp_sin_cos type=f32 n=1000 k=4",
    "zip": "op=add type=f64 n=1001",
    "tasks": "layout=random distinct=32 n=5000",
    "image": "op=sobel 37x5 r=1",
}


def make_problem(workload, spec, where):
    path = os.path.join(where, workload)
    run = subprocess.run([CDL_PROBLEM, path, workload, *spec.split()], capture_output=True, text=True)
    return path, run


class ProblemTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="cdl_peers_test.")
        cls.problems = {}
        for w, spec in PROBLEMS.items():
            path, run = make_problem(w, spec, cls.dir)
            assert run.returncode == 0, run.stderr
            cls.problems[w] = harness.Problem.load(path)

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
        self.assertTrue(harness.validate(good, m).passed)
        bad = good.copy()
        bad[17] *= 1.001
        v = harness.validate(bad, m)
        self.assertFalse(v.passed)
        self.assertEqual(v.failures, 1)
        self.assertIn("first at index 17", v.summary)
        unwritten = good.copy()
        unwritten[3] = np.nan  # what an element left at the poison looks like
        self.assertFalse(harness.validate(unwritten, m).passed)
        self.assertFalse(harness.validate(good[:-1], m).passed)

    def test_bad_problems_are_refused_and_leave_nothing(self):
        for workload, spec, message in (
            ("map", "op=nope type=f32 n=4 k=1", "unknown map op 'nope'"),
            ("map", "op=square type=f32 n=4", "missing k="),
            ("zip", "op=add type=f32 n=4 k=2", "unknown argument 'k'"),
            ("blur", "n=4", "unknown workload 'blur'"),
            ("tasks", "layout=random distinct=33 n=4", "distinct ops must be 1..32"),
        ):
            path, run = make_problem(workload, spec, os.path.join(self.dir, "bad"))
            self.assertEqual(run.returncode, 2, spec)
            self.assertIn(message, run.stderr)
            self.assertFalse(os.path.exists(os.path.join(path, "problem.json")), spec)
        with self.assertRaises(harness.ProblemError):
            harness.Problem.load(os.path.join(self.dir, "bad", "map"))

    def test_every_case_s_form_is_described_where_its_module_says_what_it_is(self):
        # The report names each form from its module's docstring (harness.forms_of).
        from cdl_peers.__main__ import SYSTEMS

        for name, module in SYSTEMS.items():
            forms = harness.forms_of(module.__doc__)
            for case in module.cases():
                technique = case.name.split("/")[0]
                self.assertIn(technique, forms, f"{name}: {case.name} is not in its module's docstring")
                self.assertGreater(len(forms[technique]), 20, f"{name}: {technique}: {forms[technique]!r}")

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
                    path, run = make_problem("map", f"op={op} type=f32 n=999 k={k}", self.dir + "/ops")
                    self.assertEqual(run.returncode, 0, run.stderr)
                    m = harness.Problem.load(path)
                    x = np.array(m.inputs["x"]).view(Tensor)
                    for system, f in (
                        ("jax", jax_peers.map_function(m)),
                        ("torch", torch_peers.the_function(m)[0]),
                    ):
                        v = harness.validate(np.asarray(f(x)), m)
                        self.assertTrue(v.passed, f"{system} {op} k={k}: {v.summary}")
            # Unrolled by UNROLL, or by k where k is less (no more than the loop has).
            self.assertEqual(set(Lax.unrolls), {4, jax_peers.UNROLL})
            z = self.problems["zip"]
            self.assertTrue(
                harness.validate(jax_peers.ZIP_OPS["add"](z.inputs["x"], z.inputs["y"]), z).passed
            )
            f, _ = torch_peers.the_function(z)
            self.assertTrue(harness.validate(f(z.inputs["x"], z.inputs["y"]), z).passed)
            t = self.problems["tasks"]
            args = (t.inputs["x"], *(t.inputs["tasks"][n] for n in ("op", "p1", "p2")))
            count = t.info["task_op_count"]
            for system, f in (
                ("jax", jax_peers.select_tasks(count)),
                ("torch", torch_peers.the_function(t)[0]),
            ):
                v = harness.validate(f(*args), t)
                self.assertTrue(v.passed, f"{system} tasks: {v.summary}")
            image = self.problems["image"]
            v = harness.validate(jax_peers.image_function(image)(image.inputs["in"]), image)
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


PYCUDA_BANNER = """-------------------------------------------------------------------
PyCUDA ERROR: The context stack was not empty upon module cleanup.
-------------------------------------------------------------------
A context was still active when the context stack was being
cleaned up. At this point in our execution, CUDA may already
have been deinitialized, so there is no way we can finish
cleanly. The program will be aborted now.
Use Context.pop() to avoid this problem.
-------------------------------------------------------------------
"""

FAKE_PACKAGES = {  # each the way a real install breaks
    "cupy/__init__.py": "raise ImportError('numpy.core.multiarray failed to import')\n",
    "numba/__init__.py": "raise ImportError('Numba needs NumPy 2.3 or less. Got NumPy 2.5.')\n",
    "cuda/__init__.py": "",
    "cuda/bindings/__init__.py": (
        "raise ModuleNotFoundError(\"No module named 'cuda.bindings'\", name='cuda.bindings')\n"
    ),
    "pycuda/__init__.py": "raise ModuleNotFoundError(\"No module named 'pycuda'\", name='pycuda')\n",
    "torch/__init__.py": "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n",
    "jax/__init__.py": "raise ImportError('jaxlib version 0.4.30 is older than jax requires (0.11.2)')\n",
}


class InterpreterFileTest(unittest.TestCase):
    """interpreter_file.py, which PyCUDA's no-compiler route uses: the program cdl_run writes, the
    kernel's argument packed as kernel_program<float>, and kernel names the build's file has."""

    def setUp(self):
        from cdl_peers import interpreter_file

        self.f = interpreter_file
        self.env = os.environ.get("CDL_BENCH_DIR")
        os.environ["CDL_BENCH_DIR"] = os.path.dirname(CDL_PROBLEM)

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
            self.assertEqual(runner.git_revision(build), "0123abcd")
            self.assertNotEqual(runner.git_revision(os.path.join(build, "none")), "0123abcd")
            os.environ["CDL_GIT_REVISION"] = "given"
            self.assertEqual(runner.git_revision(build), "given")


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cdl_peers_runner.")
        self.fake = os.path.join(self.dir, "fake")
        for path, text in FAKE_PACKAGES.items():
            os.makedirs(os.path.dirname(os.path.join(self.fake, path)), exist_ok=True)
            with open(os.path.join(self.fake, path), "w") as f:
                f.write(text)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_peers(self, *args, env=None):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([self.fake, PEERS]), **(env or {}))
        return subprocess.run(
            [sys.executable, "-m", "cdl_peers", "--cdl-problem", CDL_PROBLEM, *args],
            capture_output=True,
            text=True,
            env=env,
        )

    def test_systems_that_cannot_run_are_skipped_with_one_line_each(self):
        out = os.path.join(self.dir, "python.json")
        run = self.run_peers("--out", out)
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = [l for l in run.stderr.splitlines() if "skipped" in l]
        self.assertEqual(len(lines), 7, run.stderr)
        self.assertRegex(run.stderr, r"cdl_peers: 7 systems probed in \d+\.\d s", "the phase and its time")
        with open(out) as f:
            doc = json.load(f)
        systems = doc["cdl_python"]["systems"]
        self.assertEqual(doc["cdl_python"]["schema"], harness.PYTHON_SCHEMA)
        self.assertEqual({s["status"] for s in systems.values()}, {"skipped"})
        self.assertIn("fails to import against numpy", systems["numba"]["reason"])
        self.assertIn("Numba needs NumPy 2.3 or less", systems["numba"]["reason"])
        self.assertIn("fails to import against numpy", systems["cupy"]["reason"])
        self.assertIn("not installed", systems["pycuda"]["reason"])
        self.assertIn("not installed", systems["cuda_python"]["reason"])
        self.assertRegex(systems["torch"]["reason"], r"^torch is not installed for ")
        self.assertRegex(
            systems["triton"]["reason"], r"^torch is not installed for .* \(Triton's tensors are torch's\)$"
        )
        self.assertEqual(
            systems["jax"]["reason"],
            "jax fails to import (ImportError: jaxlib version 0.4.30 is older than jax requires (0.11.2))",
        )
        self.assertEqual(doc["benchmarks"], [])
        self.assertFalse([n for n in os.listdir(self.dir) if ".tmp" in n], "temporary files left behind")

    def test_the_quick_mode_leaves_today_s_systems_out_unless_named(self):
        out = os.path.join(self.dir, "python.json")
        run = self.run_peers("--out", out, "--quick")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stderr, r"cdl_peers: 4 systems probed in \d+\.\d s")
        with open(out) as f:
            systems = json.load(f)["cdl_python"]["systems"]
        for name in runner.NOT_QUICK:
            self.assertEqual(systems[name]["status"], "skipped")
            self.assertEqual(
                systems[name]["reason"],
                "not run in the quick mode: `python3 -m cdl_peers` without --quick runs it",
            )
        run = self.run_peers("--out", out, "--quick", "--systems", "jax")
        with open(out) as f:
            systems = json.load(f)["cdl_python"]["systems"]
        self.assertEqual(list(systems), ["jax"])
        self.assertIn("jax fails to import", systems["jax"]["reason"], "named, it runs (here: is probed)")

    def test_a_run_in_two_calls_adds_the_second_s_systems_to_the_first_s_file(self):
        out = os.path.join(self.dir, "python.json")
        first = self.run_peers("--out", out, "--systems", "cupy,numba", env={"CDL_GIT_REVISION": "abc"})
        self.assertEqual(first.returncode, 0, first.stderr)
        second = self.run_peers("--out", out, "--systems", "jax", "--add", env={"CDL_GIT_REVISION": "abc"})
        self.assertEqual(second.returncode, 0, second.stderr)
        with open(out) as f:
            self.assertEqual(list(json.load(f)["cdl_python"]["systems"]), ["cupy", "numba", "jax"])
        other = self.run_peers("--out", out, "--systems", "torch", "--add", env={"CDL_GIT_REVISION": "def"})
        self.assertEqual(other.returncode, 2)
        self.assertIn("has git_revision 'abc', this run 'def'", other.stderr)
        with open(out) as f:
            self.assertNotIn("torch", json.load(f)["cdl_python"]["systems"], "a refused run changes nothing")
        garbled = os.path.join(self.dir, "garbled.json")
        with open(garbled, "w") as f:
            f.write("{")
        run = self.run_peers("--out", garbled, "--systems", "jax", "--add")
        self.assertEqual(run.returncode, 2)
        self.assertIn("is not a python.json to add to", run.stderr)

    def test_a_new_op_is_timed_in_each_cache_state_through_new_processes(self):
        # A system whose session answers from a file in TRITON_CACHE_DIR (set for each new process)
        # or from its memory: the record must show the fresh process missing both, the second
        # process finding the first's file, and the warm process's repeat finding its memory.
        os.makedirs(os.path.join(self.fake, "fakepeer"))
        open(os.path.join(self.fake, "fakepeer", "__init__.py"), "w").close()
        with open(os.path.join(self.fake, "fakepeer", "session.py"), "w") as f:
            f.write(
                "import os\n"
                "from cdl_peers import newop\n"
                "def new_op_session():\n"
                "    made = set()\n"
                "    cache = os.environ.get('TRITON_CACHE_DIR')\n"
                "    def run(c):\n"
                "        marker = cache and os.path.join(cache, str(c))\n"
                "        ms = 0.5 if c in made else 1.0 if marker and os.path.exists(marker) else 50.0\n"
                "        made.add(c)\n"
                "        if marker:\n"
                "            os.makedirs(cache, exist_ok=True)\n"
                "            open(marker, 'w').close()\n"
                "        x = newop.new_op_input().astype('float64')\n"
                "        return newop.valid(x * x + c, c), ms\n"
                "    return run\n"
            )
        old = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join([self.fake, PEERS])
        sys.path.insert(0, self.fake)
        try:
            from cdl_peers import newop

            record = newop.compile_states("fakepeer.session", "Fake")
        finally:
            sys.path.remove(self.fake)
            if old is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = old
        self.assertEqual((record["claim"], record["runs"], record["valid"]), ("compile", True, True), record)
        f = record["figures"]
        self.assertEqual((f["fresh_process_ms"], f["disk_hit_ms"]), (50.0, 1.0))
        self.assertEqual((f["new_source_ms"], f["memory_hit_ms"]), ([50.0] * 3, [0.5] * 3))
        self.assertGreaterEqual(f["import_ms"], 0.0)
        self.assertIsInstance(f["constant"], int)

    def test_a_session_makes_each_op_once_and_validates_what_it_returns(self):
        from cdl_peers import newop

        made, synced = [], []

        def make(c):
            made.append(c)
            return lambda: newop.new_op_input().astype(np.float64) ** 2 + c

        run = newop.session(make, synced.append, np.asarray)
        self.assertTrue(run(7)[0])
        self.assertTrue(run(7)[0])
        self.assertEqual((made, len(synced)), ([7], 2), "the same op again is the memory cache's")
        wrong = newop.session(lambda c: lambda: newop.new_op_input(), lambda _: None, np.asarray)
        self.assertFalse(wrong(7)[0])

    def test_a_new_op_that_cannot_run_is_recorded_with_its_error(self):
        from cdl_peers import newop

        record = newop.compile_states("nosuch.module", "Missing")
        self.assertFalse(record["runs"])
        self.assertIn("ModuleNotFoundError: No module named 'nosuch'", record["error"])
        self.assertEqual(record["raised_at"], "python3 -m cdl_peers.newop nosuch.module")

    def test_a_system_that_dies_with_a_banner_is_reported_by_its_message(self):
        # PyCUDA's exit banner when a context is left pushed: its last line is a rule of dashes.
        with open(os.path.join(self.fake, "pycuda", "__init__.py"), "w") as f:
            f.write("import sys, os\nsys.stderr.write(%r)\nsys.stderr.flush()\nos._exit(1)\n" % PYCUDA_BANNER)
        out = os.path.join(self.dir, "python.json")
        run = self.run_peers("--out", out, "--quick", "--systems", "pycuda")
        self.assertEqual(run.returncode, 1, run.stderr)
        with open(out) as f:
            pycuda = json.load(f)["cdl_python"]["systems"]["pycuda"]
        self.assertEqual(pycuda["status"], "failed")
        self.assertEqual(
            pycuda["reason"],
            "PyCUDA ERROR: The context stack was not empty upon module cleanup. (exit status 1)",
        )
        self.assertIn("pycuda FAILED: PyCUDA ERROR: The context stack was not empty", run.stderr)

    def test_failure_reasons_are_the_exception_or_the_error_never_a_rule(self):
        self.assertEqual(
            harness.failure_reason(PYCUDA_BANNER, 134),
            "PyCUDA ERROR: The context stack was not empty upon module cleanup. (exit status 134)",
        )
        traceback = (
            'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
            "pycuda._driver.LogicError: cuCtxPopCurrent failed: invalid device context\n" + "-" * 40 + "\n"
        )
        self.assertEqual(
            harness.failure_reason(traceback, 1),
            "pycuda._driver.LogicError: cuCtxPopCurrent failed: invalid device context (exit status 1)",
        )
        self.assertEqual(harness.failure_reason("----\n====\n", 139), "exit status 139")
        self.assertEqual(harness.failure_reason("", 2), "exit status 2")

    def test_an_experiment_records_its_figures_or_its_error_and_where(self):
        ran = harness.attempt("C2", "staged / plain", lambda: (True, {"ratio": 1.02}), article="002")
        self.assertEqual(
            (ran["claim"], ran["runs"], ran["valid"], ran["figures"], ran["article"]),
            ("C2", True, True, {"ratio": 1.02}, "002"),
        )

        def rejects(value):  # the shape of numba's option check: a local called `value`, then the raise
            raise ValueError("Expected fastmath option(s) to be either a bool, dict or set")

        failed = harness.attempt("A1", "an @njit argument", lambda: rejects(object()))
        self.assertFalse(failed["runs"] or failed["valid"])
        self.assertEqual(
            failed["error"], "ValueError: Expected fastmath option(s) to be either a bool, dict or set"
        )
        self.assertRegex(
            failed["raised_at"], r"test_peers\.py:\d+ in rejects \(value of type builtins\.object\)"
        )

        def in_child():
            raise harness.ChildError("NumbaTypeError: unaligned", "numba/cuda/lowering.py:10 in lower")

        child = harness.attempt("E2", "packed", in_child)
        self.assertEqual(
            (child["error"], child["raised_at"]),
            ("NumbaTypeError: unaligned", "numba/cuda/lowering.py:10 in lower"),
        )

    def test_bad_arguments_are_refused(self):
        run = self.run_peers("--out", os.path.join(self.dir, "x.json"), "--systems", "cupy,julia")
        self.assertEqual(run.returncode, 2)
        self.assertIn("unknown system julia", run.stderr)
        run = subprocess.run(
            [sys.executable, "-m", "cdl_peers", "--cdl-problem", "/nonexistent", "--out", "x.json"],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=PEERS),
        )
        self.assertEqual(run.returncode, 2)
        self.assertIn("not an executable cdl_problem", run.stderr)


class ResultsTest(unittest.TestCase):
    """The records a peer writes are cdl_bench's: the report reads them beside the C++ results."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cdl_peers_results.")
        self.results = os.path.join(self.dir, "results")
        shutil.copytree(os.path.join(ROOT, "tests", "report", "fixture"), self.results)
        with open(os.path.join(self.results, "bench.json")) as f:
            cpp = json.load(f)
        # A problem of the C++ run, to set a peer beside it.
        self.cpp_name = next(
            b["run_name"]
            for b in cpp["benchmarks"]
            if b["run_name"].startswith("map/01_template_functor/scalar/op:quadratic/type:f32/")
        )
        self.problem = self.cpp_name.split("/", 3)[3].split("/iterations:")[0]
        # The peers ran on the C++ run's device (a file of another is set aside by the report).
        self.device = json.loads(cpp["context"]["cdl_environment"])["device"]["name"]

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write_python(self, benchmarks, experiments=(), cpp_stages=()):
        part = {
            "system": "numba",
            "status": "ran",
            "version": "0.0 (test)",
            "device": {"name": self.device},
            "copy_bandwidth_gbs": 3000.0,
            "benchmarks": benchmarks,
            "experiments": list(experiments),
        }
        skipped = {
            "system": "cupy",
            "status": "skipped",
            "reason": "cupy is not installed for test",
            "benchmarks": [],
            "experiments": [],
        }
        harness.write_json_atomic(
            os.path.join(self.results, "python.json"),
            runner.merge([part, skipped], quick=True, cpp_stages=cpp_stages),
        )

    def report(self):
        run = subprocess.run(
            [
                sys.executable,
                os.path.join(ROOT, "reports", "report.py"),
                self.results,
                "--out",
                os.path.join(self.dir, "out"),
            ],
            capture_output=True,
            text=True,
        )
        return run, report_text(os.path.join(self.dir, "out"))

    def test_the_report_sets_peers_beside_the_strategies_and_answers_the_claims(self):
        run_name = f"map/numba.inline/scalar/{self.problem}/iterations:3/repeats:3/manual_time"
        entries = harness.result_entries(
            run_name,
            [0.30, 0.31, 0.32],
            {"GB/s": 2000.0, "frac_copy": 0.66, "max_rel_err": 1e-7, "first_call_ms": 85.0},
            3,
            3,
        )
        self.assertEqual(
            {e.get("aggregate_name") for e in entries}, {None, "median", "mean", "min", "max", "cv"}
        )
        self.assertEqual(
            [e["real_time"] for e in entries if e["run_type"] == "iteration"], [300.0, 310.0, 320.0]
        )

        def rejects():
            raise ValueError("Expected fastmath option(s) to be either a bool, dict or set")

        njit = harness.attempt(
            "A1", "an @njit function as a kernel argument (article 000)", rejects, article="000"
        )
        self.write_python(entries, [dict(njit, system="numba")])
        run, text = self.report()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("The articles' own systems", text)
        self.assertIn("| `numba.inline` | 310.0 µs |", text)
        self.assertIn("cupy is not installed for test", text)
        self.assertRegex(
            text,
            r"\| A1 \| 000 \| [^|]*`@njit`[^|]* \| Numba \| Numba \| fails: `ValueError: Expected "
            r"fastmath option[^|]*` \(raised in `[^`]*test_peers.py:\d+ in rejects`\): not the feature"
            r" refused[^|]* "
            r"\| [^|]* \| \*\*not measured\*\* \|",
        )
        self.assertRegex(
            text, r"\| 000 \| an @njit function as a kernel argument \(article 000\) \| numba \| fails: "
        )

    def test_compiles_timed_in_the_peers_run_are_set_beside_theirs_with_a_computed_verdict(self):
        with open(os.path.join(self.results, "bench.json")) as f:
            cpp = json.load(f)["benchmarks"]
        stages = [b for b in cpp if re.match(runner.CPP_JIT_FILTER, b["run_name"])]
        self.assertEqual(
            {b["run_name"].split("/new_op")[0] for b in stages},
            {"jit/compile/06", "jit/compile/08", "jit/compile/one_line_kernel", "jit/link/07"},
        )
        baseline = []  # 08 at 10 ms, its baseline tier at 8 ms, every repetition: under the fixture's floor
        for b in stages:
            if b["run_name"].startswith("jit/compile/08/new_op"):
                self.assertEqual(b["time_unit"], "ms")
                b["real_time"] = b["cpu_time"] = 0.0 if b.get("aggregate_name") in ("cv", "stddev") else 10.0
                c = json.loads(json.dumps(b).replace("jit/compile/08/", "jit/compile/08_baseline/"))
                c["real_time"] = c["cpu_time"] = 0.0 if b.get("aggregate_name") in ("cv", "stddev") else 8.0
                baseline.append(c)
        self.assertTrue(all(re.match(runner.CPP_JIT_FILTER, c["run_name"]) for c in baseline))
        stages += baseline

        def compile_record(new_source_ms, spread=0.0):
            record = harness.attempt(
                "compile",
                "Numba: a new device function",
                lambda: (
                    True,
                    {"new_source_ms": [new_source_ms - spread, new_source_ms, new_source_ms + spread]},
                ),
            )
            return dict(record, system="numba")

        # A difference is one only where the two spreads do not overlap (08's repetitions are all 10 ms,
        # its baseline's all 8 ms): the peer faster, slower, or no different.
        for peer_ms, spread, verdict in (
            (20.0, 0.0, "faster than numba's new source (20.0 ms)"),
            (5.0, 0.0, "slower than numba's new source (5.0 ms)"),
            (9.0, 1.5, "no different from (the spreads overlap) numba's new source (9.0 ms)"),
        ):
            self.write_python([], [compile_record(peer_ms, spread)], cpp_stages=stages)
            run, text = self.report()
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("All of these ran in one run", text)
            self.assertIn(
                "08 compiles and loads a new op in 10.0 ms: faster than NVRTC's one-line floor", text
            )
            sentence = text.split("08 compiles and loads a new op in 10.0 ms")[1].split("08's baseline tier")[
                0
            ]
            self.assertIn(verdict, sentence)
            self.assertIn(
                "08's baseline tier compiles and loads a new op in 8.0 ms:"
                " faster than NVRTC's one-line floor",
                text,
            )
            self.assertIn(
                (
                    "| this suite (C++) | 08: the map's vec kernel through libNVVM, to a loaded kernel |"
                    " 10.00 ms |"
                ),
                text,
            )
        self.write_python([], [compile_record(1.0)])  # a file from before: the JIT section's figures
        run, text = self.report()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("All of these ran in one run", text)
        self.assertIn("The C++ rows are this report's JIT section's new-op medians", text)

    def test_today_s_systems_get_the_own_function_table_with_a_computed_verdict(self):
        with open(os.path.join(self.results, "bench.json")) as f:
            cpp = json.load(f)
        base = next(
            b
            for b in cpp["benchmarks"]
            if b.get("aggregate_name") == "median"
            and b["run_name"].startswith("map/01_template_functor/vec/")
            and b["run_name"].split("/iterations:")[0].endswith(self.problem)
        )
        run_name = f"map/triton.constexpr_fn/block/{self.problem}/iterations:3/repeats:3/manual_time"
        time_us = 1.5 * base["real_time"]
        entries = harness.result_entries(
            run_name,
            [time_us / 1e3] * 3,
            {"GB/s": 1500.0, "frac_copy": 0.5, "max_rel_err": 1e-7, "first_call_ms": 900.0},
            3,
            3,
        )
        compile_record = {
            "claim": "compile",
            "name": "Triton: a new op",
            "runs": True,
            "valid": True,
            "error": "",
            "system": "triton",
            "figures": {
                "new_source_ms": [120.0, 100.0, 110.0],
                "fresh_process_ms": 1200.0,
                "import_ms": 3500.0,
            },
        }
        self.write_python(entries, [compile_record])
        with open(os.path.join(self.results, "python.json")) as f:
            doc = json.load(f)
        for b in doc["benchmarks"]:  # the part is written as numba's: make it Triton's
            b["run_name"] = b["name"] = b["name"].replace("numba", "triton")
        harness.write_json_atomic(os.path.join(self.results, "python.json"), doc)
        run, text = self.report()
        self.assertEqual(run.returncode, 0, run.stderr)
        section = text.split("### From Python, my own elementwise function")[1].split("\n\n", 3)
        self.assertIn("| Triton | `triton.constexpr_fn` | ", section[1])
        self.assertIn(", 1.50× (n = ", section[1])
        self.assertIn("| 110.0 ms | 1200 ms |", section[1])
        self.assertIn("Cheapest new op: Triton's, 110.0 ms in a warm process.", section[2])

    def test_a_wrong_python_result_fails_the_report(self):
        run_name = f"map/numba.inline/scalar/{self.problem}"
        self.write_python([harness.error_entry(run_name, "validation failed: WRONG RESULT: 3 of 9 elements")])
        run, text = self.report()
        self.assertEqual(run.returncode, 1)
        self.assertIn(f"`{run_name}`: validation failed: WRONG RESULT", text)

    def test_a_foreign_python_file_is_refused(self):
        with open(os.path.join(self.results, "python.json"), "w") as f:
            json.dump({"context": {}, "benchmarks": []}, f)
        run, _ = self.report()
        self.assertEqual(run.returncode, 2)
        self.assertIn("not a cdl-python/1 file", run.stderr)


if __name__ == "__main__":
    CDL_PROBLEM = os.path.abspath(sys.argv.pop(1))
    unittest.main()
