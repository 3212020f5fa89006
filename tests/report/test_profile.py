"""Nsight Compute's counters: reports/profile.py's parsing and refusals (no GPU, no ncu needed), and
the report's sections from a profile.json (the H100 reference's)."""
import json
import os
import shutil
import subprocess
import sys

from helpers import ROOT, FixtureTest, renamed

sys.path.insert(0, os.path.join(ROOT, "reports"))
import profile as ncu_profile  # noqa: E402  (reports/profile.py, not the standard library's)

REFERENCE = os.path.join(ROOT, "reports", "reference", "NVIDIA_H100_80GB_HBM3", "profile.json")
# ncu's CSV as `ncu --csv` prints it: the columns, their units, a row per kernel.
COLUMNS = [
    "ID",
    "Process ID",
    "Kernel Name",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpu__time_duration.sum",
    "smsp__thread_inst_executed.sum",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
]
CSV = (
    "==PROF== Connected to process\n"
    + ",".join(f'"{c}"' for c in COLUMNS)
    + "\n"
    + '"","","","Mbyte","Mbyte","usecond","inst","ratio","ratio","ratio"\n'
    + '"0","1","map_kernel","64.00","64.00","50.00","1,000","3.00","0.50","0.50"\n'
)


class ProfileTest(FixtureTest):
    def test_ncu_csv_becomes_per_element_figures_and_stall_shares(self):
        rows = ncu_profile.parse_csv(CSV)
        self.assertEqual(len(rows), 1)
        target = {
            "name": "t",
            "workload": "map",
            "entry": "e/vec",
            "problem": "p",
            "elements": 100,
            "min_bytes": 64e6,
        }
        k = ncu_profile.derive(target, rows[0])
        self.assertEqual(k["kernel"], "map_kernel")
        self.assertEqual(k["dram_read_bytes"], 64e6)
        self.assertEqual(k["dram_over_minimum"], 2.0)
        self.assertEqual(k["duration_us"], 50.0)
        self.assertEqual(k["thread_instructions_per_element"], 10.0)
        self.assertEqual(list(k["stalls"]), ["long_scoreboard", "wait", "selected"])
        self.assertAlmostEqual(k["stalls"]["long_scoreboard"], 0.75)
        self.assertAlmostEqual(k["stall_cycles_per_issue"], 4.0)

    def test_output_without_kernel_rows_is_an_error(self):
        with self.assertRaises(ncu_profile.ProfileError):
            ncu_profile.parse_csv("==ERROR== something went wrong\n")

    def test_a_missing_ncu_is_said_with_exit_status_2(self):
        run = subprocess.run(
            [
                sys.executable,
                os.path.join(ROOT, "reports", "profile.py"),
                self.dir,
                os.path.join(self.dir, "p.json"),
                "--ncu",
                os.path.join(self.dir, "no-ncu"),
            ],
            capture_output=True,
            text=True,
        )
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("ncu (Nsight Compute) not found", run.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "p.json")))

    def test_the_report_answers_each_question_from_the_counters(self):
        shutil.copy(REFERENCE, self.results)
        text = self.report(figures=True)
        section = text.split("## What the hardware did (Nsight Compute)")[1].split("\n## ")[0]
        for heading in (
            "Why an indirect call costs",
            "Why the scalar form stops below copy",
            "What divergence does in tasks",
            "Why tiling pays",
        ):
            self.assertIn(heading, section)
        # The reference's counters for 01's vec kernel at k = 64: achieved occupancy 0.9497, 392
        # thread instructions per element, written as the table writes them.
        self.assertIn("| 01_template_functor/vec, k = 64 | 0.95 | 392.0 |", section)
        self.assertTrue(os.path.exists(os.path.join(self.out, "profile_stalls.png")))

    def test_a_strategy_the_run_measured_and_the_profile_lacks_is_named_and_joins_once_profiled(self):
        """16's interpreter, made a measured strategy by copying 03's switch's results under its name:
        named as not profiled, then, once its counters are in the file, a row of the calls' table."""

        def measured(doc):
            doc["benchmarks"] += [
                renamed(b, "/03_switch/", "/16_interpreter/")
                for b in doc["benchmarks"]
                if b["run_name"].startswith("map/03_switch/vec/")
            ]

        self.edit_results(measured)
        section = self.report().split("## What the hardware did (Nsight Compute)")[1].split("\n## ")[0]
        self.assertIn(
            "not in this `profile.json` (profiled before they existed, or left out): `16_interpreter`.",
            section,
        )

        def profiled(doc):
            doc["kernels"] += [
                dict(k, entry="16_interpreter/vec") for k in doc["kernels"] if k["entry"] == "03_switch/vec"
            ]

        self.edit_results(profiled, "profile.json")
        section = self.report().split("## What the hardware did (Nsight Compute)")[1].split("\n## ")[0]
        self.assertNotIn("not in this `profile.json`", section)
        self.assertIn("| 16_interpreter/vec, k = 64 |", section)
        self.assertIn("- `16_interpreter`: ", section)

    def test_the_scalar_forms_are_set_beside_their_instructions_in_each_outcome(self):
        """Occupancy does not separate the full-occupancy scalar kernels; the instructions each issues
        per element are said to where their ranks follow the fractions of copy, and not otherwise; builds
        whose kernels issue the same count are one kernel in the statistic, not several."""

        # the fixture's scalar forms at full occupancy
        full = (
            "01_template_functor",
            "03_switch",
            "03_switch.hoisted",
            "04_function_pointer.symbol",
            "05_virtual",
        )

        def scalar_rows(doc):
            return [
                k
                for k in doc["kernels"]
                if k["entry"] in [f"{e}/scalar" for e in full] and " k=1" in k["problem"]
            ]

        def distinct_counts(doc):  # five builds, five counts, in the order of their fractions of copy
            for i, k in enumerate(sorted(scalar_rows(doc), key=lambda k: k["warp_instructions_per_element"])):
                k["warp_instructions_per_element"] += 0.001 * i

        self.edit_results(distinct_counts, "profile.json")
        self.assertIn(
            "The warp instructions each issues per element (Nsight Compute) do: the fewer, the nearer copy"
            " (Spearman's ρ = -1.00 over 5 distinct kernels, the 5 builds' with the same count taken once,"
            " p = 0.017).",
            self.report(),
        )
        self.fresh()
        # As measured: two of the five builds issue the same count, so four kernels, whose exact p
        # (four pairs: at least 1/12 whatever their order) cannot pass
        self.assertRegex(
            self.report(),
            r"; nor do the warp instructions each issues per element \(Nsight Compute\) \(Spearman's ρ ="
            r" -1\.00 over 4 distinct kernels, the 5 builds' with the same count taken once, p = 0\.083\):"
            r" what does is not measured here\.",
        )

        def reversed_counts(doc):  # the same counts, the ranks turned around
            rows = scalar_rows(doc)
            counts = sorted(k["warp_instructions_per_element"] for k in rows)
            for k, c in zip(sorted(rows, key=lambda k: -k["warp_instructions_per_element"]), counts):
                k["warp_instructions_per_element"] = c

        self.edit_results(reversed_counts, "profile.json")
        self.assertRegex(
            self.report(),
            r"; nor do the warp instructions each issues per element \(Nsight Compute\)"
            r" \(Spearman's ρ = [0-9.]+ over 4 distinct kernels, .*, p = [0-9.e-]+\): what does is not"
            r" measured"
            r" here\.",
        )
        os.remove(os.path.join(self.results, "profile.json"))
        self.assertIn("occupancy does not separate these, and what does is not measured here.", self.report())

    def test_a_foreign_or_malformed_profile_is_refused(self):
        with open(os.path.join(self.results, "profile.json"), "w") as f:
            json.dump({"schema": "something-else/1"}, f)
        self.assert_refused("not a cdl-profile/1 file")
        with open(os.path.join(self.results, "profile.json"), "w") as f:
            f.write("{")
        self.assert_refused("profile.json")

    def test_17s_time_over_the_templates_is_split_into_its_counted_parts_in_every_outcome(self):
        """17's rows, op by op: the threshold made from the quadratic's kernels with 1.7 times 17's
        instructions, and each outcome of the rule that names the part its extra time is."""
        from cdl_report.sections import profile as section_module

        def threshold(doc):
            # the profile's own threshold rows (where it has them) give way to the made ones
            doc["kernels"] = [
                k
                for k in doc["kernels"]
                if not (
                    "op=threshold" in k["problem"]
                    and "k=64" in k["problem"]
                    and k["entry"] in ("01_template_functor/vec", "17_copy_and_patch/vec")
                )
            ]
            for k in list(doc["kernels"]):
                if (
                    k["entry"] in ("01_template_functor/vec", "17_copy_and_patch/vec")
                    and "k=64" in k["problem"]
                ):
                    t = dict(k, problem=k["problem"].replace("op=quadratic", "op=threshold"))
                    if k["entry"].startswith("17"):
                        t["warp_instructions_per_element"] *= 1.7
                        t["duration_us"] *= 1.7
                    doc["kernels"].append(t)

        shutil.copy(REFERENCE, self.results)
        self.edit_results(threshold, "profile.json")
        section = (
            self.report().split("### What 17's time over the template's is made of")[1].split("\n### ")[0]
        )
        self.assertIn("| quadratic | ", section)
        self.assertIn("- `quadratic`: the same instructions; 1.07× from the issue slots busy", section)
        self.assertIn(
            "- `threshold`: 1.71× the instructions and 1.07× from the issue slots busy: mostly the"
            " instructions.",
            section,
        )
        # the quadratic's rows are still the calls' table's (its k = 64 kernels, not the threshold's)
        self.assertIn("| 01_template_functor/vec, k = 64 | 0.95 | 392.0 |", self.report())
        which = section_module.which_part
        self.assertTrue(which(1.001, 1.0).startswith("no part differs"))
        self.assertTrue(which(1.0, 1.07).startswith("the same instructions; 1.07× from the issue slots"))
        self.assertTrue(which(1.71, 1.01).startswith("1.71× the instructions, the same issue slots busy"))
        self.assertTrue(which(1.33, 1.04).endswith("mostly the instructions"))
        self.assertTrue(which(1.02, 1.30).endswith("mostly the issue slots busy"))
        t = {"duration_us": 10.0, "warp_instructions_per_element": 20.0, "issue_active": 0.8}
        c = {"duration_us": 17.7, "warp_instructions_per_element": 34.2, "issue_active": 0.774}
        time, instructions, issue = section_module.parts(t, c)
        self.assertAlmostEqual(time, 1.77)
        self.assertAlmostEqual(instructions, 1.71)
        self.assertAlmostEqual(issue, 0.8 / 0.774)

    def test_16s_kernels_are_set_beside_the_template_with_their_slots_and_occupancy(self):
        """16's rows, op by op, with the slots read from each kernel's name; the sentence on the op with
        the least occupancy only where the ops' kernels differ in it (a threshold kernel made from the
        quadratic's with twice its registers and half its occupancy)."""
        from cdl_report.sections import profile as section_module

        def threshold(doc, registers, occupancy):
            doc["kernels"] = [k for k in doc["kernels"] if "op=threshold" not in k["problem"]]
            for k in list(doc["kernels"]):
                if k["entry"] in ("01_template_functor/vec", "16_interpreter/vec") and "k=64" in k["problem"]:
                    t = dict(k, problem=k["problem"].replace("op=quadratic", "op=threshold"))
                    if k["entry"].startswith("16"):
                        t.update(registers=registers, occupancy_theoretical=occupancy)
                        t["kernel"] = t["kernel"].replace(", 0>", ", 2>")
                    doc["kernels"].append(t)

        def section():
            return (
                self.report().split("### What 16's time over the template's is made of")[1].split("\n### ")[0]
            )

        shutil.copy(REFERENCE, self.results)
        self.edit_results(lambda doc: threshold(doc, 102, 0.25), "profile.json")
        got = section()
        self.assertIn("| quadratic | 0 | 64 | 0.49 / 0.50 |", got)
        self.assertIn("| threshold | 2 | 102 |", got)
        self.assertIn("The `threshold` kernel holds 102 registers a thread, so at most 0.25", got)
        self.assertIn("against 0.50 for the `quadratic`'s", got)
        shutil.copy(REFERENCE, self.results)
        self.edit_results(lambda doc: threshold(doc, 64, 0.5), "profile.json")
        self.assertNotIn("registers a thread, so at most", section())
        self.assertEqual(
            section_module.slots({"kernel": "void interpreter::interpreter_vec<float, 1, 4, 2>(x)"}), 2
        )
        self.assertEqual(section_module.slots({"kernel": "cdl_interpreter_vec_f32_1_4_4"}), 4)
        self.assertIsNone(section_module.slots({"kernel": "cdl_interpreter_scalar_f32_16_4"}))
        self.assertIsNone(section_module.slots({"kernel": "cdl_image_vec_4"}))
