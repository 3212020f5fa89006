"""The report's cross-device section (cdl_report/sections/devices.py): another device's run beside
this one, found as a sibling directory or named with --others."""
import json
import os
import shutil

from helpers import FixtureTest, run_report, renamed

FASTER_MEMORY = 1.5  # the other device's copy bandwidth over this one's


def other_device(doc):
    """This run as a device with 1.5 times the memory bandwidth would give it: the map at k = 1 beyond L2
    1.5 times faster, the host's jit/ stages 1.2 times slower, everything else the same."""
    c = doc["context"]
    env = json.loads(c["cdl_environment"])
    env["device"]["name"] = "Other GPU"
    c["cdl_environment"] = json.dumps(env)
    c["copy_bandwidth_gbs"] = str(float(c["copy_bandwidth_gbs"]) * FASTER_MEMORY)
    l2 = env["device"]["l2_bytes"]
    for x in doc["benchmarks"]:
        name = x["run_name"]
        if x.get("aggregate_name") == "cv":
            continue
        fields = dict(p.split(":", 1) for p in name.split("/") if ":" in p)
        if name.startswith("map/") and fields.get("k") == "1" and 8 * int(fields["n"]) > l2:
            x["real_time"] /= FASTER_MEMORY
        elif name.startswith("jit/"):
            x["real_time"] *= 1.2


class DevicesTest(FixtureTest):
    def setUp(self):
        super().setUp()
        self.other = os.path.join(self.dir, "other")
        shutil.copytree(self.results, self.other)
        for name in ("bench.json", "repeat.json"):  # its repeat run too: the same device's noise
            self.edit_results(other_device, name=os.path.join("..", "other", name))

    def section(self, text):
        self.assertIn("## Across devices", text)
        return text.split("## Across devices")[1].split("\n## ")[0]

    def test_two_revisions_are_said_to_compare_the_code_too(self):
        self.assertNotIn("The runs are of two revisions", self.section(self.report()))

        def older(doc):
            doc["context"]["git_revision"] = "0123456"

        self.edit_results(older, name=os.path.join("..", "other", "bench.json"))
        section = self.section(self.report())
        self.assertIn("**The runs are of two revisions** (`9c3932a89ea6` and `0123456`)", section)
        self.assertIn("so only the copy (`cudaMemcpy`, no code of the suite's) is compared here", section)
        # nothing else is compared: no group but the copy, no penalty, no stage
        self.assertIn("| copy | 3 |", section)
        self.assertNotIn("| map, k = ", section)
        self.assertNotIn("**The dispatch penalties**", section)
        self.assertNotRegex(section, r"The \d+ jit/ stages")

    def test_a_sibling_device_is_compared_and_each_group_classified(self):
        s = self.section(self.report(figures=True))
        self.assertIn("(A) and Other GPU (B)", s)
        self.assertIn(f"would take {1 / FASTER_MEMORY:.3f} times as long on B, one bound by the SMs 1.000", s)
        rows = {
            line.split(" | ")[0].strip("| "): line.split(" | ")
            for line in s.splitlines()
            if line.startswith("| ")
        }
        beyond = rows["map, k = 1, beyond L2"]
        self.assertTrue(beyond[2].startswith(f"{1 / FASTER_MEMORY:.3f} ("))  # median B/A, then its 5–95 %
        self.assertEqual(beyond[3], "1.00")  # the whole bandwidth gain
        self.assertEqual(beyond[4], beyond[1])  # every one of them "with the memory"
        matmul = rows["matmul"]
        self.assertEqual(matmul[3], "-0.00" if matmul[3].startswith("-") else "0.00")
        self.assertEqual(matmul[6], matmul[1])  # every one in the SMs' class: here "unchanged"
        self.assertIn("| with the memory | between | unchanged | slower than either |", s)
        self.assertIn("the two GPUs' SMs run at the same rate", s)
        self.assertIn("take 1.20 times as long on B at the median", s)
        # The template and the rest moved together at k = 1, so no penalty moved.
        self.assertRegex(s, r"\| 1 \| 0 of \d+ \| 0\.0% \|")
        self.assertTrue(os.path.exists(os.path.join(self.out, "devices_Other_GPU.png")))

    def test_the_sms_class_is_named_so_only_where_the_sms_differ(self):
        def more_sms(doc):
            env = json.loads(doc["context"]["cdl_environment"])
            env["device"]["sm_count"] = int(env["device"]["sm_count"] * 1.25)
            doc["context"]["cdl_environment"] = json.dumps(env)

        self.edit_results(more_sms, name=os.path.join("..", "other", "bench.json"))
        s = self.section(self.report())
        self.assertIn("one bound by the SMs 0.800", s)
        self.assertIn("| with the memory | between | with the SMs | slower than either |", s)
        self.assertNotIn("unchanged", s)

    def test_a_penalty_that_moves_is_counted(self):
        def slow_virtual(doc):
            for x in doc["benchmarks"]:
                if (
                    x["run_name"].startswith("map/05_virtual/vec/op:quadratic/type:f32/")
                    and "/k:256/" in x["run_name"]
                    and x.get("aggregate_name") != "cv"
                ):
                    x["real_time"] *= 1.3

        for name in ("bench.json", "repeat.json"):
            self.edit_results(slow_virtual, name=os.path.join("..", "other", name))
        s = self.section(self.report())
        self.assertRegex(s, r"\| 256 \| 1 of \d+ \| [0-9.]+% \| 30\.0% \(05_virtual, quadratic\) \|")

    def test_runs_of_two_map_loops_are_told_apart(self):
        s = self.section(self.report())
        self.assertNotIn("The map's vec kernels differ", s)
        self.edit_results(
            lambda doc: doc["context"].update(cdl_map_vec_loop="fused"),
            name=os.path.join("..", "other", "bench.json"),
        )
        s = self.section(self.report())
        self.assertIn("**The map's vec kernels differ between the runs.** B's skeleton runs one k loop", s)

    def test_runs_with_and_without_the_gemm_steps_are_told_apart(self):
        self.assertNotIn("The tiled GEMMs may differ", self.section(self.report()))
        tiled = "matmul/01_template_functor/tiled/"

        def add_steps(doc):
            doc["benchmarks"] += [
                renamed(b, "/tiled/", "/tiled_step0/")
                for b in doc["benchmarks"]
                if b["run_name"].startswith(tiled)
            ]

        self.edit_results(add_steps)
        s = self.section(self.report())
        self.assertIn(
            "**The tiled GEMMs may differ between the runs.** A measured the tiled kernel's steps", s
        )

    def test_no_section_without_another_device_or_with_an_empty_list(self):
        self.assertNotIn("## Across devices", self.report("--others"))
        shutil.rmtree(self.other)
        self.assertNotIn("## Across devices", self.report())

    def test_a_malformed_sibling_is_skipped_with_a_line_and_a_named_one_refused(self):
        with open(os.path.join(self.other, "bench.json"), "w") as f:
            f.write("{not json")
        run = run_report(self.results, self.out)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(f"not comparing with {self.other}", run.stderr)
        run = run_report(self.results, self.out, "--others", self.other)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertNotIn("Traceback", run.stderr)

    def test_an_entry_that_vanishes_while_the_siblings_are_read_is_passed_over(self):
        """Another program's temporary file, listed beside the results and gone before it is looked at:
        the siblings are the runs still there."""
        import report as report_script  # reports/report.py

        from cdl_report.results import Results

        listdir = os.listdir
        try:
            os.listdir = lambda p: listdir(p) + ["tmpxft_gone"]
            found = report_script.siblings(Results(self.results))
        finally:
            os.listdir = listdir
        self.assertEqual([os.path.basename(r.directory) for r in found], [os.path.basename(self.other)])
