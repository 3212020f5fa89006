"""Fault tests: what a user gets from the programs when something is wrong. Each fault must give
a clear message and a non-zero exit status, and lose nothing: no results file is written for a
run that did not happen, an earlier results file is never overwritten by a broken one, and an
interrupted benchmark run keeps what it finished as a whole JSON document.

    test_faults.py [--gpu] CDL_RUN CDL_BENCH CDL_PROBLEM CDL_GPU_TESTS [unittest arguments]

Without --gpu: the faults that need no GPU (unknown names and options, a file that cannot be written
(a full disk, a folder that cannot be made), no visible GPU, a problem
too big for host memory); they run in CI. With --gpu: the faults met on a GPU (a size that cannot
fit in device memory, a filter that selects nothing, an interrupted run); without a GPU the
script says so and exits 77, which ctest reports as skipped. A malformed or foreign results file
given to the report generator is tested with the report (tests/report/test_results.py).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from visible_gpu import NO_GPU, gpu_visible  # noqa: E402

CDL_RUN = CDL_BENCH = CDL_PROBLEM = CDL_GPU_TESTS = None


def run(*args, env=None, timeout=300):
    return subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=timeout)


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cdl_faults.")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assert_files(self, *names):
        """The scratch directory holds exactly these files: nothing partial, nothing temporary."""
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(names))


class BadInput(Scratch):
    """Unknown names and options are refused before any work, with the valid choices named."""

    def test_an_unknown_strategy_is_refused_with_the_registered_ones_listed(self):
        for named in ("99_nope/vec", "01_template_functor/vec,99_nope/vec"):
            r = run(CDL_RUN, "--strategy", named, "--json", self.path("r.json"))
            self.assertEqual(r.returncode, 2, named)
            self.assertIn("unknown strategy '99_nope/vec'", r.stderr)
            self.assertIn("01_template_functor/vec", r.stderr)
            self.assert_files()

    def test_an_unknown_op_type_or_size_is_refused(self):
        for args, message in (
            (["--op", "nope"], "unknown map op 'nope' (valid: quadratic"),
            (["--type", "f16"], "unknown element type 'f16' (valid: f32, f64)"),
            (["--n", "lots"], "bad size 'lots'"),
            (["--k", "0"], "--k must be at least 1"),
            (["--n", "0"], "--n 0: no element to compute, nothing to time"),
            (["--expr", "x * 1e39"], "the op's number 1e+39: past float's largest"),
            (["--expr", "x + 1e-50"], "the op's number 1e-50: below float's least"),
            (["--frobnicate"], "unknown option '--frobnicate'"),
            (["--expr", ""], "the op is empty"),
            (["--expr", "  \n"], "the op is empty"),
            (["--launches", "10"], "--launches needs --expr"),
            (["--expr", "x", "--launches", "0"], "--launches must be at least 1"),
            (["--tiers-stream"], "--tiers-stream needs --expr and --launches"),
        ):
            r = run(CDL_RUN, *args, "--json", self.path("r.json"))
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(message, r.stderr, args)
        self.assert_files()

    def test_an_unknown_benchmark_flag_is_refused(self):
        r = run(CDL_BENCH, "--benchmark_nope", "--benchmark_out=" + self.path("bench.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("unrecognized command-line flag: --benchmark_nope", r.stderr)
        self.assert_files()

    def test_an_unknown_workload_is_refused(self):
        r = run(CDL_PROBLEM, self.path("p"), "blur", "n=4")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown workload 'blur' (valid: map, zip, tasks, image)", r.stderr)
        self.assertFalse(os.path.exists(self.path("p/problem.json")))

    def test_a_problem_with_no_element_is_refused(self):
        r = run(CDL_PROBLEM, self.path("p"), "map", "op=square", "type=f32", "n=0", "k=1")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("n=0", r.stderr)
        self.assertFalse(os.path.exists(self.path("p/problem.json")))

    def test_a_problem_too_big_for_host_memory_is_refused_and_writes_nothing(self):
        for n in ("2^50", "2^62"):  # more than the machine has; more than a std::vector may hold
            r = run(CDL_PROBLEM, self.path("p"), "map", "op=square", "type=f64", "n=" + n, "k=1")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("out of host memory", r.stderr)
            self.assertFalse(os.path.exists(self.path("p/problem.json")))


def full_disk():
    """In the child: files may grow to 100 bytes (RLIMIT_FSIZE), and a write past that fails with
    EFBIG instead of ending the process, as a write to a full disk fails with ENOSPC."""
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))


class FilesTheProgramsWrite(Scratch):
    """Every file the programs write: on a full disk, or where its folder cannot be made, a message
    naming the file, exit status 2, and what was there before left whole."""

    def assert_refused(self, r, path):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(f"cannot write {path}", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_a_full_disk_leaves_each_file_as_it_was(self):
        for name, args in (
            ("s.json", [CDL_RUN, "--expr", "x * x", "--steps"]),
            ("k.ptx", [CDL_RUN, "--expr", "x * x", "--ptx"]),
        ):
            with open(self.path(name), "w") as f:
                f.write("before")
            r = subprocess.run(
                [*args, self.path(name)], capture_output=True, text=True, preexec_fn=full_disk, timeout=300
            )
            self.assert_refused(r, self.path(name))
            with open(self.path(name)) as f:
                self.assertEqual(f.read(), "before")
        r = subprocess.run(
            [CDL_PROBLEM, self.path("p"), "map", "op=square", "type=f32", "n=4096", "k=1"],
            capture_output=True,
            text=True,
            preexec_fn=full_disk,
            timeout=300,
        )
        self.assert_refused(r, self.path("p/x.npy"))
        self.assertEqual(os.listdir(self.path("p")), [])
        self.assert_files("s.json", "k.ptx", "p")

    def test_a_folder_that_cannot_be_made_is_named(self):
        with open(self.path("file"), "w") as f:
            f.write("a file, not a folder")
        r = run(CDL_RUN, "--expr", "x * x", "--steps", self.path("file/s.json"))
        self.assert_refused(r, self.path("file/s.json"))
        self.assertIn("cannot make its folder", r.stderr)

    def test_a_standard_output_that_cannot_be_written_is_an_error(self):
        with open("/dev/full", "w") as full:
            r = subprocess.run(
                [CDL_RUN, "--list"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=300
            )
        self.assertEqual(r.returncode, 2)
        self.assertIn("cdl_run: cannot write the standard output", r.stderr)


class NoVisibleGpu(Scratch):
    """CUDA_VISIBLE_DEVICES= (empty) hides every GPU: the programs say so, the tests skip."""

    def test_the_benchmark_says_why_exits_non_zero_and_writes_nothing(self):
        r = run(CDL_BENCH, "--cdl_quick", "--benchmark_out=" + self.path("bench.json"), env=NO_GPU)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cdl_bench: cannot benchmark: no usable CUDA device", r.stderr)
        self.assert_files()

    def test_the_demo_says_why_exits_non_zero_and_writes_nothing(self):
        r = run(CDL_RUN, "--strategy", "all", "--json", self.path("r.json"), env=NO_GPU)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cdl_run: no usable CUDA device", r.stderr)
        self.assert_files()

    def test_every_gpu_test_is_skipped_with_the_reason(self):
        r = run(CDL_GPU_TESTS, env=NO_GPU, timeout=600)
        self.assertEqual(r.returncode, 77, r.stdout[-2000:])  # every test skipped, none failed: "skipped"
        ran = int(r.stdout.split(" tests from ")[-2].rsplit("[==========] ", 1)[-1])
        skipped = [
            line for line in r.stdout.splitlines() if line.startswith("[  SKIPPED ] ") and " tests" in line
        ]
        self.assertGreater(ran, 500)
        self.assertEqual(skipped, [f"[  SKIPPED ] {ran} tests, listed below:"])
        self.assertIn("no usable CUDA device", r.stdout)
        self.assertNotIn("[  FAILED  ]", r.stdout)


class OnTheGpu(Scratch):
    """The faults a user meets on a GPU machine."""

    def test_results_on_a_full_disk_are_refused_and_the_earlier_ones_kept(self):
        results = self.path("r.json")
        for command in (
            [CDL_RUN, "--strategy", "00_inline/vec", "--n", "2^16", "--reps", "3", "--json", results],
            [
                CDL_BENCH,
                "--benchmark_filter=^map/00_inline/vec/op:quadratic/type:f32/n:65536/k:1/",
                "--benchmark_out=" + results,
            ],
        ):
            with open(results, "w") as f:
                f.write("before")
            r = subprocess.run(command, capture_output=True, text=True, preexec_fn=full_disk, timeout=600)
            self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("cannot write", r.stderr)
            with open(results) as f:
                self.assertEqual(f.read(), "before", command)
            self.assert_files("r.json")

    def test_a_size_that_cannot_fit_says_how_much_is_free_and_writes_nothing(self):
        r = run(CDL_RUN, "--strategy", "00_inline/vec", "--n", "2^40", "--json", self.path("r.json"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertRegex(
            r.stderr, r"cannot allocate 4096\.00 GiB on the device: [0-9.]+ GiB free of [0-9.]+ GiB"
        )
        self.assert_files()

    def test_an_op_that_is_infinite_everywhere_validates_where_the_reference_is_the_same_infinity(self):
        r = run(CDL_RUN, "--expr", "x / 0.0f", "--strategy", "00_inline/vec", "--n", "2^20")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("WRONG RESULT", r.stdout)
        # Timed, so validated (cdl_run times a row only after it passed): the user's op through
        # the run-time strategies, and the strategy asked for.
        for row in ("06_nvrtc_jit/vec [--expr]", "00_inline/vec"):
            self.assertRegex(r.stdout, rf"(?m)^{re.escape(row)}.* [0-9.]+ ms  \(p10 ", r.stdout)

    def test_a_filter_that_selects_nothing_is_refused(self):
        r = run(CDL_BENCH, "--benchmark_filter=^blur/", "--benchmark_out=" + self.path("bench.json"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--benchmark_filter=^blur/ selects none of the", r.stderr)
        self.assert_files()

    def test_a_whole_run_replaces_the_results_file(self):
        earlier = self.path("bench.json")
        with open(earlier, "w") as f:
            f.write('{"earlier": true}\n')
        r = run(
            CDL_BENCH,
            "--cdl_quick",
            "--benchmark_filter=^copy/cudaMemcpy/bytes:65536/",
            "--benchmark_out=" + earlier,
            "--benchmark_out_format=json",
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(earlier) as f:
            results = json.load(f)
        medians = [b for b in results["benchmarks"] if b.get("aggregate_name") == "median"]
        self.assertEqual(
            [b["run_name"].split("/iterations")[0] for b in medians], ["copy/cudaMemcpy/bytes:65536"]
        )
        self.assert_files("bench.json")

    def test_an_interrupted_run_keeps_what_finished_and_leaves_the_earlier_results(self):
        earlier = self.path("bench.json")
        with open(earlier, "w") as f:
            f.write('{"earlier": true}\n')
        bench = subprocess.Popen(
            [
                CDL_BENCH,
                "--cdl_quick",
                "--benchmark_filter=^(copy|map)/",
                "--benchmark_out=" + earlier,
                "--benchmark_out_format=json",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        progress = []
        deadline = time.monotonic() + 240
        for line in bench.stderr:  # progress lines: "[done/total, ...] name"
            progress.append(line)
            if line.startswith("[2/") or time.monotonic() > deadline:
                break
        bench.send_signal(signal.SIGINT)
        rest = bench.stderr.read()
        status = bench.wait(timeout=240)
        self.assertTrue(any(p.startswith("[2/") for p in progress), "".join(progress))
        self.assertEqual(status, 128 + signal.SIGINT, rest)
        self.assertIn("cdl_bench: interrupted (signal 2) after ", rest)
        with open(earlier) as f:
            self.assertEqual(f.read(), '{"earlier": true}\n')
        with open(self.path("bench.interrupted.json")) as f:
            kept = json.load(f)  # a whole document
        finished = {b["run_name"] for b in kept["benchmarks"] if not b.get("error_occurred")}
        skipped = {b["run_name"] for b in kept["benchmarks"] if b.get("error_message") == "interrupted"}
        self.assertGreaterEqual(len(finished), 2)
        self.assertGreater(len(skipped), 10)
        self.assertEqual(set(b["run_name"] for b in kept["benchmarks"]), finished | skipped)
        self.assert_files("bench.json", "bench.interrupted.json")


if __name__ == "__main__":
    gpu = "--gpu" in sys.argv
    if gpu:
        sys.argv.remove("--gpu")
    CDL_RUN, CDL_BENCH, CDL_PROBLEM, CDL_GPU_TESTS = (os.path.abspath(a) for a in sys.argv[1:5])
    del sys.argv[1:5]
    if gpu and not gpu_visible():
        print(
            "no GPU visible (nvidia-smi lists none, or CUDA_VISIBLE_DEVICES is empty): the GPU fault tests"
            " skip"
        )
        sys.exit(77)
    tests = unittest.TestSuite()
    for case in [OnTheGpu] if gpu else [BadInput, FilesTheProgramsWrite, NoVisibleGpu]:
        tests.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    verbosity = 2 if "-v" in sys.argv else 1
    sys.exit(0 if unittest.TextTestRunner(verbosity=verbosity).run(tests).wasSuccessful() else 1)
