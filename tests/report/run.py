#!/usr/bin/env python3
"""Runs the report tests (every test_*.py here) a test per process, as many at once as there are
CPUs: most of them write a whole report from the fixture, seconds each, one after another.

    tests/report/run.py [-k PATTERN]

Prints each test's outcome as it ends, then every failure and error in full, as unittest does;
exit status 1 when any test failed or raised, or when none was found.
"""
import multiprocessing
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def discover(pattern):
    def flat(suite):
        for t in suite:
            yield from flat(t) if isinstance(t, unittest.TestSuite) else [t]

    return [t for t in flat(unittest.defaultTestLoader.discover(HERE)) if pattern in t.id()]


TESTS = []  # discovered in the parent; the forked workers run them by index


def run_one(index):
    """(id, outcome, the failure's text, seconds) for one test, run in this worker process (a
    module that failed to import is a test that raises its ImportError)."""
    test, start = TESTS[index], time.perf_counter()
    result = unittest.TestResult()
    test.run(result)
    for outcome, found in (("ERROR", result.errors), ("FAIL", result.failures)):
        if found:
            return test.id(), outcome, found[0][1], time.perf_counter() - start
    outcome = "skipped" if result.skipped else "ok"
    return test.id(), outcome, "", time.perf_counter() - start


def main(argv):
    pattern = argv[argv.index("-k") + 1] if "-k" in argv[:-1] else ""
    sys.path.insert(0, HERE)
    TESTS.extend(discover(pattern))
    if not TESTS:
        print(f"report tests: none found under {HERE} matching '{pattern}'", file=sys.stderr)
        return 1
    start, bad = time.perf_counter(), []
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        for test_id, outcome, text, seconds in pool.imap_unordered(run_one, range(len(TESTS))):
            print(f"{test_id} ... {outcome} ({seconds:.1f} s)", flush=True)
            if text:
                bad.append((outcome, test_id, text))
    for outcome, test_id, text in bad:
        print(f"\n{'=' * 70}\n{outcome}: {test_id}\n{'-' * 70}\n{text}")
    print(f"\nRan {len(TESTS)} tests in {time.perf_counter() - start:.1f} s: {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
