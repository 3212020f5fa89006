#!/usr/bin/env python3
"""The performance report: Markdown, PNG plots and tables, from result files only.

    reports/report.py RESULTS_DIR [--out DIR] [--readme strategies/README.md]

RESULTS_DIR holds what one run wrote (scripts/bench.sh, scripts/device_check.sh):
  bench.json        cdl_bench's Google Benchmark JSON (required)
  resources.json    each kernel's registers, stack and spills (reports/resources.py; optional)
  build_facts.json  what nvcc and NVRTC accept (cdl_build_facts; optional)
  repeat.json       a second run of some of the same benchmarks: the noise threshold (optional)
  jit_cache_disabled.json
                    the jit/ stages with CUDA_CACHE_DISABLE=1 (optional)
  profile.json      Nsight Compute's counters for a set of kernels (reports/profile.py; optional)
  python.json       the Python peers (bench/python: CuPy, Numba, cuda-python, PyCUDA), same records
                    (optional)
Each other device's run beside RESULTS_DIR (a sibling directory with a bench.json of another device,
as reports/reference/<device>/ and results/<device>/ hold them; or those --others names) gets a
section comparing the two (cdl_report/sections/devices.py).
Writes DIR/report.md and DIR/*.png (DIR defaults to RESULTS_DIR), each through a temporary
file and a rename, and prints a short table last. Every finding in the text is computed from
the numbers. A results file that is missing, malformed or foreign is an error (exit status 2)
and nothing is written; benchmarks that failed validation are listed first in the report, and
make the exit status 1.

The work is done by the package beside this file, cdl_report/ (its __init__.py maps its modules).
"""
import argparse
import os
import sys

from cdl_report.build import write_report
from cdl_report.document import WriteError, pow2
from cdl_report.results import Results, ResultsError
from cdl_report.sections.map import COPY_TARGET


def device_name(results):
    return results.bench.env.get("device", {}).get("name")


def siblings(results):
    """The runs of other devices beside this one; one that cannot be read is skipped, with a line."""
    parent = os.path.dirname(os.path.abspath(results.directory))
    out = []
    for d in sorted(os.listdir(parent)):
        path = os.path.join(parent, d)
        try:  # an entry can vanish between the listing and the look (another program's temporary file)
            if not os.path.isfile(os.path.join(path, "bench.json")) or os.path.samefile(
                path, results.directory
            ):
                continue
        except OSError:
            continue
        try:
            other = Results(path)
        except ResultsError as e:
            print(f"report: not comparing with {path}: {e}", file=sys.stderr)
            continue
        if device_name(other) != device_name(results):
            out.append(other)
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "results", help="directory with bench.json (and resources.json, build_facts.json, repeat.json)"
    )
    ap.add_argument("--out", help="where report.md and the plots go (default: the results directory)")
    ap.add_argument(
        "--readme", help="also regenerate the results table of this README (strategies/README.md)"
    )
    ap.add_argument(
        "--others",
        nargs="*",
        help=(
            "other devices' results directories to compare with (default: the sibling directories of "
            "RESULTS_DIR that hold another device's bench.json; none with an empty list)"
        ),
    )
    ap.add_argument(
        "--text-only",
        action="store_true",
        help="write the pages but draw no figure (their links are written, their files left as they are)",
    )
    args = ap.parse_args(argv[1:])
    try:
        results = Results(args.results)
        others = [Results(d) for d in args.others] if args.others is not None else siblings(results)
        path, found = write_report(results, args.out or args.results, args.readme, others, not args.text_only)
    except ImportError as e:
        if not (e.name or "").startswith("matplotlib"):
            raise
        print(
            f"report: matplotlib is missing for {sys.executable} ({e}); install python3-matplotlib",
            file=sys.stderr,
        )
        return 2
    except (ResultsError, WriteError) as e:
        print(f"report: {e}", file=sys.stderr)
        return 2
    print(f"report: {path}")
    print(f"\n{'strategy':28s} {'best form, map n=' + pow2(found['map'].get('n', 0)):>28s} {'of copy':>8s}")
    for s, (entry, frac) in sorted(found["map"].get("best", {}).items()):
        print(f"{s:28s} {entry:>28s} {frac:8.3f}{'' if frac >= COPY_TARGET else '  < ' + str(COPY_TARGET)}")
    if results.bench.errors:
        print(
            f"\nreport: {len(results.bench.errors)} benchmarks FAILED (listed at the top of the report)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
