"""The rules a sceptic reads the report by (issue 62), each in every outcome: a fraction of copy is a
finding only past 8× the L2 and at or below the copy; compile costs are compared by their spreads
(a route named alone only where the spreads do not overlap); where a grouping's time goes, from its
parts; the interpreter's op-length goal; a benchmark of one repetition; renamed results."""
import json
import os
import re
import unittest

from helpers import FixtureTest, renamed, repeated

from cdl_report import document, stats
from cdl_report.results import Bench, current_name
from cdl_report.sections import answer, jit_stages, map as map_section, oplength, tasks

L2 = 50 * 2**20


class BandwidthRuleTest(FixtureTest):
    def test_a_fraction_of_copy_is_a_finding_only_past_eight_l2s_and_at_or_below_the_copy(self):
        past, under = document.PAST_L2 * L2, document.PAST_L2 * L2 - 1
        self.assertEqual(document.of_copy(0.987, past, L2), "0.987")
        self.assertEqual(document.of_copy(0.987, under, L2), "(0.987†)")
        self.assertEqual(document.of_copy(1.036, past, L2), "(1.036†)")
        self.assertEqual(document.of_copy(0.5, past, 0), "(0.500†)")  # no L2 known: no finding

    def test_the_map_makes_no_bandwidth_statement_under_eight_l2s(self):
        def small_l2(doc):
            env = json.loads(doc["context"]["cdl_environment"])
            env["device"]["l2_bytes"] = 2**40  # no map of the fixture is 8x past this
            doc["context"]["cdl_environment"] = json.dumps(env)

        self.edit_results(small_l2)
        text = self.report()
        self.assertIn("this run makes no bandwidth statement", text)
        self.assertNotIn("**Best form per strategy.**", text)
        self.assertNotIn("**An element a thread reaches", text)


def interleaved_row(**p50):
    """A results file's interleaved benchmark: each route's p10, p50, p90 as p50 * (0.9, 1, 1.1)."""
    row = {
        "run_name": "jit/interleaved/new_op/map/op:quadratic/type:f32/n:1048576/iterations:1/manual_time",
        "run_type": "iteration",
        "real_time": 1.0,
        "time_unit": "ms",
    }
    for route, ms in p50.items():
        row.update(
            {
                f"{route}_p10_ms": 0.9 * ms,
                f"{route}_p50_ms": ms,
                f"{route}_p90_ms": 1.1 * ms,
                f"{route}_x_floor_p50": ms / 30,
            }
        )
    return row


class CompileSpreadTest(FixtureTest):
    def bench_with(self, row):
        with open(os.path.join(self.results, "bench.json")) as f:
            doc = json.load(f)
        doc["benchmarks"].append(row)
        return Bench("bench.json", doc)

    def test_one_repetition_is_its_own_median_and_its_counters_are_read(self):
        b = self.bench_with(interleaved_row(**{"06": 40.0, "08": 20.0}))
        routes = jit_stages.interleaved(b.stages)
        self.assertEqual(routes["06"], {"p10": 36.0, "p50": 40.0, "p90": 44.0, "x_floor": 40.0 / 30})
        self.assertEqual(jit_stages.spread(routes["08"]), "20.00 ms (p10–p90 18.00 ms–22.00 ms)")

    def test_a_route_is_named_alone_only_where_the_spreads_do_not_overlap(self):
        apart, close = {"p10": 9.0, "p50": 10.0, "p90": 11.0}, {"p10": 10.5, "p50": 11.5, "p90": 12.5}
        far = {"p10": 20.0, "p50": 22.0, "p90": 24.0}
        self.assertTrue(jit_stages.overlap(apart, close))
        self.assertFalse(jit_stages.overlap(apart, far))
        r = {
            w: {64: {"quadratic": (1.0, False)}} for w in ("08_expression_jit", "07_jit_lto", "06_nvrtc_jit")
        }
        ms = {"08_expression_jit": 10.0, "07_jit_lto": 11.5, "06_nvrtc_jit": 22.0}
        spreads = {"08_expression_jit": apart, "07_jit_lto": close, "06_nvrtc_jit": far}
        either = answer.choose(list(ms), r, 64, ms, 0.01, spreads)
        self.assertEqual(either, ["08_expression_jit", "07_jit_lto"])
        spreads["07_jit_lto"] = far
        self.assertEqual(answer.choose(list(ms), r, 64, ms, 0.01, spreads), ["08_expression_jit"])

    def test_the_decision_table_says_either_where_the_spreads_overlap(self):
        self.edit_results(
            lambda doc: doc["benchmarks"].append(
                interleaved_row(
                    **{
                        "06": 23.0,
                        "07": 40.0,
                        "08": 22.0,
                        "08_baseline": 15.0,
                        "16": 0.1,
                        "one_line_kernel": 30.0,
                    }
                )
            )
        )
        screen = self.report().split("\n## ")[0]
        row = next(r for r in screen.splitlines() if r.startswith("| written by a user at run time |"))
        self.assertIn(
            "`08_expression_jit` or `06_nvrtc_jit`: their new ops' costs overlap within their spreads", row
        )
        self.assertIn("`06_nvrtc_jit` 23.00 ms (p10–p90 20.70 ms–25.30 ms)", row)


class GroupingPartsTest(FixtureTest):
    def test_where_a_grouping_goes_is_computed_from_its_parts(self):
        one = {
            "grouped": 400.0,
            "through_index": 100.0,
            "in_op_order": 140.0,
            "sort": 300.0,
            "contiguous": 80.0,
            "scatter": 60.0,
            "switch": 80.0,
        }
        spread = {
            "grouped": 1400.0,
            "through_index": 1100.0,
            "in_op_order": 760.0,
            "sort": 330.0,
            "contiguous": 180.0,
            "scatter": 580.0,
            "switch": 330.0,
        }
        text = tasks.parts_text({("uniform", 1): one, ("random", 32): spread})
        self.assertIn("the sort takes 300.0 µs (75%)", text)
        self.assertIn("the kernels through the index grows most", text)
        self.assertIn("that growth is the scattered reads and writes", text)
        # The other outcome: the sort grows most.
        spread.update(sort=1200.0, through_index=150.0, grouped=1350.0)
        text = tasks.parts_text({("uniform", 1): one, ("random", 32): spread})
        self.assertIn("the sort grows most", text)
        self.assertNotIn("scattered reads and writes", text)


class OpLengthGoalTest(FixtureTest):
    def goal_text(self, ratio, noise=0.01, patched=None, reps=5):
        """The section's text where the interpreter takes `ratio` × 08's kernel at k = 3 and, given
        `patched`, copy-and-patch (17's scalar form) that × 08's at k = 1, each `reps` times."""

        def add_sweep(doc):
            base = next(
                b
                for b in doc["benchmarks"]
                if b["run_name"].startswith("map/01_template_functor/vec/")
                and b.get("aggregate_name") == "median"
            )
            rows = [("08_expression_jit/vec", 3, 100.0), ("16_interpreter/vec", 3, 100.0 * ratio)]
            if patched is not None:
                rows += [
                    ("08_expression_jit/vec", 1, 100.0),
                    ("17_copy_and_patch/vec", 1, 100.0 * patched),
                ]
            for e, k, t in rows:
                name = f"oplength/{e}/steps:30/type:f32/n:16777216/k:{k}/iterations:10"
                doc["benchmarks"].extend(repeated(base, name, t, reps))

        self.fresh()
        self.edit_results(add_sweep)
        with open(os.path.join(self.results, "bench.json")) as f:
            b = Bench("bench.json", json.load(f))

        section = document.Parts()  # the section's text, without the page around it
        oplength.add(section, oplength.find(b, noise))
        return "".join(section)

    def test_the_goal_in_each_outcome(self):
        self.assertIn("is met", self.goal_text(2.5))
        self.assertIn("is missed", self.goal_text(3.5))
        self.assertIn("within the noise of it", self.goal_text(3.01))
        # three repetitions against three: the U test cannot decide, so neither met nor missed is said
        self.assertIn(
            "2.50×? 08's kernel (k = 3) over k = 3: the goal of at most 3× at every k is not decided",
            self.goal_text(2.5, reps=3),
        )
        self.assertIn("is not decided", self.goal_text(3.5, reps=3))

    def test_copy_and_patch_has_its_column_and_its_goal_only_where_the_run_has_it(self):
        without = self.goal_text(2.5)
        self.assertNotIn("17 × 08", without)
        self.assertNotIn("Copy-and-patch takes", without)
        self.assertIn("| 17 × 08 |", self.goal_text(2.5, patched=1.2))
        self.assertIn(
            "Copy-and-patch takes at most 1.20× 08's kernel (an op of 30 steps",
            self.goal_text(2.5, patched=1.2),
        )
        self.assertIn("at most 1.25× in every cell is met", self.goal_text(2.5, patched=1.2))
        self.assertIn("at most 1.25× in every cell is missed", self.goal_text(2.5, patched=2.0))


class SweepGoalsTest(FixtureTest):
    def goals(self, ratios, noise=0.01):
        """The op-length section's text where 17 takes ratios[op] × the template at every k of the
        dispatch sweep (its rows copies of the template's, scaled), for the ops given."""

        def add_17(doc):
            for b in list(doc["benchmarks"]):
                m = re.match(r"map/01_template_functor/vec/op:(\w+)/(.*/k:.*)", b["run_name"])
                if m and m.group(1) in ratios:
                    c = renamed(b, "01_template_functor", "17_copy_and_patch")
                    c["real_time"] *= ratios[m.group(1)]
                    doc["benchmarks"].append(c)

        self.fresh()
        self.edit_results(add_17)
        with open(os.path.join(self.results, "bench.json")) as f:
            b = Bench("bench.json", json.load(f))
        found = oplength.find(b, noise) or {"ratios": {}, "goal": {}, "sweep": oplength.sweep_goals(b, noise)}
        section = document.Parts()
        oplength.add(section, found)
        return "".join(section), b

    def test_each_goal_in_each_outcome_and_the_refused_ops_named(self):
        _, b = self.goals({})
        ops = sorted({f["op"] for f, es in b.select("map", type="f32") if "01_template_functor/vec" in es})
        every = {op: 1.2 for op in ops}
        text, _ = self.goals(every)
        self.assertIn("1.20× the template for quadratic (at most 1.3×: met)", text)
        self.assertIn("for every op of the catalogue is met", text)
        text, _ = self.goals({**every, "quadratic": 1.4})
        self.assertIn("for quadratic (at most 1.3×: missed)", text)
        self.assertIn("for every op of the catalogue is missed", text)
        text, _ = self.goals({**every, "quadratic": 1.301})
        self.assertIn("within the noise of it", text)
        self.assertIn("for every op of the catalogue is within the noise of it", text)
        some = dict(list(every.items())[:1])
        text, _ = self.goals(some)
        refused = [op for op in ops if op not in some]
        self.assertIn(f"it refuses {', '.join(refused)}", text)
        self.assertIn("catalogue is missed.", text)
        self.assertNotIn("In the dispatch sweep", self.goals({})[0])


class CrowdedModuleRuleTest(unittest.TestCase):
    """The crowded module is said to set the occupancy only where its kernel has fewer blocks per SM."""

    def text(self, crowded_blocks, own_blocks=8):
        def kernel(registers, blocks):
            return {"registers": registers, "blocks_per_sm": blocks, "occupancy": blocks / 8}

        section = document.Parts()
        section.detail = lambda heading, text, pointer: section.add(pointer)
        map_section.explain_scalar(
            section,
            {
                "05_virtual.crowded/scalar": (0.5, kernel(43, crowded_blocks)),
                "05_virtual/scalar": (0.7, kernel(32, own_blocks)),
            },
        )
        return "".join(section)

    def test_fewer_the_same_and_more_blocks(self):
        self.assertIn("What else the module held set the registers, and so the occupancy.", self.text(5))
        same = self.text(8)
        self.assertIn("the same blocks per SM, so not the occupancy", same)
        self.assertNotIn("What else the module held", same)
        more = self.text(8, own_blocks=5)
        self.assertIn("more blocks per SM than for the map alone", more)
        self.assertNotIn("What else the module held", more)


class RenamedTest(FixtureTest):
    def test_older_names_read_as_todays(self):
        self.assertEqual(
            current_name("map/06_nvrtc_jit.fast/vec/op:sine"), "map/06_nvrtc_jit.fast_compile/vec/op:sine"
        )
        self.assertEqual(current_name("jit/compile/06_fast/new_op/x"), "jit/compile/06_fast_compile/new_op/x")
        self.assertEqual(current_name("map/06_nvrtc_jit/vec"), "map/06_nvrtc_jit/vec")


class PythonTimingTest(FixtureTest):
    def test_every_table_divides_by_one_baseline_and_names_the_event_pair_and_host_time(self):
        def timed(doc):
            doc["cdl_python"]["systems"]["cupy"]["event_gap_us"] = 1.25
            for b in doc["benchmarks"]:
                if b.get("aggregate_name") == "median":
                    b["host_us"] = 12.5

        self.edit_results(timed, "python.json")
        text = self.report()
        self.assertIn("an event pair with nothing between took 1.2 µs (CuPy)", text)
        self.assertIn(
            "| peer | median | of copy | time / C++ `01_template_functor/vec` | host per call |", text
        )
        self.assertIn("12.5 µs", text)
        self.assertNotIn("time / C++ `01_template_functor/scalar`", text)  # one baseline, where it exists

    def test_an_older_python_json_says_it_has_no_event_pair_figure(self):
        self.assertIn("does not say what an event pair alone takes", self.report())


class GoalRuleTest(FixtureTest):
    def test_a_goal_within_the_noise_is_neither_met_nor_missed(self):
        # The GEMM goal of 0.85 of cuBLAS: 0.8506 and 0.8476 lie within a 1 % noise of it.
        for value in (0.8506, 0.8476):
            self.assertEqual(
                stats.goal_verdict(value, 0.85, 0.01), "within the noise of it: neither met nor missed"
            )
        self.assertEqual(stats.goal_verdict(0.90, 0.85, 0.01), "met")
        self.assertEqual(stats.goal_verdict(0.80, 0.85, 0.01), "missed")
        self.assertEqual(stats.goal_verdict(2.5, 3.0, 0.01, at_least=False), "met")  # at most 3x
        self.assertEqual(stats.goal_verdict(3.5, 3.0, 0.01, at_least=False), "missed")


if __name__ == "__main__":
    unittest.main()
