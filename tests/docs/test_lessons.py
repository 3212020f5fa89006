"""Each lesson (strategies/NN_<name>.cu) builds alone with the nvcc line its header gives; on a
GPU it runs, validates, times its knob, and costs what the suite measures for the same kernel.

    test_lessons.py [--gpu] CDL_RUN [LESSON.cu ...] [unittest arguments]

Without --gpu (CI, no GPU): every lesson built, one nvcc per lesson on each core. With --gpu: the
lessons named (every one where none is) built, run and held to the suite; without a GPU the script
says so and exits 77, which ctest reports as skipped. ctest runs a GPU test per lesson
(LessonsOnTheGpu), so that the lessons' builds and runs spread over the machine's cores beside the
GPU shards instead of following one another in one process, and holds the map lessons to the suite
in one test run alone, after every other (LessonsHeldToTheSuite): the GPU time-slices between
processes, and a kernel longer than a slice waits for the others' slices inside its own timing.
"""
import atexit
import concurrent.futures
import contextlib
import fcntl
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from visible_gpu import gpu_visible  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CDL_RUN = None
NAMED = []  # the lessons the command line names (file names); none: every lesson


def command_line(doc, folder, what):
    """(--gpu given, CDL_RUN, the .cu files named, the rest for unittest) of a docs test's command line
    `[--gpu] CDL_RUN [NN_<name>.cu ...] [unittest arguments]`; exits 2 with doc or the unknown file,
    and 77 (ctest: skipped) for --gpu where no GPU is visible."""
    gpu = "--gpu" in sys.argv
    argv = [a for a in sys.argv if a != "--gpu"]
    if len(argv) < 2:
        print(doc, file=sys.stderr)
        sys.exit(2)
    cdl_run = argv.pop(1)
    named = [a for a in argv[1:] if a.endswith(".cu")]
    argv = [a for a in argv if a not in named]
    unknown = [n for n in named if not os.path.exists(os.path.join(ROOT, folder, n))]
    if unknown:
        print(f"{os.path.basename(argv[0])}: no {', '.join(unknown)} in {folder}/", file=sys.stderr)
        sys.exit(2)
    if gpu and not gpu_visible():
        print(f"no GPU visible: the {what} are not run (skipped)")
        sys.exit(77)
    return gpu, cdl_run, named, argv


def lessons():
    """{lesson file: [(nvcc command, the run that follows it or None), ...]}: each `// Build.` line of
    a strategies/NN_<name>.cu (a line ending in a backslash goes on in the next comment line; a
    command may end in `&& ./program ARGS`, how to run what the last line built). Only the lessons
    named on the command line, where some are."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "strategies", "[0-9][0-9]_*.cu"))):
        if NAMED and os.path.basename(path) not in NAMED:
            continue
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


def lesson_argv(name, commands, out_dir):
    """How to run a lesson built into out_dir/<its stem>/: what its last command builds, with the
    arguments its header runs it with."""
    args, run = commands[-1]
    program = os.path.basename(args[args.index("-o") + 1])
    return [os.path.join(out_dir, name[: -len(".cu")], program), *(run[1:] if run else [])]


def build_lesson(test, name, commands, out_dir):
    """Builds a lesson with its header's commands into out_dir/<its stem>/, the commands at once (a
    lesson's are independent: 13's plugin and program, 17's two cubins and program); returns how to
    run it."""
    test.assertTrue(commands, f"{name}: no `// Build.   nvcc ...` line in its header")
    for args, _ in commands:
        test.assertEqual(args[0], "nvcc", name)
        test.assertIn(f"strategies/{name}", args)
    own = os.path.join(out_dir, name[: -len(".cu")])
    os.makedirs(own, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(len(commands)) as pool:
        list(pool.map(lambda command: build_alone(test, command[0], own), commands))
    return lesson_argv(name, commands, out_dir)


def build_lessons(test, out_dir):
    """Builds every lesson with its header's commands into out_dir, one nvcc per lesson on each of the
    machine's cores; returns {lesson file: a future of how to run it} (result() raises what failed)."""
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        return {
            name: pool.submit(build_lesson, test, name, commands, out_dir)
            for name, commands in lessons().items()
        }


def built_lessons(test):
    """{lesson file: a future of how to run it}: read from CDL_LESSONS_DIR where it is set (ctest's
    lesson_NN test built the lesson there first: a fixture), else built now into a folder of this
    process's."""
    where = os.environ.get("CDL_LESSONS_DIR")
    if not where:
        out = tempfile.mkdtemp(prefix="cdl_lessons.")
        atexit.register(shutil.rmtree, out, True)
        return build_lessons(test, out)
    built = {}
    for name, commands in lessons().items():
        argv = lesson_argv(name, commands, where)
        test.assertTrue(os.path.exists(argv[0]), f"{argv[0]}: not built (ctest's lesson_NN test builds it)")
        built[name] = concurrent.futures.Future()
        built[name].set_result(argv)
    return built


_lessons = {}  # "built": {lesson file: a future of its run}; lesson file -> its run, once per process


def lesson_run(test, name, again=False):
    """The lesson (built_lessons) run, once per process (two tests read each run), or `again`."""
    if "built" not in _lessons:
        _lessons["built"] = built_lessons(test)
    if name not in _lessons or again:
        run = _lessons["built"][name].result()
        _lessons[name] = subprocess.run(
            run, capture_output=True, text=True, cwd=os.path.dirname(run[0]), timeout=600
        )
    return _lessons[name]


def suite_ms(test, strategies, k):
    """{strategy: median ms} of cdl_run's scalar rows for the quadratic map at k, 2^24: the strategies in
    one process (one problem and one float64 reference for all)."""
    named = ",".join(strategy + "/scalar" for strategy in sorted(strategies))
    got = subprocess.run(
        [CDL_RUN, "--strategy", named, "--op", "quadratic", "--n", "2^24", "--k", str(k)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    test.assertEqual(got.returncode, 0, got.stdout + got.stderr)
    return dict(re.findall(r"(?m)^(\S+)/scalar\S* +([0-9.]+) ms  \(p10", got.stdout))


@contextlib.contextmanager
def the_gpu_alone(most_s=240):
    """Holds a lock that the lessons' tests of every process take to run again, then waits until
    nvidia-smi lists no compute process on the GPU (the other work done), at most most_s seconds: the
    GPU time-slices between processes, and a kernel longer than a slice waits for the others'
    slices inside its own timing. Without the lock, two lessons that missed wake together and
    slice the GPU between themselves."""
    with open(os.path.join(tempfile.gettempdir(), "cdl_lessons_gpu.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        deadline = time.monotonic() + most_s
        while time.monotonic() < deadline:
            try:
                listed = subprocess.run(
                    ["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
            except (OSError, subprocess.TimeoutExpired):
                break
            if listed.returncode != 0 or not listed.stdout.strip():
                break
            time.sleep(2)
        yield


def least(times, new):
    """times, each kernel's time the least of its own and new's (strings of ms, from the output)."""
    for name, ms in new.items():
        times[name] = min(float(ms), times.get(name, float("inf")))
    return times


class Lessons(unittest.TestCase):
    def test_each_lesson_builds_alone_with_the_command_its_header_gives(self):
        """Into CDL_LESSONS_DIR where it is set (kept: ctest's GPU test of the lesson runs it), else
        into a folder removed after."""
        out = os.environ.get("CDL_LESSONS_DIR") or tempfile.mkdtemp(prefix="cdl_lessons.")
        try:
            built = build_lessons(self, out)
            self.assertGreaterEqual(len(built), len(NAMED) or 5)
            for name, program in built.items():
                with self.subTest(lesson=name):
                    program.result()
        finally:
            if not os.environ.get("CDL_LESSONS_DIR"):
                shutil.rmtree(out)


class LessonsOnTheGpu(unittest.TestCase):
    """The lessons built and run (ctest runs a test per lesson, side by side with the GPU shards:
    tests/CMakeLists.txt)."""

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


class LessonsHeldToTheSuite(unittest.TestCase):
    """The map lessons' kernels timed against the suite's same kernels (ctest runs this alone, after
    every other test: tests/CMakeLists.txt)."""

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
        "17_copy_and_patch.cu": {"patched": "17_copy_and_patch"},
    }
    # 16's lesson is not among them: it runs the plain loop (a switch a step, one value), which the
    # suite's interpreter does not (its kernels keep an op's values in slots and take a Horner step
    # whole: strategies/suite/interpreter_loop.cuh), so no kernel of the suite's is the lesson's.

    def test_each_map_lesson_costs_what_the_suite_measures_for_its_kernel(self):
        """A lesson that drifts from the measured code is a wrong lesson: at k = 256, where the call is
        the work, each map lesson's way over the template must be within 10 % of the suite's
        same strategy over its template in the scalar form (cdl_run, in this same test). Ratios, so
        that the two runs' clocks cancel; 10 %, because the lesson times without the suite's L2
        flush and repetitions. Other processes on the GPU (run by hand beside other work) can only
        lengthen a kernel's time: a lesson that misses is run again, with the suite's kernels,
        once no other process is on the GPU, twice at most, and each kernel's least time stands."""
        forms = {name: ways for name, ways in self.SUITE_FORM.items() if name in lessons()}
        if not forms:
            self.skipTest("no map lesson among the lessons named")
        at = {name: 256 for name in forms}
        suite = {}  # k -> {strategy: ms}
        for k in set(at.values()):
            strategies = {s for name, ways in forms.items() if at[name] == k for s in ways.values()}
            suite[k] = least({}, suite_ms(self, {"01_template_functor", *strategies}, k))
            self.assertIn("01_template_functor", suite[k])
        times = {name: {} for name in forms}

        def off(name, way, strategy):
            lesson = times[name][way] / times[name]["template"]
            measured = suite[at[name]][strategy] / suite[at[name]]["01_template_functor"]
            return lesson, measured, abs(lesson / measured - 1)

        missed = list(forms)
        for attempt in range(3):
            with the_gpu_alone() if attempt > 0 else contextlib.nullcontext():
                for name in missed:
                    got = lesson_run(self, name, again=attempt > 0)
                    self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
                    least(
                        times[name], dict(re.findall(rf"(?m)^(\S+) +{at[name]} +([0-9.]+) ms ", got.stdout))
                    )
                    if attempt > 0:
                        least(
                            suite[at[name]],
                            suite_ms(self, {"01_template_functor", *forms[name].values()}, at[name]),
                        )
            missed = [
                name
                for name, ways in forms.items()
                if any(off(name, way, strategy)[2] >= 0.10 for way, strategy in ways.items())
            ]
            if not missed:
                break
        for name, ways in forms.items():
            for way, strategy in ways.items():
                with self.subTest(lesson=name, way=way):
                    lesson, measured, miss = off(name, way, strategy)
                    self.assertLess(
                        miss,
                        0.10,
                        f"{name}: {way} {lesson:.2f}× the template at k = {at[name]}, the suite's"
                        f" {strategy}/scalar {measured:.2f}× (each kernel's least time over its runs)",
                    )


if __name__ == "__main__":
    gpu, CDL_RUN, NAMED, argv = command_line(__doc__, "strategies", "lessons")
    named = [a for a in argv[1:] if not a.startswith("-")]
    suites = [] if named else ["LessonsOnTheGpu", "LessonsHeldToTheSuite"] if gpu else ["Lessons"]
    unittest.main(argv=[argv[0], *suites] + argv[1:])
