"""A run that cannot decide says "not decided" where a finding would be (the quick mode's three
repetitions), and each rule that turns figures into words comes out every way it names: goals, the
surprises, break-even, the tiered streams, a size dependence's cause, ties on the first screen, and
the devices' unexplained moves."""
import re
import unittest

from helpers import FixtureTest

from cdl_report import document, queries, stats
from cdl_report.sections import answer, breakeven, devices, dispatch, tiered


def quick(doc):
    """A results file as the quick mode writes it: three repetitions a benchmark."""
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b.get("repetition_index", 0) < 3]
    doc["context"]["cdl_mode"] = "quick"


class QuickRunTest(FixtureTest):
    def test_no_ratio_the_test_leaves_undecided_is_worded_as_found(self):
        self.edit_results(quick)
        text = self.report()
        first = text.split("**Contents.**")[0]
        # the headline's ratios carry the ? the table keeps
        self.assertRegex(first, r"take \d+\.\d\d–\d+\.\d\d×\? the template's time")
        # no surprise is listed: the rules met ratios the test cannot decide
        self.assertIn("**The run's largest surprises: not decided.**", first)
        self.assertNotRegex(first, r"\n1\. \*\*")
        # the dispatch section's sentences keep the ? too
        self.assertRegex(text, r"function pointers and virtual calls take [0-9.–]+×\? the template's time")
        self.assertIn("Whether the size matters is not decided", text)
        # a full run of the same figures decides them
        self.fresh()
        full = self.report().split("**Contents.**")[0]
        self.assertNotIn("×?", full)
        self.assertIn("**The run's largest surprises** (each found by a rule over the figures):", full)

    def test_a_timed_claim_is_not_decided_and_the_others_keep_their_verdicts(self):
        from cdl_report.claims import verdicts

        def rows(text):
            return {
                m.group(1): m.group(2)
                for m in re.finditer(r"^\| ([A-E]\d) \|.*\| \*\*([a-z ]+)\*\* \|$", text, re.M)
            }

        full = rows(self.report())
        self.fresh()
        self.edit_results(quick)
        undecided = rows(self.report())
        timed = {c.id for c in verdicts.CLAIMS if c.timed}
        self.assertEqual(len(full), len(verdicts.CLAIMS))
        self.assertTrue(any(undecided[c] == "not decided" for c in timed))
        for cid, verdict in full.items():
            if cid in timed and verdict in ("holds", "does not hold", "depends"):
                self.assertEqual(undecided[cid], "not decided", cid)
            else:
                self.assertEqual(undecided[cid], verdict, cid)

    def test_the_tiered_streams_of_three_repetitions_are_not_decided(self):
        from test_report_tiered import TieredReportTest

        streams = {1: (1.0, 200.0, 1.1), 100: (100.0, 230.0, 99.0), 1000: (1000.0, 480.0, 470.0)}
        TieredReportTest.write_streams(self, streams, reps=3)
        text = self.report()
        self.assertIn("Against the better alone, tiered is not decided at any length", text)
        self.assertIn(
            "whether the jit alone beats the switch alone is not decided at 1, 100, 1000 launches",
            text.lower(),
        )
        self.assertIn(
            "A stream of 1 launch costs tiered 100 µs more than the switch alone, not decided", text
        )
        self.assertNotIn("less than both at 1000", text)
        # every length is undecided: there is no other length it could be said not to beat the switch at
        self.assertNotIn("and it does at no other", text)
        TieredReportTest.write_streams(self, streams, reps=5)
        text = self.report()
        self.assertIn("The JIT alone beats the switch alone from 1000 launches on", text)
        self.assertIn("less than both at 1000", text)


class GoalVerdictTest(unittest.TestCase):
    def test_every_outcome(self):
        five = [100.0, 100.1, 99.9, 100.2, 99.8]
        scaled = lambda r: [t * r for t in five]  # noqa: E731
        verdict = lambda ratio, reps, **kw: stats.goal_verdict(
            ratio, 1.5, 0.01, False, reps, **kw
        )  # noqa: E731
        self.assertEqual(verdict(1.2, (five, scaled(1.2))), "met")
        self.assertEqual(verdict(1.8, (five, scaled(1.8))), "missed")
        self.assertEqual(verdict(1.505, (five, scaled(1.505))), stats.WITHIN)
        self.assertEqual(verdict(1.2, (five[:3], scaled(1.2)[:3])), stats.NOT_DECIDED)
        # beyond the noise by the medians, but the repetitions overlap the goal's: not told apart
        spread = [150.0 * f for f in (0.8, 0.9, 1.0, 1.1, 1.2)]
        spread[2] = 100.0 * 1.3
        self.assertEqual(verdict(1.3, (five, spread)), stats.NOT_TOLD)
        # against a constant (no second sample): by its side, unless the run cannot decide at all
        self.assertEqual(stats.goal_verdict(0.9, 0.8, 0.01), "met")
        self.assertEqual(stats.goal_verdict(0.9, 0.8, 0.01, decidable=False), stats.NOT_DECIDED)


class TieRuleTest(unittest.TestCase):
    def test_a_tie_within_the_noise_goes_to_the_first_in_order_and_a_gap_to_the_cheaper(self):
        ways = ["13_precompiled_plugin", "13_precompiled_plugin.lto"]
        self.assertEqual(answer.first_within_noise(ways, [1.004, 1.0], 0.01), ways[0])
        self.assertEqual(answer.first_within_noise(ways, [1.05, 1.0], 0.01), ways[1])

    def test_the_templates_speed_is_no_difference_or_faster_by_the_test(self):
        self.assertTrue(answer.at_speed((1.004, False)))
        self.assertTrue(answer.at_speed((0.9, True)))
        self.assertFalse(answer.at_speed((1.1, True)))
        self.assertFalse(answer.at_speed((0.9, None)))  # faster by the digits, not decided
        self.assertFalse(answer.at_speed((1.02, None)))


class TieredRuleTest(unittest.TestCase):
    def test_less_in_every_outcome(self):
        row = lambda t, n=5: {"median": t, "reps": [t * (1 + 0.001 * i) for i in range(n)]}  # noqa: E731
        self.assertTrue(tiered.less(row(100), row(50), 0.01))
        self.assertFalse(tiered.less(row(100), row(150), 0.01))
        self.assertFalse(tiered.less(row(100), row(100.5), 0.01))  # within the noise
        self.assertIsNone(tiered.less(row(100, 3), row(50, 3), 0.01))


class SizeCauseTest(unittest.TestCase):
    def test_a_move_is_per_launch_waves_or_not_explained_by_its_parts(self):
        n, other = 2**24, 2**22
        same = dispatch.excess_share(19.3, 18.1, n, other)
        scaled = dispatch.excess_share(400.0, 100.0, n, other)
        self.assertLess(abs(same), dispatch.PER_LAUNCH)
        self.assertAlmostEqual(scaled, 1.0)
        self.assertIsNone(dispatch.excess_share(-0.1, 0.3, n, other))
        # The same excess, 0.3 µs at both sizes, within the noise of a 34 µs template: no cost at all.
        self.assertIsNotNone(dispatch.excess_share(0.3, 0.3, n, other))
        self.assertIsNone(dispatch.excess_share(0.3, 0.3, n, other, (0.01 * 130.0, 0.01 * 34.0)))
        base = (3.88, 0.97)
        self.assertEqual(dispatch.cause(same, None, None, base), "per launch")
        self.assertEqual(dispatch.cause(scaled, 6.21, 1.55, base), "waves")
        self.assertEqual(dispatch.cause(scaled, 3.88, 0.97, base), "not explained")
        self.assertEqual(dispatch.cause(None, None, None, base), "not explained")


class BreakEvenWordsTest(unittest.TestCase):
    def words(self, differs):
        rows = [("quadratic", k, "16_interpreter/vec", 1.5, d) for k, d in zip((1, 16, 256), differs)]
        found = {
            "rows": rows,
            "breakeven": {(op, k, name): 1e6 for op, k, _, _, d in rows if d for _, name in breakeven.LABELS},
        }
        doc = document.Parts()
        doc.detail = lambda heading, text, pointer: None
        doc.figure = lambda *a, **kw: None
        breakeven.plots.jit_breakeven = lambda *a, **kw: None
        breakeven.add(doc, {"n": 2**24}, found)
        return "".join(doc)

    def test_every_outcome(self):
        self.assertIn("Not decided in any of the 3 (op, k) pairs", self.words([None, None, None]))
        mixed = self.words([True, False, None])
        self.assertIn(
            "No break-even (the times within the noise, or the interpreter faster) in 1 of 3", mixed
        )
        self.assertIn("not decided in 1", mixed)
        self.assertIn("its compile is repaid after", mixed)
        self.assertIn("A break-even in every (op, k) pair the test decides (3 of 3)", self.words([True] * 3))


class DevicesUnexplainedTest(unittest.TestCase):
    def test_the_largest_moves_at_the_top_k_that_no_profile_of_both_covers(self):
        key = lambda op, e: (op, 256, e)  # noqa: E731
        moved = [
            (0.14, key("exp_sin_cos", "04_function_pointer.symbol/vec")),
            (0.12, key("sine", "05_virtual/vec")),
        ]
        by_k = [(16, [], [(0.5, ("square", 16, "03_switch/vec"))]), (256, [], moved)]
        self.assertEqual(devices.unexplained(by_k, (None, None)), sorted(moved, reverse=True))

        def profile(entries):
            return {
                "kernels": [{"entry": e, "problem": "map op=sine type=f32 n=16777216 k=256"} for e in entries]
            }

        both = profile(["05_virtual/vec", queries.BASE])
        self.assertEqual(devices.unexplained(by_k, (both, both)), moved[:1])
        self.assertEqual(
            devices.unexplained(by_k, (both, profile([queries.BASE]))), sorted(moved, reverse=True)
        )


if __name__ == "__main__":
    unittest.main()
