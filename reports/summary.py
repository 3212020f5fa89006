#!/usr/bin/env python3
"""Short tables from a cdl_bench_map results file (Google Benchmark JSON).

    reports/summary.py results/<device>/map.json

Prints the copy floor, every map implementation at the largest n (k = 1) with its fraction of
the copy bandwidth, and the dispatch penalty: each strategy's time over the template functor's
at the same problem, for every k measured. Uses the standard library only.
"""
import json
import sys
from collections import defaultdict


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"summary: cannot read {path}: {e}")
    if not isinstance(doc, dict) or "benchmarks" not in doc or "context" not in doc:
        sys.exit(f"summary: {path} is not a Google Benchmark results file (no 'benchmarks'/'context')")
    return doc


def medians(doc):
    """run_name -> median aggregate row; errors are reported, never dropped silently."""
    rows, errors = {}, []
    for b in doc["benchmarks"]:
        if b.get("error_occurred"):
            errors.append(f"{b['run_name']}: {b.get('error_message')}")
        elif b.get("aggregate_name") == "median":
            rows[b["run_name"]] = b
    return rows, errors


def parse(run_name):
    """map/<entry>/<form>/<op>/<type>/n:N/k:K -> (entry, op, type, n, k)."""
    parts = run_name.split("/")
    entry = parts[1] + "/" + parts[2]
    fields = dict(p.split(":", 1) for p in parts if ":" in p)
    return entry, parts[3], parts[4], int(fields["n"]), int(fields["k"])


def main(path):
    doc = load(path)
    rows, errors = medians(doc)
    ctx = doc["context"]
    print(f"device: {ctx.get('device', '?')}  copy bandwidth: {float(ctx.get('copy_bandwidth_gbs', 0)):.0f} GB/s"
          f"  revision: {ctx.get('git_revision', '?')}")
    for e in errors:
        print(f"ERROR {e}")

    maps = {k: v for k, v in rows.items() if k.startswith("map/")}
    if not maps:
        sys.exit("summary: no map results in the file")
    by_problem = defaultdict(dict)  # (op, type, n, k) -> entry -> row
    for name, row in maps.items():
        entry, op, typ, n, k = parse(name)
        by_problem[(op, typ, n, k)][entry] = row

    n_max = max(n for (op, typ, n, k) in by_problem if typ == "f32" and k == 1)
    print(f"\nmap quadratic f32, n = {n_max} (2^{n_max.bit_length() - 1}), k = 1")
    print(f"{'strategy':40s} {'median us':>10s} {'cv %':>6s} {'GB/s':>8s} {'of copy':>8s}")
    for entry, row in sorted(by_problem[("quadratic", "f32", n_max, 1)].items()):
        cv = next((b["real_time"] for b in doc["benchmarks"]
                   if b["run_name"] == row["run_name"] and b.get("aggregate_name") == "cv"), float("nan"))
        print(f"{entry:40s} {row['real_time']:10.1f} {100 * cv:6.2f} {row['GB/s']:8.0f} {row['frac_copy']:8.3f}")

    print("\ndispatch penalty: time / 01_template_functor time (same form, op, n, k)")
    print(f"{'op':12s} {'n':>10s} {'k':>4s}  " + "  ".join(f"{e:>18s}" for e in
          ["04.symbol/scalar", "04.symbol/vec", "04.table/vec", "00_inline/vec"]))
    for (op, typ, n, k), entries in sorted(by_problem.items()):
        if n == n_max or typ != "f32":
            continue
        def ratio(e, form):
            base = entries.get(f"01_template_functor/{form}")
            row = entries.get(e)
            return f"{row['real_time'] / base['real_time']:18.2f}" if base and row else f"{'-':>18s}"
        print(f"{op:12s} {n:10d} {k:4d}  " + "  ".join([
            ratio("04_function_pointer.symbol/scalar", "scalar"), ratio("04_function_pointer.symbol/vec", "vec"),
            ratio("04_function_pointer.table/vec", "vec"), ratio("00_inline/vec", "vec")]))
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
