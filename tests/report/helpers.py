"""What the report tests share: a copy of the trimmed H100 results (fixture/) to edit, and the
report's command line run on it. The tests need matplotlib and no GPU."""
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
sys.path.insert(0, os.path.join(ROOT, "reports"))  # cdl_report, the claims among it


def run_report(results, out, *extra, figures=False):
    """report.py on results, into out; without its figures unless asked (drawing them is most of a
    report's time, and most tests read only the text)."""
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "reports", "report.py"), results, "--out", out, *extra]
        + ([] if figures else ["--text-only"]),
        capture_output=True,
        text=True,
    )


def report_text(out):
    """The text of report.md in out, then of the details page beside it (the sections moved there),
    as one text; empty where the report wrote nothing."""
    text = ""
    for name in ("report.md", "details.md"):
        if os.path.exists(os.path.join(out, name)):
            with open(os.path.join(out, name)) as f:
                text += f.read() + "\n"
    return text


def label_of(name):
    """The label cdl_bench gives the benchmark `name` (its fields: docs/results_format.md), for a row
    a test makes under a new name: the report reads a row's fields, so they must be the new name's.
    None for a jit/ stage (labelled or not, as the file it is copied from)."""
    parts = [
        p
        for p in name.split("/")
        if not p.startswith(("iterations:", "repeats:", "manual_time", "min_time:"))
    ]
    if parts[0] == "jit":
        return None
    strategy, _, variant = parts[1].partition(".")
    if parts[0] == "copy":
        fields = {"bytes": parts[2].split(":")[1]}
    else:
        fields = dict(p.split(":", 1) if ":" in p else ("shape", p) for p in parts[3:])
        fields["form"] = parts[2]
    fields.update(workload=parts[0], strategy=strategy, **({"variant": variant} if variant else {}))
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def relabelled(entry):
    """entry with the label of its name (label_of), where it is a workload's benchmark."""
    label = label_of(entry["run_name"])
    if label is not None:
        entry["label"] = label
    return entry


def renamed(entry, old, new, **fields):
    """A copy of a benchmark entry of the results, `old` replaced by `new` in its names (and its
    label), with `fields` set."""
    c = json.loads(json.dumps(entry))
    for key in ("name", "run_name"):
        c[key] = c[key].replace(old, new)
    c.update(fields)
    return relabelled(c)


class FixtureTest(unittest.TestCase):
    """A fresh copy of the fixture in self.results per test; the report goes to self.out."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cdl_report_test.")
        self.results = os.path.join(self.dir, "results")
        self.out = os.path.join(self.dir, "out")
        shutil.copytree(FIXTURE, self.results)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def fresh(self):
        """A new copy of the fixture, for a test that edits it more than one way."""
        self.tearDown()
        self.setUp()

    def edit_results(self, edit, name="bench.json"):
        path = os.path.join(self.results, name)
        with open(path) as f:
            doc = json.load(f)
        edit(doc)
        with open(path, "w") as f:
            json.dump(doc, f)

    def add_rows(self, made_from, name="bench.json"):
        """Adds to the results, after their benchmarks, the rows made_from(b) yields for each b."""
        self.edit_results(
            lambda doc: doc["benchmarks"].extend([c for b in list(doc["benchmarks"]) for c in made_from(b)]),
            name,
        )

    def report(self, *extra, status=0, figures=False):
        """Runs the report, checks its exit status and returns the text of report.md, then of the
        details page beside it (the sections moved there), as one text."""
        run = run_report(self.results, self.out, *extra, figures=figures)
        self.assertEqual(run.returncode, status, run.stdout + run.stderr)
        return report_text(self.out)

    def pages(self):
        """Runs the report; {"report.md": its text, "details.md": the details page's}."""
        self.report()
        out = {}
        for name in ("report.md", "details.md"):
            with open(os.path.join(self.out, name)) as f:
                out[name] = f.read()
        return out

    def assert_refused(self, message):
        run = run_report(self.results, self.out)
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn(message, run.stderr)
        self.assertNotIn("Traceback", run.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "report.md")), "a report was written anyway")


def repeated(entry, name, time, reps=5, spread=0.001):
    """The entries of a benchmark `name` timed `reps` times about `time` (in entry's time unit), each
    repetition `spread` apart, and its median: a copy of `entry` each, as cdl_bench writes them, so
    that the report's U test has repetitions to decide on (five against five can, three cannot)."""
    out = []
    for i in range(reps):
        c = json.loads(json.dumps(entry))
        c.update(
            name=name,
            run_name=name,
            run_type="iteration",
            repetition_index=i,
            real_time=time * (1 + spread * (i - reps // 2)),
        )
        c.pop("aggregate_name", None)
        out.append(relabelled(c))
    median = json.loads(json.dumps(entry))
    median.update(name=name + "_median", run_name=name, run_type="aggregate", aggregate_name="median")
    median["real_time"] = time
    return out + [relabelled(median)]
