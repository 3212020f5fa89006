"""Every file the report's programs write (report.py's pages and figures, compare.py --out,
merge.py's merged results, resources.py's and profile.py's JSON through document.write_json): on a
full disk a message naming the file, exit status 2 and no traceback, and what was there before left
whole; no temporary left behind."""
import os
import resource
import signal
import subprocess
import sys
import tempfile
import unittest

from helpers import FIXTURE, ROOT, FixtureTest

from cdl_report import document

REFERENCE = os.path.join(ROOT, "reports", "reference")


def full_disk():
    """In the child: files may grow to 2000 bytes, and a write past that fails (EFBIG) rather than
    ending the process, as a write to a full disk fails (ENOSPC)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))


class FullDiskTest(FixtureTest):
    def program(self, name, *args):
        return subprocess.run(
            [sys.executable, os.path.join(ROOT, "reports", name), *args],
            capture_output=True,
            text=True,
            preexec_fn=full_disk,
            timeout=600,
        )

    def assert_refused(self, run, program, path):
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn(f"{program}: cannot write {path}", run.stderr)
        self.assertNotIn("Traceback", run.stderr)

    def test_the_report_replaces_none_of_its_files(self):
        os.makedirs(self.out)
        with open(os.path.join(self.out, "report.md"), "w") as f:
            f.write("before")
        run = self.program("report.py", self.results, "--out", self.out, "--text-only")
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn("report: cannot write " + self.out, run.stderr)
        self.assertNotIn("Traceback", run.stderr)
        self.assertEqual(os.listdir(self.out), ["report.md"])
        with open(os.path.join(self.out, "report.md")) as f:
            self.assertEqual(f.read(), "before")

    def test_compare_writes_its_page_whole_or_not_at_all(self):
        out = os.path.join(self.dir, "compare.md")
        h200, h100 = (os.path.join(REFERENCE, d) for d in ("NVIDIA_H200", "NVIDIA_H100_80GB_HBM3"))
        run = self.program("compare.py", h200, h100, "--out", out)
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn("compare: cannot write", run.stderr)
        self.assertNotIn("Traceback", run.stderr)
        self.assertEqual(sorted(os.listdir(self.dir)), ["results"])  # no page, figure or temporary

    def test_merge_keeps_the_earlier_results(self):
        out = os.path.join(self.dir, "merged.json")
        with open(out, "w") as f:
            f.write("before")
        run = self.program("merge.py", out, os.path.join(FIXTURE, "bench.json"))
        self.assert_refused(run, "merge", out)
        with open(out) as f:
            self.assertEqual(f.read(), "before")
        self.assertEqual(sorted(os.listdir(self.dir)), ["merged.json", "results"])

    def test_write_json_names_the_file_and_leaves_no_temporary(self):
        with tempfile.TemporaryDirectory() as d:
            blocked = os.path.join(d, "a file")
            with open(blocked, "w") as f:
                f.write("not a folder")
            with self.assertRaisesRegex(document.WriteError, "cannot write .*a file/r.json"):
                document.write_json(os.path.join(blocked, "r.json"), {"k": 1})
            self.assertEqual(os.listdir(d), ["a file"])


if __name__ == "__main__":
    unittest.main()
