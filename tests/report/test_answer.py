"""The report's first screen (cdl_report/sections/answer.py): the one-line summary, the headline,
the decision table and the surprises, each cell traced to the fixture's figures, read here from
bench.json on their own."""
import json
import os
import re
import unittest

from helpers import FixtureTest, renamed


def medians(path):
    """{run name without its iterations suffix: median in the file's unit} of a results file."""
    with open(path) as f:
        doc = json.load(f)
    return {
        b["run_name"].split("/iterations:")[0].split("/min_time:")[0]: b["real_time"]
        for b in doc["benchmarks"]
        if b.get("aggregate_name") == "median"
    }


class AnswerTest(FixtureTest):
    def first_screen(self, text):
        return text.split("\n## ")[0]

    def ratio(self, entry, op, k):
        m = medians(os.path.join(self.results, "bench.json"))
        name = f"map/{{}}/vec/op:{op}/type:f32/n:16777216/k:{k}"
        return m[name.format(entry)] / m[name.format("01_template_functor")]

    def test_the_first_screen_answers_from_the_figures(self):
        screen = self.first_screen(self.report())
        self.assertRegex(screen, r"\*\*NVIDIA H100 80GB HBM3\*\* · copy bandwidth 3035 GB/s · noise 1\.0% ·")
        decision = screen.split("**Your own op")[0]  # the launches' table follows it
        rows = {
            r.split(" | ")[0][2:]: r.split(" | ")
            for r in decision.splitlines()
            if r.startswith("| ") and "`" in r
        }
        self.assertEqual(
            list(rows),
            [
                "known when the program is built",
                "chosen at run time from ops built in, once per launch",
                "chosen per element, from ops built in",
                "written by a user at run time",
            ],
            "the situations the fixture's strategies serve (it has no plugin, 13)",
        )
        # Per element: the switch (04's table is not in the fixture; 05's virtual call costs more),
        # its worst op at k = 256 and at k = 1, each the ratio of the two medians.
        per_element = rows["chosen per element, from ops built in"]
        self.assertTrue(per_element[1].startswith("`03_switch`"))
        worst_256 = max(("quadratic", "exp_sin_cos"), key=lambda op: self.ratio("03_switch", op, 256))
        self.assertEqual(per_element[3], f"{self.ratio('03_switch', worst_256, 256):.2f}× {worst_256}")
        worst_1 = max(("quadratic", "exp_sin_cos"), key=lambda op: self.ratio("03_switch", op, 1))
        self.assertEqual(per_element[2], f"{self.ratio('03_switch', worst_1, 1):.2f}× {worst_1}")
        # At run time: 08, whose new op costs its compile-and-load stage's median.
        jit = rows["written by a user at run time"]
        self.assertTrue(jit[1].startswith("`08_expression_jit`"))
        m = medians(os.path.join(self.results, "bench.json"))
        new_op = next(v for n, v in m.items() if n.startswith("jit/compile/08/new_op"))
        self.assertTrue(jit[4].startswith(f"{new_op:.1f} ms a new op"), jit[4])
        # The template against itself: no difference, in parentheses.
        self.assertEqual(rows["known when the program is built"][2], "(1.00×) quadratic")
        # The headline's dearest ways: the largest worst-op ratio at k = 256 of every way named, and
        # every way within the run's noise (1.0 %) of it, named together.
        worst = {
            e: max((self.ratio(e, op, 256), op) for op in ("quadratic", "exp_sin_cos"))
            for e in ("03_switch", "03_switch.hoisted", "04_function_pointer.symbol", "05_virtual")
        }
        top = max(worst.values())[0]
        dearest = sorted(((r, e, op) for e, (r, op) in worst.items() if r * 1.01 >= top), reverse=True)
        self.assertEqual([e for _, e, _ in dearest], ["05_virtual", "04_function_pointer.symbol"])
        self.assertIn(
            f"The dearest ways measured, a virtual call (`05_virtual`) and a device function pointer"
            f" (`04_function_pointer.symbol`), take {dearest[-1][0]:.2f}–{dearest[0][0]:.2f}× the template's"
            f" time, no difference between them beyond the noise ({dearest[0][2]}, k = 256",
            screen,
        )
        self.assertIn("![Time over the template's against k", screen)

    def test_one_dearest_way_is_named_alone_where_the_next_is_beyond_the_noise(self):
        def dearer(doc):
            for b in doc["benchmarks"]:
                if b["run_name"].startswith("map/05_virtual/vec/") and "/k:256/" in b["run_name"]:
                    if b.get("aggregate_name") != "cv":
                        b["real_time"] *= 1.2

        self.edit_results(dearer)
        self.assertIn("The dearest way measured, a virtual call (`05_virtual`), takes", self.report())

    def with_a_run_time_way(self, way, route, rows_from, times, first_result_over_08):
        """The first screen's rows, the fixture given `way`: its map rows made from those of 03 whose
        names start with rows_from, at `times` 03's medians, and its first result (route `route`)
        from 08's new-op compile, divided by first_result_over_08; and that first result (ms)."""

        def add(doc):
            added = []
            for b in doc["benchmarks"]:
                if b["run_name"].startswith(rows_from):
                    scale = {"real_time": b["real_time"] * times, "cpu_time": b["cpu_time"] * times}
                    added.append(renamed(b, "03_switch/", f"{way}/", **scale))
                elif b["run_name"].startswith("jit/compile/08/new_op"):
                    scale = {k: b[k] / first_result_over_08 for k in ("real_time", "cpu_time")}
                    added.append(
                        renamed(b, "jit/compile/08/new_op", f"jit/first_result/{route}/new_op", **scale)
                    )
            doc["benchmarks"] += added

        self.edit_results(add)
        screen = self.first_screen(self.report())
        rows = {r.split(" | ")[0][2:]: r.split(" | ") for r in screen.splitlines() if r.startswith("| ")}
        m = medians(os.path.join(self.results, "bench.json"))
        first = next(v for n, v in m.items() if n.startswith(f"jit/first_result/{route}/new_op"))
        return screen, rows, first

    def test_a_users_op_needed_at_once_is_the_interpreters_row(self):
        """16's row: its worst op at each k over the template, and its first result's stage."""
        screen, rows, first = self.with_a_run_time_way("16_interpreter", "16", "map/03_switch/", 1.5, 1000)
        row = rows["written by a user at run time, its first result at once (no compiler)"]
        self.assertTrue(row[1].startswith("`16_interpreter`"), row)
        worst = max(("quadratic", "exp_sin_cos"), key=lambda op: self.ratio("16_interpreter", op, 256))
        self.assertEqual(row[3], f"{self.ratio('16_interpreter', worst, 256):.2f}× {worst}")
        self.assertTrue(row[4].startswith(f"{first:.2f} ms from a new op's text"), row[4])
        self.assertIn(f"`16_interpreter` gives a new op's first result in {first:.2f} ms", screen)

    def test_the_interpreters_spills_are_read_from_its_float_kernels_by_either_name(self):
        """16's float kernels carry C names in their own object (the Python peers' file) or, in
        older results, their templates' in 16's: both are counted, float64's and other sources'
        never."""
        from cdl_report.sections import answer

        def kernel(name, spills, source="strategies/suite/16_interpreter.cu"):
            return {"name": name, "source": source, "spill_stores": spills}

        kernels = [
            kernel("cdl_interpreter_vec_f32_1_4_4", 64, "strategies/suite/interpreter_f32.cu"),
            kernel("interpreter::interpreter_vec<float, 2, 1, 0>", 16),
            kernel("cdl_interpreter_scalar_f32_1_0", 0, "strategies/suite/interpreter_f32.cu"),
            kernel("interpreter::interpreter_vec<double, 4, 1, 0>", 112),
            kernel("map_vec_kernel<float, quadratic>", 8, "strategies/suite/01_template_functor.cu"),
        ]
        self.assertEqual(answer.interpreter_spills({"kernels": kernels}), (2, 3, 64))
        self.assertIsNone(answer.interpreter_spills({"kernels": kernels[3:]}))

    def test_a_new_processs_first_op_is_given_beside_a_ways_new_op(self):
        """A way's one-time cost is given for the first op of a new process too (its first use in the
        process among it: 16's kernels loaded, 17's stencils learnt) where the run has that probe, in
        its row and in the headline's clause; without the probe, neither says it."""

        def fresh(doc):
            doc["benchmarks"] += [
                renamed(b, "jit/compile/08/new_op", "jit/first_result_in_process/16/new_op", real_time=32.1)
                for b in doc["benchmarks"]
                if b["run_name"].startswith("jit/compile/08/new_op")
            ]

        screen, rows, _ = self.with_a_run_time_way("16_interpreter", "16", "map/03_switch/", 1.5, 1000)
        row = rows["written by a user at run time, its first result at once (no compiler)"]
        self.assertNotIn("a new process's first", row[4])
        self.assertNotIn("as the first op of a new process", screen)
        self.edit_results(fresh)
        screen = self.first_screen(self.report())
        row = next(
            r for r in screen.splitlines() if r.startswith("| written by a user at run time, its first")
        )
        self.assertIn("; a new process's first 32.1 ms |", row)
        self.assertIn("ms (32.1 ms as the first op of a new process) and runs at", screen)

    def test_copy_and_patchs_row_names_the_ops_it_refuses(self):
        """17's row, made from 03's quadratic alone (it refuses the ops its stencils do not hold, here
        exp_sin_cos): its worst op among those it ran, the ops it refused named, its first result;
        and the headline's clause."""
        screen, rows, first = self.with_a_run_time_way(
            "17_copy_and_patch", "17", "map/03_switch/vec/op:quadratic/", 1.1, 100
        )
        row = rows["written by a user at run time, native code within a millisecond (no compiler)"]
        self.assertTrue(row[1].startswith("`17_copy_and_patch`"), row)
        self.assertTrue(row[1].endswith("(not exp_sin_cos: it refuses them)"), row[1])
        self.assertEqual(row[3], f"{self.ratio('17_copy_and_patch', 'quadratic', 256):.2f}× quadratic")
        self.assertTrue(row[4].startswith(f"{first:.2f} ms from a new op's text"), row[4])
        self.assertIn(
            "`17_copy_and_patch` writes a new op's machine code with no compiler, its first", screen
        )
        # Beside the template, the others keep their rows without a refusal named.
        self.assertNotIn("it refuses them", rows["known when the program is built"][1])

    def test_the_surprises_are_the_largest_of_each_rule(self):
        screen = self.first_screen(self.report())
        found = re.findall(r"(?m)^\d\. \*\*(.*?)\*\*", screen)
        self.assertEqual(len(found), 3)
        self.assertTrue(found[0].startswith("Grouping by op costs"), found)
        self.assertTrue(found[1].startswith("One strategy, two ways: 4.11× apart"), found)
        self.assertTrue(found[2].startswith("An element a thread reaches 0.50 of copy"), found)

        def no_tasks(doc):
            doc["benchmarks"] = [b for b in doc["benchmarks"] if not b["run_name"].startswith("tasks/")]

        self.edit_results(no_tasks)
        found = re.findall(r"(?m)^\d\. \*\*(.*?)\*\*", self.first_screen(self.report()))
        self.assertFalse(any(f.startswith("Grouping") for f in found), found)

    def test_the_quick_suites_sweep_names_its_largest_k(self):
        def up_to_16(doc):
            doc["benchmarks"] = [
                b for b in doc["benchmarks"] if not re.search(r"/k:(64|256)/", b["run_name"])
            ]

        self.edit_results(up_to_16)
        screen = self.first_screen(self.report())
        self.assertIn("| × template, k = 16 (worst op) |", screen)
        self.assertIn("k = 16, n = 2^24 float32", screen)

    def test_without_a_sweep_it_says_it_cannot_answer(self):
        def no_sweep(doc):
            doc["benchmarks"] = [
                b
                for b in doc["benchmarks"]
                if not (b["run_name"].startswith("map/") and "/k:1/" not in b["run_name"])
            ]

        self.edit_results(no_sweep)
        self.assertIn("no answer can be computed from it", self.first_screen(self.report()))


class AnswerFigureTest(unittest.TestCase):
    def test_ticks_read_as_numbers_each_line_is_named_and_the_template_s_line_is_named_together(self):
        import tempfile

        from cdl_report import plots
        from cdl_report.document import Document

        drawn = {}

        class Kept(Document):
            def figure(self, name, fig, caption):
                drawn["fig"] = fig

        with tempfile.TemporaryDirectory() as out:
            doc = Kept(out, True)
            lines = {
                "05_virtual": [(1, 1.2), (16, 9.0), (256, 15.0)],
                "03_switch.hoisted": [(1, 1.0), (16, 1.01), (256, 0.995)],
                "08_expression_jit": [(1, 1.0), (16, 1.0), (256, 1.0)],
                "17_copy_and_patch": [(1, 1.0), (16, 1.2), (256, 1.4)],
            }
            plots.answer(doc, lines, 0.02, "caption")
            ax = drawn["fig"].axes[0]
            drawn["fig"].canvas.draw()
            self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["1", "16", "256"])
            ys = [t.get_text() for t in ax.get_yticklabels()]
            self.assertIn("1×", ys)
            self.assertIn("16×", ys)
            self.assertFalse(any("^" in y or "{" in y for y in ys), ys)  # no 2×10^0
            texts = [t.get_text() for t in ax.texts]
            self.assertIn("05_virtual", texts)
            self.assertIn("17_copy_and_patch", texts)
            self.assertIn("at the template's time: 03_switch.hoisted, 08_expression_jit", texts)
            self.assertEqual(len(ax.lines), 3)  # the template's line and the two off it


class PythonRowTest(unittest.TestCase):
    def test_a_new_ops_cost_from_python_or_where_it_went(self):
        from cdl_report.sections.answer import python_once

        self.assertEqual(
            python_once({"new_ms": 61.3, "fresh_ms": 1242.0}, False),
            "61.3 ms a new op; a new process's first 1242 ms",
        )
        self.assertEqual(python_once({"new_ms": 61.3, "fresh_ms": None}, False), "61.3 ms a new op")
        self.assertEqual(python_once({"new_ms": None, "fresh_ms": None}, False), "–")
        # A quick run left the experiments, which time a new op from Python, to a full run.
        self.assertEqual(python_once({"new_ms": None, "fresh_ms": None}, True), "left to a full run")
