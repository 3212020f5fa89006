"""The Python peers' results file as the report reads it (bench/python/cdl_peers), with no GPU: the
records the harness writes, the merge with skipped systems and the C++ stages, and a results file
the report refuses. Run by ctest:
    test_peers_results.py CDL_PROBLEM
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import peers_fixtures as fixtures
from cdl_peers import __main__ as runner, harness, experiment, records, results_file  # noqa: E402
from cdl_peers.problem import Problem  # noqa: E402
from helpers import report_text  # noqa: E402


class ResultsTest(unittest.TestCase):
    """The records a peer writes are cdl_bench's: the report reads them beside the C++ results."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cdl_peers_results.")
        self.results = os.path.join(self.dir, "results")
        shutil.copytree(os.path.join(fixtures.ROOT, "tests", "report", "fixture"), self.results)
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

    def identify(self, case):
        """(name, label) of a peer's case on the C++ run's problem, as the peer makes them from the
        problem.json that cdl_problem writes (its fields beside its name)."""
        fields = dict(p.split(":", 1) for p in self.problem.split("/"))
        info = {"name": "map/" + self.problem, "workload": "map", "fields": dict(fields, workload="map")}
        return Problem("", info).identify(case)

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
            results_file.merge([part, skipped], quick=True, cpp_stages=cpp_stages),
        )

    def report(self):
        run = subprocess.run(
            [
                sys.executable,
                os.path.join(fixtures.ROOT, "reports", "report.py"),
                self.results,
                "--out",
                os.path.join(self.dir, "out"),
                "--text-only",  # these tests read the pages, not the figures
            ],
            capture_output=True,
            text=True,
        )
        return run, report_text(os.path.join(self.dir, "out"))

    def test_the_report_sets_peers_beside_the_strategies_and_answers_the_claims(self):
        name, label = self.identify("numba.inline/scalar")
        run_name = f"{name}/iterations:3/repeats:3/manual_time"
        entries = records.result_entries(
            run_name,
            label,
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

        njit = experiment.attempt(
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
            r"fastmath option[^|]*` \(raised in `[^`]*test_peers_results\.py:\d+ in rejects`\): not the"
            r" feature refused[^|]* "
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
            record = experiment.attempt(
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
        name, label = self.identify("triton.constexpr_fn/block")
        run_name = f"{name}/iterations:3/repeats:3/manual_time"
        time_us = 1.5 * base["real_time"]
        entries = records.result_entries(
            run_name,
            label,
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
        run_name, label = self.identify("numba.inline/scalar")
        self.write_python(
            [records.error_entry(run_name, label, "validation failed: WRONG RESULT: 3 of 9 elements")]
        )
        run, text = self.report()
        self.assertEqual(run.returncode, 1)
        self.assertIn(f"`{run_name}`: validation failed: WRONG RESULT", text)

    def test_a_foreign_python_file_is_refused(self):
        with open(os.path.join(self.results, "python.json"), "w") as f:
            json.dump({"context": {}, "benchmarks": []}, f)
        run, _ = self.report()
        self.assertEqual(run.returncode, 2)
        self.assertIn("not a cdl-python/1 file", run.stderr)


class WriteTest(unittest.TestCase):
    def test_a_results_file_that_cannot_be_written_is_named_and_the_earlier_kept(self):
        import resource
        import signal

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "python.json")
            with open(path, "w") as f:
                f.write("before")
            child = os.fork()
            if child == 0:  # a full disk: writes past 100 bytes fail (EFBIG) and end nothing
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
                try:
                    harness.write_json_atomic(path, {"benchmarks": ["x" * 1000]})
                    os._exit(1)
                except harness.WriteError as e:
                    os._exit(0 if str(e).startswith(f"cannot write {path}: ") else 1)
            self.assertEqual(os.waitpid(child, 0)[1], 0)
            with open(path) as f:
                self.assertEqual(f.read(), "before")
            self.assertEqual(os.listdir(d), ["python.json"])


if __name__ == "__main__":
    fixtures.main()
