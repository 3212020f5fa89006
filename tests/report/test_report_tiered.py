"""The report's tiered streams (strategy 10) on the trimmed H100 results in fixture/, from a tiered.json
written beside them: the tables, the break-even, the plot and the one-launch rule."""
import json
import os
import unittest

from helpers import FixtureTest, repeated


class TieredReportTest(FixtureTest):
    def write_streams(self, totals, patched=False, own=None, parts=None, reps=5):
        """tiered.json beside the results: each family's streams, totals[launches] = (the cheap way,
        the JIT alone, tiered) in ms; the user's op's three a tenth of them (with `patched`, 17 alone
        too, at the interpreter's times `patched`). own[launches]: the launch tiered moved on (else
        -1 below 100 launches, 40 from 100); parts[launches]: the user's op's tiers' counters of 17's
        tier, (its first launch, when it was ready in ms). Each stream timed `reps` times."""
        with open(os.path.join(self.results, "bench.json")) as f:
            context = json.load(f)["context"]
        # A user's op: 16 alone, 08 alone, the three tiers (the same figures, a tenth of them).
        families = (
            ("03_switch", "06_nvrtc_jit", "10_tiered_dispatch"),
            ("16_interpreter", "08_expression_jit", "10_tiered_dispatch.expression")
            + (("17_copy_and_patch",) if patched else ()),
        )
        benchmarks = []
        for launches, times, modes in [(L, ts, families[0]) for L, ts in totals.items()] + [
            (L, [t / 10 for t in ts] + [ts[0] / 10 * float(patched)], families[1]) for L, ts in totals.items()
        ]:
            for mode, ms in zip(modes, times):
                name = (
                    f"tiered/{mode}/vec/op:quadratic/type:f32/n:16777216/k:1/launches:{launches}"
                    f"/iterations:1/repeats:{reps}/manual_time"
                )
                entry = {
                    "time_unit": "ms",
                    "first_own_kernel_launch": (own or {}).get(launches, -1 if launches < 100 else 40),
                }
                if parts and mode == "10_tiered_dispatch.expression":
                    entry["first_patched_launch"], entry["patched_ready_ms"] = parts[launches]
                benchmarks.extend(repeated(entry, name, ms, reps))
        with open(os.path.join(self.results, "tiered.json"), "w") as f:
            json.dump({"context": context, "benchmarks": benchmarks}, f)

    def test_the_tiered_streams_get_a_table_a_break_even_and_a_plot(self):
        self.write_streams(
            {
                1: (1.0, 200.0, 1.1),
                10: (10.0, 205.0, 11.0),
                100: (100.0, 230.0, 99.0),
                1000: (1000.0, 480.0, 470.0),
            }
        )
        text = self.report(figures=True)
        self.assertIn("## Tiered dispatch", text)
        self.assertIn(
            "| 10 | 10.00 ms | 205.00 ms | 11.00 ms | 1.10 | never (the stream ended first) |", text
        )
        self.assertIn("| 100 | 100.00 ms | 230.00 ms | 99.00 ms | (0.99) | launch 41 |", text)
        self.assertIn("The JIT alone beats the switch alone from 1000 launches on", text)
        self.assertIn(
            "Tiered takes no more than the better of the two alone (no difference beyond the noise", text
        )
        self.assertIn("launches, less than both at 1000; at most 1.10× the better (1 launch).", text)
        self.assertIn("A stream of 1 launch costs tiered 100 µs more than the switch alone, not", text)
        self.assertIn("switch alone, not timed part by part in this run.", text)
        self.assertTrue(os.path.exists(os.path.join(self.out, "tiered_dispatch.png")))
        # The three tiers: their own table, findings and plot.
        expression = text[text.index("**A user's op.**") :]
        self.assertIn("| 100 | 10.00 ms | 23.00 ms | 9.90 ms | (0.99) | launch 41 |", expression)
        self.assertIn("The JIT alone beats the interpreter alone from 1000 launches on", expression)
        self.assertIn(
            "The three tiers take no more than the better of the two alone (no difference beyond the noise",
            expression,
        )
        self.assertIn(
            "A stream of 1 launch costs the three tiers 10 µs more than the interpreter alone", expression
        )
        self.assertTrue(os.path.exists(os.path.join(self.out, "tiered_expression.png")))

    def test_the_tiers_of_a_run_with_17_alone_are_said_to_have_17s_tier(self):
        """The user's op's tiers are described as the run's code had them: 17's stream alone came with
        17's tier, so a run that has it is told with 17 between the interpreter and 08's optimised tier."""
        totals = {1: (1.0, 200.0, 1.1), 1000: (1000.0, 480.0, 470.0)}
        self.write_streams(totals)
        self.assertIn("then 08's baseline tier, then its optimised tier", self.report())
        self.write_streams(totals, patched=True)
        text = self.report()
        self.assertIn("then 17's patched kernel, or 08's baseline tier where 17 refuses the op", text)
        self.assertIn("and 17's patched kernel alone (`17_copy_and_patch`", text)

    def test_17_alone_is_a_rival_of_the_tiers_where_the_run_has_its_stream(self):
        """17's patched kernel alone is one of the ways the tiers are set against: a stream where it
        beats them says so (the best of three), and one where it is absent leaves two."""
        self.write_streams({1: (1.0, 200.0, 1.1), 100: (100.0, 230.0, 99.0)}, patched=0.5)
        expression = self.report().split("**A user's op.**")[1]
        self.assertIn("| launches | interpreter alone | JIT alone | 17 alone | three tiers |", expression)
        self.assertIn("| 100 | 10.00 ms | 23.00 ms | 5.00 ms | 9.90 ms | 1.98 | launch 41 |", expression)
        self.assertIn(
            "The three tiers take no more than the best of the three alone (no difference beyond the noise",
            expression,
        )
        self.assertIn("less than all three at none; at most 2.20× the best (1 launch).", expression)

    def test_the_launch_that_validates_a_stream_is_not_one_of_its_launches(self):
        """A stream's own kernel counted from the launch after it (the one that validates the stream,
        as files before d0a6f24 have it) is "never": the stream ended first."""
        self.write_streams({1: (1.0, 200.0, 1.1), 100: (100.0, 230.0, 99.0)}, own={1: -1, 100: 100})
        self.assertIn(
            "| 100 | 100.00 ms | 230.00 ms | 99.00 ms | (0.99) | never (the stream ended first) |",
            self.report(),
        )

    def test_the_tiers_parts_are_a_column_where_the_run_counted_them(self):
        """Where the run counted when 17's kernel was ready and the tiers' first launch on it, the user's
        op's table says so in a column of its own; a tier never reached is "never", a time not yet
        taken is left out."""
        self.write_streams(
            {1: (1.0, 200.0, 1.1), 10: (10.0, 205.0, 11.0)}, patched=0.5, parts={1: (-1, -1.0), 10: (1, 0.6)}
        )
        expression = self.report().split("**A user's op.**")[1]
        self.assertIn("| three tiers / the best alone | its own kernel from | 17's kernel from |", expression)
        self.assertIn("| 2.20 | never (the stream ended first) | launch 2 (ready at 0.60 ms) |", expression)
        self.assertIn("| never (the stream ended first) | never (the stream ended first) |\n", expression)
        self.write_streams({1: (1.0, 200.0, 1.1), 10: (10.0, 205.0, 11.0)}, patched=0.5)
        self.assertNotIn("17's kernel from", self.report())

    def test_a_one_launch_stream_is_said_to_cost_more_the_same_or_less_by_the_noise(self):
        for tiered_ms, said in (
            (1.1, "costs tiered 100 µs more than the switch alone, not timed part by part in this run."),
            (1.0001, "costs tiered the same as the switch alone (no difference by the test)."),
            (0.9, "costs tiered 100 µs less than the switch alone, not timed part by part in this run."),
        ):
            self.fresh()
            self.write_streams({1: (1.0, 200.0, tiered_ms), 1000: (1000.0, 480.0, 470.0)})
            self.assertIn(f"A stream of 1 launch {said}", self.report())


if __name__ == "__main__":
    unittest.main()
