"""reports/merge.py: a suite run in parts, merged into one results file."""
import json
import os
import subprocess
import sys
import unittest

from helpers import ROOT, FixtureTest


class MergeTest(FixtureTest):
    def split(self):
        """The fixture's bench.json as two parts: the map in one, the rest in the other, a copy
        benchmark in both."""
        with open(os.path.join(self.results, "bench.json")) as f:
            doc = json.load(f)
        a = dict(
            doc, benchmarks=[b for b in doc["benchmarks"] if b["run_name"].startswith(("map/", "copy/"))]
        )
        b = dict(doc, benchmarks=[b for b in doc["benchmarks"] if not b["run_name"].startswith("map/")])
        b["context"] = dict(doc["context"], copy_bandwidth_gbs="3000.0")
        for x in b["benchmarks"]:
            if x["run_name"].startswith("copy/") and x.get("aggregate_name") == "median":
                x["real_time"] = 12345.0
        paths = [os.path.join(self.dir, n) for n in ("a.json", "b.json")]
        for path, part in zip(paths, (a, b)):
            with open(path, "w") as f:
                json.dump(part, f)
        return doc, paths

    def merge(self, out, *parts):
        return subprocess.run(
            [sys.executable, os.path.join(ROOT, "reports", "merge.py"), out, *parts],
            capture_output=True,
            text=True,
        )

    def test_parts_merge_into_the_whole_the_later_part_winning(self):
        doc, parts = self.split()
        out = os.path.join(self.dir, "merged.json")
        run = self.merge(out, *parts)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(out) as f:
            merged = json.load(f)
        self.assertEqual(
            {b["run_name"] for b in merged["benchmarks"]}, {b["run_name"] for b in doc["benchmarks"]}
        )
        copies = [
            x
            for x in merged["benchmarks"]
            if x["run_name"].startswith("copy/") and x.get("aggregate_name") == "median"
        ]
        self.assertTrue(copies and all(x["real_time"] == 12345.0 for x in copies))
        self.assertEqual(merged["context"]["copy_bandwidth_gbs"], doc["context"]["copy_bandwidth_gbs"])
        listed = json.loads(merged["context"]["cdl_parts"])
        self.assertEqual([p["file"] for p in listed], ["a.json", "b.json"])
        self.assertEqual(listed[1]["copy_bandwidth_gbs"], 3000.0)

    def test_what_an_interrupted_part_did_not_reach_is_not_run_not_a_failure(self):
        _, parts = self.split()
        with open(parts[1]) as f:
            b = json.load(f)
        cut = sorted({x["run_name"] for x in b["benchmarks"] if x["run_name"].startswith("tasks/")})
        for x in b["benchmarks"]:  # as cdl_bench writes the benchmarks it did not reach
            if x["run_name"] in cut:
                x.update(error_occurred=True, error_message="interrupted")
        with open(parts[1], "w") as f:
            json.dump(b, f)
        out = os.path.join(self.dir, "merged.json")
        self.assertEqual(self.merge(out, *parts).returncode, 0)
        with open(out) as f:
            merged = json.load(f)
        self.assertFalse(any(x["run_name"] in cut for x in merged["benchmarks"]))
        self.assertEqual(json.loads(merged["context"]["cdl_not_run"]), cut)
        os.replace(out, os.path.join(self.results, "bench.json"))
        text = self.report()
        self.assertIn(
            f"| not run | {len(cut)} benchmarks, which the part that holds them did not reach", text
        )
        self.assertIn("## Not run", text)
        self.assertNotIn("ERRORS", text)

    def test_a_part_of_another_revision_is_refused(self):
        _, parts = self.split()
        with open(parts[1]) as f:
            b = json.load(f)
        b["context"]["git_revision"] = "0123456789ab"
        with open(parts[1], "w") as f:
            json.dump(b, f)
        out = os.path.join(self.dir, "merged.json")
        run = self.merge(out, *parts)
        self.assertEqual(run.returncode, 2)
        self.assertIn("git_revision '0123456789ab' is not the first part's", run.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
