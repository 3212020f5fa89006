"""Tests of the report generator (reports/report.py) and the resource collector
(reports/resources.py) on committed result files from an H100 run, trimmed (tests/report/fixture).
Run by ctest with a Python that has matplotlib; they need no GPU.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.join(HERE, "fixture")
sys.path.insert(0, os.path.join(ROOT, "reports"))
import resources  # noqa: E402


def run_report(results, out):
    return subprocess.run([sys.executable, os.path.join(ROOT, "reports", "report.py"), results, "--out", out],
                          capture_output=True, text=True)


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cdl_report_test.")
        self.results = os.path.join(self.dir, "results")
        self.out = os.path.join(self.dir, "out")
        shutil.copytree(FIXTURE, self.results)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def edit_results(self, edit, name="bench.json"):
        path = os.path.join(self.results, name)
        with open(path) as f:
            doc = json.load(f)
        edit(doc)
        with open(path, "w") as f:
            json.dump(doc, f)

    def test_writes_the_report_with_its_plots_and_tables(self):
        run = run_report(self.results, self.out)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(self.out, "report.md")) as f:
            text = f.read()
        for heading in ("The memory-bound map", "The dispatch penalty", "Per-element dispatch", "Run-time compilation",
                        "Stencils", "Matrix products against cuBLAS", "Kernel resources", "The articles' claims"):
            self.assertIn(heading, text)
        for png in ("map_bandwidth.png", "dispatch_penalty.png", "tasks_divergence.png", "jit_breakeven.png",
                    "image_blur.png", "matmul_cublas.png"):
            with open(os.path.join(self.out, png), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)
            self.assertIn(f"]({png})", text)
        self.assertTrue(os.path.exists(os.path.join(self.out, "resources.md")))
        self.assertFalse([n for n in os.listdir(self.out) if ".tmp" in n], "temporary files left behind")
        # Findings are computed: the fixture's switch kernel spills and reaches 0.834 of copy.
        self.assertIn("| `03_switch/vec` | 862.6 |", text)
        self.assertIn("0.834", text)
        self.assertIn("| `03_switch.cu` | `map_vec_kernel<float, switch_invoker", text)
        # Every claim of the articles has a row, with a verdict.
        claims = text.split("## The articles' claims")[1]
        rows = [l for l in claims.splitlines() if l.startswith("| 00")]
        self.assertEqual(len(rows), 11)
        for row in rows:
            self.assertRegex(row, r"\| (holds|does not hold|depends|no data) \|")
        self.assertIn("| A kernel may call other kernels as functions | build probes (`cdl_build_facts`) | does not hold |",
                      claims)
        self.assertIn("6 of 6 strategies (peers included) reach 0.97", text)

    def test_a_failed_benchmark_is_listed_first_and_fails_the_run(self):
        def fail_one(doc):
            doc["benchmarks"].append({"name": "map/05_virtual/vec/op:quadratic/type:f32/n:16/k:1",
                                      "run_name": "map/05_virtual/vec/op:quadratic/type:f32/n:16/k:1",
                                      "error_occurred": True, "error_message": "validation failed: WRONG RESULT"})
        self.edit_results(fail_one)
        run = run_report(self.results, self.out)
        self.assertEqual(run.returncode, 1)
        self.assertIn("FAILED", run.stderr)
        with open(os.path.join(self.out, "report.md")) as f:
            text = f.read()
        self.assertLess(text.index("ERRORS"), text.index("The memory-bound map"))
        self.assertIn("validation failed: WRONG RESULT", text)

    def assert_refused(self, message):
        run = run_report(self.results, self.out)
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn(message, run.stderr)
        self.assertNotIn("Traceback", run.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "report.md")), "a report was written anyway")

    def test_a_truncated_results_file_is_refused(self):
        path = os.path.join(self.results, "bench.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text[: len(text) // 2])
        self.assert_refused("not a readable JSON file")

    def test_a_foreign_json_file_is_refused(self):
        with open(os.path.join(self.results, "bench.json"), "w") as f:
            json.dump({"hello": [1, 2, 3]}, f)
        self.assert_refused("not a Google Benchmark results file")

    def test_a_google_benchmark_file_from_another_program_is_refused(self):
        self.edit_results(lambda doc: doc["context"].pop("cdl_environment"))
        self.assert_refused("not from cdl_bench")

    def test_a_missing_results_file_is_refused(self):
        os.remove(os.path.join(self.results, "bench.json"))
        self.assert_refused("no such file")

    def test_a_benchmark_without_times_is_refused(self):
        def break_one(doc):
            row = next(b for b in doc["benchmarks"] if b.get("aggregate_name") == "median")
            del row["real_time"]
        self.edit_results(break_one)
        self.assert_refused("no usable real_time")

    def test_a_resources_file_of_another_schema_is_refused(self):
        with open(os.path.join(self.results, "resources.json"), "w") as f:
            json.dump({"schema": "something-else/1", "kernels": []}, f)
        self.assert_refused("not a cdl-resources/1 file")

    def test_without_the_optional_files_the_report_says_what_is_missing(self):
        os.remove(os.path.join(self.results, "resources.json"))
        os.remove(os.path.join(self.results, "build_facts.json"))
        run = run_report(self.results, self.out)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(self.out, "report.md")) as f:
            text = f.read()
        self.assertIn("No `resources.json` beside the results", text)
        self.assertNotIn("A kernel may call other kernels", text)

    def test_a_second_run_gives_the_run_to_run_spread(self):
        def slower(doc):
            for b in doc["benchmarks"]:
                if b["run_name"].startswith("map/01_template_functor/vec/") and b.get("aggregate_name") == "median":
                    b["real_time"] *= 1.05
        shutil.copy(os.path.join(self.results, "bench.json"), os.path.join(self.results, "repeat.json"))
        self.edit_results(slower, "repeat.json")
        run = run_report(self.results, self.out)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(self.out, "report.md")) as f:
            text = f.read()
        self.assertIn("## Run to run", text)
        self.assertIn("5.00% at most", text)


class ResourcesTest(unittest.TestCase):
    PTXAS = """ptxas info    : 296 bytes gmem
ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'
ptxas info    : Function properties for _Z1kPf
    64 bytes stack frame, 32 bytes spill stores, 48 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 64 bytes cumulative stack size, 4096 bytes smem
ptxas info    : Function properties for __internal_trig_reduction_slowpathd
    40 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z1gPf' for 'sm_90'
ptxas info    : Function properties for _Z1gPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 38 registers, used 0 barriers
"""
    SASS = """
        Function : _Z1kPf
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   CALL.REL.NOINC R6 0x0 ;
        /*0020*/                   BRX R4 -0x30 ;
        /*0030*/                   CALL.REL.NOINC 0x100 ;
        Function : _Z1gPf
        /*0000*/                   EXIT ;
"""

    def test_ptxas_reports_are_read_per_kernel(self):
        k = resources.parse_ptxas(self.PTXAS, "strategies/x.cu")
        self.assertEqual(set(k), {"_Z1kPf", "_Z1gPf"})
        self.assertEqual((k["_Z1kPf"]["registers"], k["_Z1kPf"]["stack"], k["_Z1kPf"]["spill_stores"],
                          k["_Z1kPf"]["spill_loads"], k["_Z1kPf"]["smem"]), (32, 64, 32, 48, 4096))
        self.assertEqual((k["_Z1gPf"]["registers"], k["_Z1gPf"]["stack"], k["_Z1gPf"]["smem"]), (38, 0, 0))

    def test_sass_counts_calls_through_registers_not_direct_calls(self):
        counts = resources.parse_sass(self.SASS)
        self.assertEqual(counts["_Z1kPf"], [1, 1])
        self.assertEqual(counts["_Z1gPf"], [0, 0])


if __name__ == "__main__":
    unittest.main()
