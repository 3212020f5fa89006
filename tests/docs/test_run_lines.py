"""Every strategy header's "Run it." line works as written, so it cannot go stale; and the other
commands the documentation gives: the one-file example's nvcc line, cdl_run --compile-times (each
lesson's nvcc line: test_lessons.py).

    test_run_lines.py [--gpu] CDL_RUN [NN_<name>.cu ...] [unittest arguments, e.g. a test class's name]

Each strategies/suite/NN_*.cu (the suite's form of a strategy) opens with a header that ends in a line
    // Run it.  `cdl_run ...`      (or `cdl_bench --benchmark_filter=...` for a workload not the map's)
Without --gpu (CI, no GPU): each line parses, names a registered strategy and an op the program
knows (a filter names its strategy), and gets as far as the GPU check (cdl_run looks names up and
reads its options before it looks for a device), and examples/dispatch_in_one_file.cu builds with
the nvcc line its header gives (sm_90 for -arch=native where no GPU answers). With --gpu: each line
runs to the end and validates (exit status 0); without a GPU the script says so and exits 77, which
ctest reports as skipped.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_lessons import build_alone, command_line  # noqa: E402
from visible_gpu import NO_GPU  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CDL_RUN = None
NAMED = []  # the strategy files the command line names (strategies/suite/NN_*.cu); none: all
# An op of more calls than 17's largest call image has slots (stencil::max_calls, twelve): 17 refuses it.
THIRTEEN_CALLS = "sin(" * 7 + "cos(" * 6 + "x" + ")" * 13
RUN_IT = re.compile(r"^// Run it\.\s+`((?:cdl_run|cdl_bench) [^`]+)`", re.M)


def run_lines():
    """{strategy file: its Run it. line as an argv (cdl_run or cdl_bench, then the arguments)}: the
    files named on the command line, where some are."""
    lines = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "strategies", "suite", "[0-9][0-9]_*.cu"))):
        if NAMED and os.path.basename(path) not in NAMED:
            continue
        with open(path) as f:
            found = RUN_IT.findall(f.read())
        lines[os.path.basename(path)] = shlex.split(found[0]) if len(found) == 1 else found
    return lines


def program(argv):
    """A Run it. line's program, where the build puts it: beside cdl_run."""
    return [os.path.join(os.path.dirname(CDL_RUN), argv[0]), *argv[1:]]


class RunLines(unittest.TestCase):
    def test_every_strategy_has_one_run_line(self):
        lines = run_lines()
        self.assertGreaterEqual(len(lines), len(NAMED) or 10)
        for name, argv in lines.items():
            self.assertTrue(
                len(argv) > 1 and argv[0] in ("cdl_run", "cdl_bench") and argv[1].startswith("--"),
                f"{name}: no single `// Run it.  \\`cdl_run ...\\`` line in its header ({argv})",
            )

    def test_each_lesson_writes_its_kernel_and_its_launch(self):
        # A learner's check: each lesson (strategies/NN_<name>.cu), the mechanism alone, holds a
        # kernel (or hands its op to lesson.cuh's map_kernel; a JIT lesson's is source text around
        # the op, or its own IR) and its launch.
        kernel = re.compile(r"__global__|^define void @|lesson::map_source\(|lesson::map_kernel", re.M)
        launch = re.compile(r"<<<|cudaLaunchKernel|cudaGraphLaunch|lesson::launch_map\(")
        for path in sorted(glob.glob(os.path.join(ROOT, "strategies", "[0-9][0-9]_*.cu"))):
            with open(path) as f:
                lesson = f.read()
            self.assertRegex(lesson, kernel, f"{path}: no kernel")
            self.assertRegex(lesson, launch, f"{path}: no launch")

    def test_each_line_names_what_cdl_run_knows_and_reaches_the_gpu_check(self):
        listed = subprocess.run([CDL_RUN, "--list"], capture_output=True, text=True, timeout=60)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        strategies = set(listed.stdout.split())
        for name, argv in run_lines().items():
            if argv[0] == "cdl_bench":  # its filter names the file's strategy
                self.assertRegex(argv[1], rf"^--benchmark_filter=\S*/{re.escape(name[: -len('.cu')])}/", name)
            else:
                self.assertIn(argv[argv.index("--strategy") + 1], strategies, name)
            got = subprocess.run(program(argv), capture_output=True, text=True, env=NO_GPU, timeout=120)
            # Each program's status for no GPU (tests/faults/test_faults.py holds them to it).
            status = 1 if argv[0] == "cdl_bench" else 2
            self.assertEqual(got.returncode, status, f"{name}: {got.stdout}{got.stderr}")
            self.assertIn("no usable CUDA device", got.stderr, f"{name}: it stopped before the GPU check")


class OneFileExample(unittest.TestCase):
    def test_it_builds_alone_with_the_command_its_header_gives(self):
        with open(os.path.join(ROOT, "examples", "dispatch_in_one_file.cu")) as f:
            line = next(l for l in f if l.startswith("//   nvcc "))
        args = shlex.split(line[2:].split("&&")[0])
        self.assertIn("examples/dispatch_in_one_file.cu", args)
        out = tempfile.mkdtemp(prefix="cdl_example.")
        try:
            build_alone(self, args, out)
        finally:
            shutil.rmtree(out)


class CompileTimes(unittest.TestCase):
    def compile_times(self, expression):
        got = subprocess.run(
            [CDL_RUN, "--expr", expression, "--compile-times"],
            capture_output=True,
            text=True,
            env=NO_GPU,
            timeout=600,
        )
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        return got

    def test_where_a_new_ops_compile_time_goes_is_printed_without_a_gpu(self):
        got = self.compile_times("s = sin(x); s * s + 2 * x")
        self.assertRegex(
            got.stdout, r"06 NVRTC, vec kernel +[0-9.]+ +CUDA C\+\+ Frontend [0-9]+, NVVM Optimizer [0-9]+"
        )
        self.assertRegex(got.stdout, r"NVRTC, a one-line kernel +[0-9.]+ ")
        # NVRTC's time trace, read: the front end's headers and template instantiations.
        self.assertRegex(
            got.stdout, r"front end: headers [0-9]+ ms in [0-9]+ \(.*; template instantiations [0-9]+ ms"
        )
        self.assertRegex(
            got.stdout,
            r"08 libNVVM, vec kernel +[0-9.]+ +parse and lower [0-9.]+, libNVVM [0-9]+"
            r"(, load \(the driver's ptxas\) [0-9]+|; the load \(the driver's ptxas\) needs a GPU)",
        )
        got = self.compile_times("T y = x; return y;")
        self.assertIn("08: not in its language", got.stdout)


class Explain(unittest.TestCase):
    def explain(self, expression, *extra):
        return subprocess.run(
            [CDL_RUN, "--expr", expression, "--explain", *extra],
            capture_output=True,
            text=True,
            env=NO_GPU,
            timeout=120,
        )

    def test_an_op_17_takes_is_shown_form_by_form_and_exits_0(self):
        got = self.explain("x * x + 2 * x + 1")
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        self.assertRegex(got.stdout, r"its steps \(3, [^)]*\): mulr fmac add")
        self.assertRegex(got.stdout, r"scalar form: image cdl_image_4 \(decoded and run on the host")
        self.assertRegex(got.stdout, r"vec form: image cdl_image_vec_\d+ \(decoded and run on the host")
        got = self.explain("x * x")  # a product: the sum computes it, the region holds nothing
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        self.assertRegex(
            got.stdout, r"its steps \(1, [^)]*\): mulr \(the last, a product, computed by the sum"
        )
        self.assertRegex(got.stdout, r"vec form: image cdl_image_vec_0 \(decoded and run on the host")
        got = self.explain("exp(sin(x) * cos(x))")
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        self.assertRegex(
            got.stdout, r"scalar form: 17_copy_and_patch runs an op that calls a function in its vec"
        )
        self.assertRegex(
            got.stdout, r"vec form: image cdl_call_vec_3_\d+_\d+, a slot a call \(sin, cos, exp\)"
        )
        got = self.explain("x / (x + 1)")  # nvcc's division, in a slot
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        self.assertRegex(got.stdout, r"vec form: image cdl_call_vec_1_\d+_\d+, a slot a call \(div\)")
        got = self.explain("sin(x) + cos(x) + exp(x) + sqrt(x) + sin(2 * x)")  # five calls, six slots
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        self.assertRegex(
            got.stdout,
            r"vec form: image cdl_call_vec_6_\d+_\d+, a slot a call \(pass, sin, cos, exp, sqrt, sin; "
            r"pass: a slot the op does not call\)",
        )

    def test_an_op_17_refuses_says_why_and_the_routes_and_exits_1(self):
        for expression, extra, why in (
            (
                THIRTEEN_CALLS,
                (),
                "more calls than a call image has slots",
            ),
            ("x * x", ("--type", "f64"), "runs float alone"),
        ):
            got = self.explain(expression, *extra)
            self.assertEqual(got.returncode, 1, got.stdout + got.stderr)
            self.assertIn(why, got.stdout)
            self.assertIn("08_expression_jit or 16_interpreter", got.stdout)
        got = self.explain("T y = x; return y;")  # C++, not the language 17 reads
        self.assertEqual(got.returncode, 1, got.stdout + got.stderr)
        self.assertIn("not in 08's language", got.stdout)


class CdlRunOnTheGpu(unittest.TestCase):
    def cdl_run(self, *args, env=None):
        """cdl_run with these arguments, which must exit with status 0."""
        got = subprocess.run([CDL_RUN, *args], capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        return got

    def test_08s_compile_time_breakdown_agrees_with_its_first_launch(self):
        """--compile-times' total for 08's vec kernel (lower, libNVVM, load) against the first launch of
        the same route in another process, which also runs the kernel: a breakdown that counts what
        a user's launch does not pay (a CUDA context) lands far above it."""
        expression = "s = sin(x); s * s + 2 * x"
        # Up to three rounds of the two processes one after the other: the GPU tests run a process per
        # core, and a burst of the others' work can land on either, so one round within the bound is
        # enough; a breakdown that counts a context misses it in every round.
        rounds = []
        for _ in range(3):
            times = self.cdl_run("--expr", expression, "--compile-times")
            total = re.search(r"(?m)^08 libNVVM, vec kernel +([0-9.]+) ", times.stdout)
            self.assertIsNotNone(total, times.stdout)
            # The driver's cache off, as --compile-times has it: this text is the same in every run,
            # so with the cache on its PTX is assembled once on a machine and read back after.
            launch = self.cdl_run(
                "--expr",
                expression,
                "--strategy",
                "08_expression_jit/vec",
                "--n",
                "2^20",
                env=dict(os.environ, CUDA_CACHE_DISABLE="1"),
            )
            first = re.search(
                r"(?m)^08_expression_jit/vec \[--expr\] .* first launch ([0-9.]+) ms", launch.stdout
            )
            self.assertIsNotNone(first, launch.stdout)
            rounds.append((float(total.group(1)), float(first.group(1))))
            if rounds[-1][0] < 2 * rounds[-1][1] + 20:
                break
        else:
            self.fail(
                f"(breakdown ms, first launch ms) in each round: {rounds}\n" + times.stdout + launch.stdout
            )
        # Another strategy named: the tiers, which would have compiled 08's vec kernel first, did not run.
        self.assertNotIn("10_tiered_dispatch", launch.stdout)

    def test_a_users_op_runs_on_the_three_tiers_in_turn(self):
        """cdl_run --expr through strategy 10: a tier with no compiler serves the first launch, 08's
        optimised tier is reached, and a launch on each tier is validated (exit status 0)."""
        got = self.cdl_run(
            "--expr", "x * x + 0.25 * x", "--strategy", "10_tiered_dispatch/vec", "--n", "2^20"
        )
        line = re.search(r"(?m)^10_tiered_dispatch/vec \[--expr\]: first result ([0-9.]+) ms.*$", got.stdout)
        self.assertIsNotNone(line, got.stdout)
        # the first tier runs at once: the interpreter, or 17's kernel where the interpreter's are not
        # loaded yet (the tiers run first in cdl_run's process)
        self.assertRegex(line.group(0), r"(16's interpreter|17's patched kernel) from launch 1 ")
        self.assertRegex(line.group(0), r"08's optimised tier from launch [0-9]+ ")

    def test_launches_totals_every_route_and_the_tiers_measured_whole(self):
        """cdl_run --expr --launches N: a total for each route that ran the op, 10's tiers among
        them, measured in a new process (the footnote names the tier of launch 1), and the cheapest
        named from the table."""
        got = self.cdl_run("--expr", "x * x - 0.75 * x", "--n", "2^20", "--launches", "200", "--reps", "5")
        table = got.stdout[got.stdout.index("\n200 launches of ") :]
        routes = dict(re.findall(r"(?m)^  (\S+(?: \*)?(?: †)?) +([0-9.]+) ms  \(", table))
        self.assertIn("10_tiered_dispatch.expression/vec * †", routes, table)
        for route in ("16_interpreter/vec *", "08_expression_jit/vec *", "17_copy_and_patch/vec *"):
            self.assertIn(route, routes, table)
        self.assertRegex(table, r"(?m)^† 10's tiers, in a new process: launches 1-[0-9]+ measured whole")
        self.assertRegex(table, r"(16's interpreter|17's patched kernel) from launch 1[,)]")
        self.assertRegex(
            table,
            r"(?m)^  its parts, on the host clock from the text: the compile thread began at [0-9.]+ ms",
        )
        cheapest = re.search(r"(?m)^cheapest: (\S+(?: \*)?(?: †)?)", table).group(1)
        self.assertEqual(float(routes[cheapest]), min(float(v) for v in routes.values()), table)

    def test_a_users_op_is_patched_or_refused_with_its_reason(self):
        """cdl_run --expr through 17: an op of its operations and calls is patched, validated and
        timed (a division by a constant and one by a value among them); one it has no image for (nine
        calls) is named with the reason and the routes to use, and the run goes on."""
        for expression, patched in (
            ("x * x + 2 * x + 1", True),
            ("sqrt(x) + 1", True),
            ("x / 3 + 1", True),
            ("x / (x + 1)", True),
            ("sin(cos(exp(sqrt(x))))", True),
            (THIRTEEN_CALLS, False),
        ):
            got = self.cdl_run(
                "--expr", expression, "--strategy", "01_template_functor/scalar", "--n", "2^20"
            )
            said = got.stdout + got.stderr
            if patched:
                self.assertRegex(said, r"(?m)^17_copy_and_patch/vec \[--expr\] +[0-9.]+ ms  \(p10 ")
            else:
                self.assertRegex(
                    said, r"(?m)^17_copy_and_patch/vec \[--expr\]: not run: .*more calls.*16_interpreter"
                )


class RunLinesOnTheGpu(unittest.TestCase):
    def test_each_line_runs_and_validates(self):
        """Each line exits 0 and times its strategy: cdl_run times a row only after it validated
        (bench/run.cpp), and prints "(not timed)" beside a wrong result; cdl_bench exits 3 where a
        benchmark failed its validation."""
        for name, argv in run_lines().items():
            got = subprocess.run(program(argv), capture_output=True, text=True, timeout=600)
            said = f"{name}: {' '.join(argv)}\n{got.stdout}{got.stderr}"
            self.assertEqual(got.returncode, 0, said)
            if argv[0] == "cdl_bench":
                self.assertIn(f"/{name[: -len('.cu')]}/", got.stdout, said)
                continue
            self.assertNotIn("WRONG RESULT", got.stdout, said)
            self.assertNotIn("(not timed)", got.stdout, said)
            strategy = argv[argv.index("--strategy") + 1].split("/")[0].split(".")[0]
            self.assertRegex(got.stdout, rf"(?m)^{re.escape(strategy)}\S* .* [0-9.]+ ms  \(p10 ", said)


if __name__ == "__main__":
    gpu, CDL_RUN, NAMED, argv = command_line(__doc__, "strategies/suite", "run lines")
    # Test classes named after CDL_RUN run alone.
    named = [a for a in argv[1:] if not a.startswith("-")]
    gpu_suites = ["CdlRunOnTheGpu", "RunLinesOnTheGpu"]
    suites = [] if named else gpu_suites if gpu else ["RunLines", "OneFileExample", "CompileTimes", "Explain"]
    unittest.main(argv=[argv[0], *suites] + argv[1:])
