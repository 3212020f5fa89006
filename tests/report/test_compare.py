"""reports/compare.py: two results directories compared, as a report and as a regression gate."""
import os
import shutil
import subprocess
import sys
import unittest

from helpers import ROOT, FixtureTest

SLOWED = "map/01_template_functor/vec/op:quadratic/type:f32/n:16777216/k:16/"


class CompareTest(FixtureTest):
    def setUp(self):
        super().setUp()
        self.b = os.path.join(self.dir, "b")
        shutil.copytree(self.results, self.b)
        self.md = os.path.join(self.out, "compare.md")

    def compare(self, a, b, *extra):
        run = subprocess.run(
            [sys.executable, os.path.join(ROOT, "reports", "compare.py"), a, b, "--out", self.md, *extra],
            capture_output=True,
            text=True,
        )
        if not os.path.exists(self.md):
            return run, None
        with open(self.md) as f:
            return run, f.read()

    def test_identical_runs_show_no_change(self):
        run, text = self.compare(self.results, self.b)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("**0 slower, 0 faster,", text)
        self.assertIn("Only in A: 0; only in B: 0.", text)
        self.assertTrue(os.path.exists(os.path.join(self.out, "compare_ratios.png")))

    def test_without_out_it_writes_into_b_never_the_working_directory(self):
        run = subprocess.run(
            [sys.executable, os.path.join(ROOT, "reports", "compare.py"), self.results, self.b],
            capture_output=True,
            text=True,
            cwd=self.dir,
        )
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.b, "compare.md")))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "compare.md")))

    def test_a_ten_percent_slowdown_is_found_and_fails_the_gate(self):
        def slow(doc):  # every repetition and aggregate of one benchmark 10 % slower
            for x in doc["benchmarks"]:
                if x["run_name"].startswith(SLOWED) and x.get("aggregate_name") != "cv":
                    x["real_time"] *= 1.1

        shutil.rmtree(self.results)
        shutil.copytree(self.b, self.results)
        self.edit_results(slow)
        run, text = self.compare(self.b, self.results)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("**1 slower, 0 faster,", text)
        slower = text.split("## Slower in B")[1].split("##")[0]
        self.assertIn(f"| `{SLOWED[:-1]}` | 1.100 | 0.008 |", slower)
        # Its dispatch penalties move with it: every entry's time over the template's at that k.
        self.assertRegex(text, r"\| quadratic \| 16 \| `03_switch` \| [0-9.]+ \| [0-9.]+ \| -0\.[0-9]+ \|")
        # A threshold above the change leaves the gate open.
        run, _ = self.compare(self.b, self.results, "--threshold", "0.2")
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_benchmarks_on_one_side_are_listed(self):
        def drop(doc):
            doc["benchmarks"] = [x for x in doc["benchmarks"] if not x["run_name"].startswith("tasks/")]

        self.edit_results(drop)
        run, text = self.compare(self.results, self.b)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("## Only in B", text)
        self.assertIn("- `tasks/03_switch/per_element/layout:uniform/distinct:1/n:16777216`", text)

    def test_a_malformed_directory_is_refused_and_nothing_written(self):
        with open(os.path.join(self.b, "bench.json"), "w") as f:
            f.write("{ not json")
        run, text = self.compare(self.results, self.b)
        self.assertEqual(run.returncode, 2)
        self.assertIn("compare: ", run.stderr)
        self.assertIn("not a readable JSON file", run.stderr)
        self.assertIsNone(text)
        run, _ = self.compare(self.results, os.path.join(self.dir, "nowhere"))
        self.assertEqual(run.returncode, 2)
        self.assertIn("no such file", run.stderr)


if __name__ == "__main__":
    unittest.main()
