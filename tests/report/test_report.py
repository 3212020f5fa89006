"""The whole report (reports/report.py and cdl_report/build.py) on the trimmed H100 results in
fixture/: every section, plot and table is written, findings are computed from the numbers, and
failed benchmarks head the report."""
import os
import shutil
import unittest

from helpers import FixtureTest


class ReportTest(FixtureTest):
    def test_writes_the_report_with_its_plots_and_tables(self):
        text = self.report()
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
        text = self.report(status=1)
        self.assertLess(text.index("ERRORS"), text.index("The memory-bound map"))
        self.assertIn("validation failed: WRONG RESULT", text)

    def test_without_the_optional_files_the_report_says_what_is_missing(self):
        os.remove(os.path.join(self.results, "resources.json"))
        os.remove(os.path.join(self.results, "build_facts.json"))
        text = self.report()
        self.assertIn("No `resources.json` beside the results", text)
        self.assertNotIn("A kernel may call other kernels", text)

    def test_a_second_run_gives_the_run_to_run_spread(self):
        def slower(doc):
            for b in doc["benchmarks"]:
                if b["run_name"].startswith("map/01_template_functor/vec/") and b.get("aggregate_name") == "median":
                    b["real_time"] *= 1.05
        shutil.copy(os.path.join(self.results, "bench.json"), os.path.join(self.results, "repeat.json"))
        self.edit_results(slower, "repeat.json")
        text = self.report()
        self.assertIn("## Run to run", text)
        self.assertIn("5.00% at most", text)


if __name__ == "__main__":
    unittest.main()
