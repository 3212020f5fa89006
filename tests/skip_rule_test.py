#!/usr/bin/env python3
"""The GPU test programs' exit status, which ctest reads as skipped, failed or passed
(tests/gpu_test_main.cpp): 77 only where every test that ran skipped and none failed. Run on the
probe program (tests/skip_rule_probe.cpp), built with the same main.

    tests/skip_rule_test.py PROBE
"""
import subprocess
import sys
import unittest

PROBE = None


def status(filter_):
    return subprocess.run([PROBE, f"--gtest_filter={filter_}"], capture_output=True, text=True).returncode


class SkipRuleTest(unittest.TestCase):
    def test_every_test_skipped_is_a_skip(self):
        self.assertEqual(status("Probe.Skips*"), 77)

    def test_a_failure_is_a_failure_whatever_else_skipped(self):
        self.assertEqual(status("Probe.Fails"), 1)  # prints "[  PASSED  ] 0 tests" too
        self.assertEqual(status("Probe.Skips:Probe.Fails"), 1)
        self.assertEqual(status("*"), 1)

    def test_a_pass_beside_skips_is_a_pass(self):
        self.assertEqual(status("Probe.Passes:Probe.Skips"), 0)
        self.assertEqual(status("Probe.Passes"), 0)


if __name__ == "__main__":
    PROBE = sys.argv.pop(1)
    unittest.main()
