#!/usr/bin/env python3
"""Merges cdl_bench results files of one revision on one device, run in parts, into one.

    reports/merge.py OUT.json PART.json [PART.json ...]

A full suite can be run in parts (cdl_bench --benchmark_filter=...), when one run would not fit in
the time a machine is lent for. Each part measures its own copy floor, and each benchmark's
fraction of copy is against its own part's floor; the merged file keeps the first part's context
(its floor is the report's) and lists every part, with its date, floor and benchmark count, in
`cdl_parts`; the clocks at the end are the last part's. A benchmark in several parts is taken from
the last one that has it, all its repetitions together. A part that was interrupted (cdl_bench's
bench.interrupted.json) marks the benchmarks it did not reach with the error "interrupted": they
are not results, so they are taken from no part, and those no part ran are listed in the context
(`cdl_not_run`), for the report to name. Parts of another revision or device are refused (exit
status 2), and the output is written whole or not at all.
"""
import json
import os
import sys

from cdl_report.document import WriteError, write_json
from cdl_report.results import Bench, ResultsError, read_json

INTERRUPTED = "interrupted"  # cdl_bench's error for the benchmarks an interrupted run did not reach


def merge(paths):
    docs = []
    for path in paths:
        doc = read_json(path, "cdl_bench results")
        Bench(path, doc)  # refuses what is not a cdl_bench results file
        docs.append(doc)
    first = docs[0]["context"]
    for path, doc in zip(paths[1:], docs[1:]):
        for key in ("git_revision", "device"):
            if doc["context"].get(key) != first.get(key):
                raise ResultsError(
                    f"{path}: {key} {doc['context'].get(key)!r} is not the first part's {first.get(key)!r}"
                )
    by_name, not_reached = {}, []
    for doc in docs:
        parts = {}
        for b in doc["benchmarks"]:
            parts.setdefault(b["run_name"], []).append(b)
        reached = {
            n: bs for n, bs in parts.items() if not any(b.get("error_message") == INTERRUPTED for b in bs)
        }
        not_reached += [n for n in parts if n not in reached]
        by_name.update(reached)  # a later part's benchmark replaces an earlier one's, whole
    context = dict(first)
    context.pop("cdl_part", None)  # the merged file is no one part (cdl_bench --cdl_part)
    context["cdl_parts"] = json.dumps(
        [
            {
                "file": os.path.basename(p),
                "date": d["context"].get("date"),
                "copy_bandwidth_gbs": float(d["context"]["copy_bandwidth_gbs"]),
                "benchmarks": len(
                    {b["run_name"] for b in d["benchmarks"] if b.get("error_message") != INTERRUPTED}
                ),
            }
            for p, d in zip(paths, docs)
        ]
    )
    context["cdl_not_run"] = json.dumps(sorted(set(not_reached) - set(by_name)))
    if "cdl_clocks_end" in docs[-1]["context"]:
        context["cdl_clocks_end"] = docs[-1]["context"]["cdl_clocks_end"]
    return {"context": context, "benchmarks": [b for entries in by_name.values() for b in entries]}


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        doc = merge(argv[2:])
    except ResultsError as e:
        print(f"merge: {e}", file=sys.stderr)
        return 2
    try:
        write_json(argv[1], doc)
    except WriteError as e:
        print(f"merge: {e}", file=sys.stderr)
        return 2
    count = len({b["run_name"] for b in doc["benchmarks"]})
    print(f"merge: {count} benchmarks from {len(argv) - 2} parts -> {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
