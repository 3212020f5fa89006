"""The report's flush section on the trimmed H100 results in fixture/: what the L2 flush leaves
behind, and what the held probe splits off a launch's time with no flush."""
import unittest

from helpers import FixtureTest, renamed


class FlushReportTest(FixtureTest):
    def test_the_flush_residue_is_shown(self):
        text = self.report()
        self.assertIn(
            "| a copy of 2^22 floats (16 MiB each way) | 13.4 µs | 12.1 µs | 15.9 µs | 1.32 |", text
        )
        self.assertIn("| an empty kernel | 6.7 µs | 3.0 µs | 3.1 µs | 1.00 (noise) |", text)

    def test_the_held_probe_splits_what_no_flush_adds_in_each_outcome(self):
        """With no flush, the events time the host queuing the launch too; the held probe (no flush,
        the GPU held while the host queues it) says how much of the difference that is."""

        def held_as(kind):
            def made(b):
                if b["run_name"].startswith("flush/") and f"/{kind}/" in b["run_name"] + "/":
                    yield renamed(b, f"/{kind}", "/held")

            return made

        self.add_rows(held_as("read"))  # held as fast as after the read flush: all of it the host's
        text = self.report()
        self.assertIn("| launch | no flush | no flush, the GPU held | read flush (the suite's) |", text)
        self.assertIn("| an empty kernel | 6.7 µs | 3.0 µs | 3.0 µs | 3.1 µs | 1.00 (noise) |", text)
        self.assertIn(
            "it takes 3.0 µs: its time after the read flush, within the noise. So the 3.7 µs more without"
            " a flush is the host queuing the launch while the events wait on an idle GPU, not the flush's"
            " absence",
            text,
        )
        self.assertIn("The copy, held the same way with no flush", text)

        self.setUp()
        self.add_rows(held_as("none"))  # held as slow as with nothing before it: none of it the host's
        text = self.report()
        self.assertIn(
            "it takes 6.7 µs: 2.21× its time after the read flush, beyond the noise. So the 3.7 µs more"
            " without a flush is the GPU's own, not the host queuing the launch",
            text,
        )

        def held_between(b):  # three quarters of no flush's times: beyond the noise of both
            for c in held_as("none")(b):
                c["real_time"] *= 0.75
                yield c

        self.setUp()
        self.add_rows(held_between)
        self.assertRegex(
            self.report(),
            r"So of the 3\.7 µs more without a flush, 1\.[67] µs is the host queuing the launch while the"
            r" events wait on an idle GPU, and the rest the GPU's own",
        )


if __name__ == "__main__":
    unittest.main()
