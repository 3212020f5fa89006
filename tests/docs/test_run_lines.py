"""Every strategy header's "Run it." line works as written, so it cannot go stale; and the other
commands the documentation gives: the one-file example's and each lesson's nvcc line (built alone
without a GPU, run and validated with --gpu), cdl_run --compile-times.

    test_run_lines.py [--gpu] CDL_RUN [unittest arguments, e.g. a test class's name]

Each strategies/suite/NN_*.cu (the suite's form of a strategy) opens with a header that ends in a line
    // Run it.  `cdl_run ...`      (or `cdl_bench --benchmark_filter=...` for a workload not the map's)
Without --gpu (CI, no GPU): each line parses, names a registered strategy and an op the program
knows (a filter names its strategy), and gets as far as the GPU check (cdl_run looks names up and
reads its options before it looks for a device), and examples/dispatch_in_one_file.cu builds with
the nvcc line its header gives (sm_90 for -arch=native where no GPU answers). With --gpu: each line
runs to the end and validates (exit status 0); without a GPU the script says so and exits 77, which
ctest reports as skipped.
"""
import atexit
import concurrent.futures
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
from visible_gpu import NO_GPU, gpu_visible  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CDL_RUN = None
RUN_IT = re.compile(r"^// Run it\.\s+`((?:cdl_run|cdl_bench) [^`]+)`", re.M)


def run_lines():
    """{strategy file: its Run it. line as an argv (cdl_run or cdl_bench, then the arguments)}."""
    lines = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "strategies", "suite", "[0-9][0-9]_*.cu"))):
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
        self.assertGreaterEqual(len(lines), 10)
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


def lessons():
    """{lesson file: [(nvcc command, the run that follows it or None), ...]}: each `// Build.` line of
    a strategies/NN_<name>.cu (a line ending in a backslash goes on in the next comment line; a
    command may end in `&& ./program ARGS`, how to run what the last line built)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "strategies", "[0-9][0-9]_*.cu"))):
        with open(path) as f:
            found = re.findall(r"^// Build\.\s+(nvcc (?:.*\\\n//)*.*)$", f.read(), re.M)
        commands = []
        for line in found:
            build, _, run = re.sub(r"\\\n//", " ", line).partition("&&")
            commands.append((shlex.split(build), shlex.split(run) or None))
        out[os.path.basename(path)] = commands
    return out


def build_alone(test, args, out_dir):
    """Builds with an nvcc command a file gives, from the project's root, its output into out_dir
    under the name the command gives it; returns the output's path."""
    nvcc, root = os.environ.get("CDL_NVCC"), os.environ.get("CDL_SOURCE_DIR", ROOT)
    if not nvcc:
        test.skipTest("CDL_NVCC is not set (ctest sets it to the project's CUDA compiler)")
    if not gpu_visible():  # -arch=native needs a GPU to ask; sm_90 is what the suite measures on
        args = ["-arch=sm_90" if a == "-arch=native" else a for a in args]
    args = [nvcc] + args[1:]
    output = os.path.join(out_dir, os.path.basename(args[args.index("-o") + 1]))
    args[args.index("-o") + 1] = output
    got = subprocess.run(args, capture_output=True, text=True, cwd=root, timeout=600)
    test.assertEqual(got.returncode, 0, f"{' '.join(args)}\n{got.stdout}{got.stderr}")
    return output


def build_lesson(test, name, commands, out_dir):
    """Builds a lesson with its header's commands; returns how to run it (argv, in out_dir)."""
    test.assertTrue(commands, f"{name}: no `// Build.   nvcc ...` line in its header")
    program = None
    for args, run in commands:
        test.assertEqual(args[0], "nvcc", name)
        test.assertIn(f"strategies/{name}", args)
        program = build_alone(test, args, out_dir)
    return [program, *(run[1:] if run else [])]


def build_lessons(test, out_dir):
    """Builds every lesson with its header's commands into out_dir, one nvcc per lesson on each of the
    machine's cores; returns {lesson file: a future of how to run it} (result() raises what failed)."""
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        return {
            name: pool.submit(build_lesson, test, name, commands, out_dir)
            for name, commands in lessons().items()
        }


_lessons = {}  # "built": the build_lessons futures; lesson file -> its run, once per process


def lesson_run(test, name, again=False):
    """The lesson built with its header's commands (all of them at once, the first time) and run,
    once per process (two tests read each run), or `again`."""
    if "built" not in _lessons:
        out = tempfile.mkdtemp(prefix="cdl_lessons.")
        atexit.register(shutil.rmtree, out, True)
        _lessons["built"] = build_lessons(test, out)
    if name not in _lessons or again:
        run = _lessons["built"][name].result()
        _lessons[name] = subprocess.run(
            run, capture_output=True, text=True, cwd=os.path.dirname(run[0]), timeout=600
        )
    return _lessons[name]


def suite_ms_at_256(test, strategy):
    """{strategy: median ms} of cdl_run's scalar rows for the quadratic map at k = 256, 2^24."""
    got = subprocess.run(
        [CDL_RUN, "--strategy", strategy, "--op", "quadratic", "--n", "2^24", "--k", "256"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    test.assertEqual(got.returncode, 0, got.stdout + got.stderr)
    return dict(re.findall(r"(?m)^(\S+)/scalar\S* +([0-9.]+) ms  \(p10", got.stdout))


def least(times, new):
    """times, each kernel's time the least of its own and new's (strings of ms, from the output)."""
    for name, ms in new.items():
        times[name] = min(float(ms), times.get(name, float("inf")))
    return times


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


class Lessons(unittest.TestCase):
    def test_each_lesson_builds_alone_with_the_command_its_header_gives(self):
        out = tempfile.mkdtemp(prefix="cdl_lessons.")
        try:
            built = build_lessons(self, out)
            self.assertGreaterEqual(len(built), 5)
            for name, program in built.items():
                with self.subTest(lesson=name):
                    run = program.result()
                    if name == "17_copy_and_patch.cu":
                        self.copy_and_patch_writes_its_ops_right(run[0])
        finally:
            shutil.rmtree(out)

    def copy_and_patch_writes_its_ops_right(self, program):
        """17's machine code, with no GPU: random ops compiled from the stencils nvcc just built, each
        image decoded and run on the host against the op's steps (`--check`)."""
        got = subprocess.run(
            [program, "--check", "20000"], capture_output=True, text=True, env=NO_GPU, timeout=300
        )
        said = got.stdout + got.stderr
        self.assertEqual(got.returncode, 0, said)
        self.assertRegex(said, r"check: 20000 ops, [1-9][0-9]* compiled .*, 0 with wrong machine code")


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


class RunLinesOnTheGpu(unittest.TestCase):
    def test_08s_compile_time_breakdown_agrees_with_its_first_launch(self):
        """--compile-times' total for 08's vec kernel (lower, libNVVM, load) against the first launch of
        the same route in another process, which also runs the kernel: a breakdown that counts what
        a user's launch does not pay (a CUDA context) lands far above it."""
        expression = "s = sin(x); s * s + 2 * x"
        times = subprocess.run(
            [CDL_RUN, "--expr", expression, "--compile-times"], capture_output=True, text=True, timeout=600
        )
        self.assertEqual(times.returncode, 0, times.stdout + times.stderr)
        total = re.search(r"(?m)^08 libNVVM, vec kernel +([0-9.]+) ", times.stdout)
        self.assertIsNotNone(total, times.stdout)
        # The driver's cache off, as --compile-times has it: this text is the same in every run, so
        # with the cache on its PTX is assembled once on a machine and read back after.
        launch = subprocess.run(
            [CDL_RUN, "--expr", expression, "--strategy", "08_expression_jit/vec", "--n", "2^20"],
            capture_output=True,
            text=True,
            timeout=600,
            env=dict(os.environ, CUDA_CACHE_DISABLE="1"),
        )
        self.assertEqual(launch.returncode, 0, launch.stdout + launch.stderr)
        first = re.search(
            r"(?m)^08_expression_jit/vec \[--expr\] .* first launch ([0-9.]+) ms", launch.stdout
        )
        self.assertIsNotNone(first, launch.stdout)
        self.assertLess(float(total.group(1)), 2 * float(first.group(1)) + 20, times.stdout + launch.stdout)
        # Another strategy named: the tiers, which would have compiled 08's vec kernel first, did not run.
        self.assertNotIn("10_tiered_dispatch", launch.stdout)

    def test_a_users_op_runs_on_the_three_tiers_in_turn(self):
        """cdl_run --expr through strategy 10: the interpreter serves the first launch, 08's
        optimised tier is reached, and a launch on each tier is validated (exit status 0)."""
        got = subprocess.run(
            [CDL_RUN, "--expr", "x * x + 0.25 * x", "--strategy", "10_tiered_dispatch/vec", "--n", "2^20"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        line = re.search(r"(?m)^10_tiered_dispatch/vec \[--expr\]: first result ([0-9.]+) ms.*$", got.stdout)
        self.assertIsNotNone(line, got.stdout)
        self.assertIn("16's interpreter from launch 1 ", line.group(0))
        self.assertRegex(line.group(0), r"08's optimised tier from launch [0-9]+ ")

    def test_a_users_op_is_patched_or_refused_with_its_reason(self):
        """cdl_run --expr through 17: an op of its operations is patched, validated and timed; one
        it has no stencil for is named with the reason and the routes to use, and the run goes on."""
        for expression, patched in (("x * x + 2 * x + 1", True), ("sqrt(x) + 1", False)):
            got = subprocess.run(
                [CDL_RUN, "--expr", expression, "--strategy", "01_template_functor/scalar", "--n", "2^20"],
                capture_output=True,
                text=True,
                timeout=600,
            )
            said = got.stdout + got.stderr
            self.assertEqual(got.returncode, 0, said)
            if patched:
                self.assertRegex(said, r"(?m)^17_copy_and_patch/vec \[--expr\] +[0-9.]+ ms  \(p10 ")
            else:
                self.assertRegex(
                    said, r"(?m)^17_copy_and_patch/vec \[--expr\]: not run: .*sqrt.*16_interpreter"
                )

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


class LessonsOnTheGpu(unittest.TestCase):
    """The lessons built, run and compared with the suite: a test of its own (ctest runs it beside
    RunLinesOnTheGpu), as it builds every lesson first."""

    def test_each_lesson_runs_validates_and_times_its_knob(self):
        """A lesson exits 0 only when every result validated (strategies/lesson.cuh), and prints at
        least two timed rows. A map lesson prints the template's and its own ways' times at k = 1
        and k = 256; the others time their own knob (09 the blur's radius, 10 the number of
        launches, 11 the objects' layout)."""
        for name in lessons():
            with self.subTest(lesson=name):
                got = lesson_run(self, name)
                said = f"{name}\n{got.stdout}{got.stderr}"
                self.assertEqual(got.returncode, 0, said)
                self.assertNotIn("WRONG RESULT", got.stdout, said)
                self.assertGreaterEqual(len(re.findall(r"(?m)^.*\b[0-9.]+ ms\b", got.stdout)), 2, said)
                rows = re.findall(r"(?m)^(\S+) +([0-9]+) +[0-9.]+ ms .* ([0-9.]+|inf)×$", got.stdout)
                if "× template" in got.stdout:
                    for k in ("1", "256"):
                        at_k = [(way, ratio) for way, kk, ratio in rows if kk == k]
                        self.assertEqual(at_k[0], ("template", "1.00"), said)
                        self.assertGreaterEqual(len(at_k), 2, said)

    def test_copy_and_patch_runs_random_ops_right(self):
        """17 on the GPU: random ops of the language, each compiled from the stencils or refused,
        loaded and run against the language's float64 interpreter (`--fuzz`); none wrong."""
        lesson_run(self, "17_copy_and_patch.cu")  # builds it
        program = _lessons["built"]["17_copy_and_patch.cu"].result()[0]
        got = subprocess.run([program, "--fuzz", "500"], capture_output=True, text=True, timeout=600)
        said = got.stdout + got.stderr
        self.assertEqual(got.returncode, 0, said)
        self.assertRegex(said, r"fuzz: 500 ops, [1-9][0-9]* runs \([1-9][0-9]* of them vec\), 0 wrong")

    # Each map lesson's ways, as the suite registers the same kernel in its scalar form (an element
    # per thread, as the lessons' map_kernel runs).
    SUITE_FORM = {
        "00_inline.cu": {"inline": "00_inline"},
        "01_template_functor.cu": {"functor": "01_template_functor"},
        "02_device_lambda.cu": {"lambda": "02_device_lambda"},
        "03_switch.cu": {"switch": "03_switch", "hoisted": "03_switch.hoisted"},
        "04_function_pointer.cu": {"pointer": "04_function_pointer.symbol"},
        "05_virtual.cu": {"virtual": "05_virtual"},
        "06_nvrtc_jit.cu": {"nvrtc": "06_nvrtc_jit"},
        "07_jit_lto.cu": {"jit_lto": "07_jit_lto"},
        "08_expression_jit.cu": {"nvvm": "08_expression_jit"},
        "12_variant_visit.cu": {"variant": "12_variant_visit"},
        "13_precompiled_plugin.cu": {"plugin": "13_precompiled_plugin"},
        "14_graph_switch.cu": {"graph": "14_graph_switch"},
        "15_device_launch.cu": {"device": "15_device_launch"},
        "16_interpreter.cu": {"interpreter": "16_interpreter"},
    }

    def test_each_map_lesson_costs_what_the_suite_measures_for_its_kernel(self):
        """A lesson that drifts from the measured code is a wrong lesson: at k = 256, where the call
        is the work, each map lesson's way over the template must be within 10 % of the suite's
        same strategy over its template in the scalar form (cdl_run, in this same test). Ratios, so
        that the two runs' clocks cancel; 10 %, because the lesson times without the suite's L2
        flush and repetitions. Other processes on the GPU (ctest runs the GPU shards beside this
        test) can only lengthen a kernel's time: a lesson that misses is run again, with the
        suite's two kernels, twice at most, and each kernel's least time stands."""
        suite = least({}, suite_ms_at_256(self, "all"))
        self.assertIn("01_template_functor", suite)
        lessons = {name: {} for name in self.SUITE_FORM}

        def off(name, way, strategy):
            lesson = lessons[name][way] / lessons[name]["template"]
            measured = suite[strategy] / suite["01_template_functor"]
            return lesson, measured, abs(lesson / measured - 1)

        missed = list(self.SUITE_FORM)
        for attempt in range(3):
            for name in missed:
                got = lesson_run(self, name, again=attempt > 0)
                self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
                least(lessons[name], dict(re.findall(r"(?m)^(\S+) +256 +([0-9.]+) ms ", got.stdout)))
                if attempt > 0:
                    for strategy in {"01_template_functor", *self.SUITE_FORM[name].values()}:
                        least(suite, suite_ms_at_256(self, strategy + "/scalar"))
            missed = [
                name
                for name, ways in self.SUITE_FORM.items()
                if any(off(name, way, strategy)[2] >= 0.10 for way, strategy in ways.items())
            ]
            if not missed:
                break
        for name, ways in self.SUITE_FORM.items():
            for way, strategy in ways.items():
                with self.subTest(lesson=name, way=way):
                    lesson, measured, miss = off(name, way, strategy)
                    self.assertLess(
                        miss,
                        0.10,
                        f"{name}: {way} {lesson:.2f}× the template, the suite's {strategy}/scalar"
                        f" {measured:.2f}× (each kernel's least time over its runs)",
                    )


if __name__ == "__main__":
    gpu = "--gpu" in sys.argv
    argv = [a for a in sys.argv if a != "--gpu"]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    CDL_RUN = argv.pop(1)
    if gpu and not gpu_visible():
        print("no GPU visible: the run lines are not run (skipped)")
        sys.exit(77)
    # Test classes named after CDL_RUN run alone (ctest runs the GPU ones as two tests, side by side).
    named = [a for a in argv[1:] if not a.startswith("-")]
    gpu_suites = ["RunLinesOnTheGpu", "LessonsOnTheGpu"]
    suites = [] if named else gpu_suites if gpu else ["RunLines", "OneFileExample", "Lessons", "CompileTimes"]
    unittest.main(argv=[argv[0], *suites] + argv[1:])
