#!/usr/bin/env python3
"""Compares two results directories (two GPUs, two revisions, two drivers or compilers).

    reports/compare.py A B [--out FILE] [--threshold 0.03]

A and B are directories as scripts/bench.sh writes them (bench.json, and repeat.json for each run's
noise threshold). Writes the comparison (Markdown, and a plot beside it) to --out (default:
compare.md in B, never the working directory): every benchmark both ran, B's median over A's with a
Mann-Whitney U test on the repetitions, the dispatch penalties and fractions of copy of both,
and what only one side ran. Prints the findings' counts last.

Exit status: 0 when no benchmark changed beyond the threshold (a regression gate passes), 1 when
some did, 2 when a directory is missing, malformed or not cdl_bench's (nothing is written).

The work is done by cdl_report/compare.py.
"""
import argparse
import os
import sys

from cdl_report.compare import compare_runs, write
from cdl_report.document import WriteError
from cdl_report.results import Results, ResultsError


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="the first results directory (the baseline)")
    ap.add_argument("b", help="the second results directory")
    ap.add_argument("--out", help="the Markdown file to write (default: B/compare.md)")
    ap.add_argument(
        "--threshold",
        type=float,
        help="a change smaller than this fraction is no finding (default: the runs' own noise)",
    )
    args = ap.parse_args(argv[1:])
    try:
        a, b = Results(args.a), Results(args.b)
    except ResultsError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    args.out = args.out or os.path.join(args.b, "compare.md")
    c = compare_runs(a, b, args.threshold)
    try:
        slower, faster = write(a, b, c, args.out)
    except WriteError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    print(
        f"compare: {len(c['rows'])} benchmarks in both, threshold {c['threshold']:.1%}: {len(slower)} slower,"
        f" {len(faster)} faster in B; {len(c['only_a'])} only in A, {len(c['only_b'])} only in B ->"
        f" {args.out}"
    )
    return 1 if slower or faster else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
