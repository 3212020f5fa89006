"""The peers' runner (python3 -m cdl_peers) with no GPU: systems that cannot run are skipped with their
reason, each in a process of its own; a new op's session; the C++ JIT stages it reads. Run by ctest:
    test_peers_runner.py CDL_PROBLEM
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from types import SimpleNamespace
from unittest import mock

import numpy as np

import peers_fixtures as fixtures
from cdl_peers import __main__ as runner, harness, experiment, results_file  # noqa: E402


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cdl_peers_runner.")
        self.fake = os.path.join(self.dir, "fake")
        for path, text in fixtures.FAKE_PACKAGES.items():
            os.makedirs(os.path.dirname(os.path.join(self.fake, path)), exist_ok=True)
            with open(os.path.join(self.fake, path), "w") as f:
                f.write(text)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_peers(self, *args, env=None):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([self.fake, fixtures.PEERS]), **(env or {}))
        return subprocess.run(
            [sys.executable, "-m", "cdl_peers", "--cdl-problem", fixtures.CDL_PROBLEM, *args],
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
        os.environ["PYTHONPATH"] = os.pathsep.join([self.fake, fixtures.PEERS])
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
            f.write(
                "import sys, os\nsys.stderr.write(%r)\nsys.stderr.flush()\nos._exit(1)\n"
                % fixtures.PYCUDA_BANNER
            )
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
            harness.failure_reason(fixtures.PYCUDA_BANNER, 134),
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
        ran = experiment.attempt("C2", "staged / plain", lambda: (True, {"ratio": 1.02}), article="002")
        self.assertEqual(
            (ran["claim"], ran["runs"], ran["valid"], ran["figures"], ran["article"]),
            ("C2", True, True, {"ratio": 1.02}, "002"),
        )

        def rejects(value):  # the shape of numba's option check: a local called `value`, then the raise
            raise ValueError("Expected fastmath option(s) to be either a bool, dict or set")

        failed = experiment.attempt("A1", "an @njit argument", lambda: rejects(object()))
        self.assertFalse(failed["runs"] or failed["valid"])
        self.assertEqual(
            failed["error"], "ValueError: Expected fastmath option(s) to be either a bool, dict or set"
        )
        self.assertRegex(
            failed["raised_at"], r"test_peers_runner\.py:\d+ in rejects \(value of type builtins\.object\)"
        )

        def in_child():
            raise experiment.ChildError("NumbaTypeError: unaligned", "numba/cuda/lowering.py:10 in lower")

        child = experiment.attempt("E2", "packed", in_child)
        self.assertEqual(
            (child["error"], child["raised_at"]),
            ("NumbaTypeError: unaligned", "numba/cuda/lowering.py:10 in lower"),
        )

    def test_the_quick_mode_leaves_the_experiments_to_a_full_run_and_the_file_says_so(self):
        class Device:  # what run_cases asks of a system's device, with no GPU
            notes = []

            def properties(self):
                return {"name": "fake", "l2_bytes": 1}

            def close(self):
                pass

        ran = {"claim": "A1", "name": "e", "runs": True, "valid": True, "error": "", "figures": {}}
        system = SimpleNamespace(
            NAME="fake",
            connect=lambda: ("1.0", Device()),
            cases=lambda: [],
            experiments=lambda dev, quick: [ran],
        )
        with mock.patch.object(harness, "measure_copy_gbs", return_value=1.0), mock.patch.object(
            harness, "event_gap_us", return_value=1.0
        ):
            quick = harness.run_system(system, [], harness.Settings.of(True))
            full = harness.run_system(system, [], harness.Settings.of(False))
            asked = harness.run_system(system, [], harness.Settings.of(True), experiments_only=True)
        self.assertEqual((quick["experiments"], quick.get("experiments_left_out")), ([], True))
        self.assertEqual([e["name"] for e in full["experiments"]], ["e"])
        self.assertNotIn("experiments_left_out", full)
        self.assertEqual([e["name"] for e in asked["experiments"]], ["e"])
        said = results_file.merge([quick], quick=True)["cdl_python"]
        self.assertEqual(said["experiments_left_out"], results_file.EXPERIMENTS_LEFT_OUT)
        self.assertNotIn("experiments_left_out", said["systems"]["fake"])
        self.assertNotIn("experiments_left_out", results_file.merge([full], quick=False)["cdl_python"])

    def test_bad_arguments_are_refused(self):
        run = self.run_peers("--out", os.path.join(self.dir, "x.json"), "--systems", "cupy,julia")
        self.assertEqual(run.returncode, 2)
        self.assertIn("unknown system julia", run.stderr)
        run = subprocess.run(
            [sys.executable, "-m", "cdl_peers", "--cdl-problem", "/nonexistent", "--out", "x.json"],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=fixtures.PEERS),
        )
        self.assertEqual(run.returncode, 2)
        self.assertIn("not an executable cdl_problem", run.stderr)


if __name__ == "__main__":
    fixtures.main()
