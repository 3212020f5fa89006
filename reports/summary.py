#!/usr/bin/env python3
"""Short tables from a cdl_bench results file (Google Benchmark JSON).

    reports/summary.py results/<device>/bench.json

Prints the copy floor; the memory-bound map at its largest n with each implementation's
fraction of the copy bandwidth; for every problem of every workload the fastest and slowest
implementation and their ratio; and the dispatch penalty over k (each strategy's time over the
template functor's); the run-time strategies' compile, link, load and cache times. Standard library only; errors in the file are printed and make the exit
status non-zero.
"""
import json
import sys
from collections import defaultdict

GB_SUFFIXES = ("min_time:", "repeats:", "manual_time", "real_time", "iterations:")


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"summary: cannot read {path}: {e}")
    if not isinstance(doc, dict) or "benchmarks" not in doc or "context" not in doc:
        sys.exit(f"summary: {path} is not a Google Benchmark results file (no 'benchmarks'/'context')")
    return doc


def parse(run_name):
    """workload/strategy[.variant]/form/key:value/... -> (workload, entry, {key: value})."""
    parts = [p for p in run_name.split("/") if not p.startswith(GB_SUFFIXES)]
    fields = dict(p.split(":", 1) if ":" in p else ("shape", p) for p in parts[3:])  # e.g. 4096x4096x4096
    return parts[0], parts[1] + "/" + parts[2], fields


def rows_of(doc):
    """(workload, problem key) -> entry -> {median, cv, row}; plus the error lines."""
    table, errors = defaultdict(dict), []
    cv = {b["run_name"]: b["real_time"] for b in doc["benchmarks"] if b.get("aggregate_name") == "cv"}
    for b in doc["benchmarks"]:
        if b.get("error_occurred"):
            errors.append(f"{b['run_name']}: {b.get('error_message')}")
        elif b.get("aggregate_name") == "median" and not b["run_name"].startswith(("copy/", "jit/")):
            workload, entry, fields = parse(b["run_name"])
            key = (workload, tuple(sorted(fields.items())))
            table[key][entry] = {"t": b["real_time"], "cv": cv.get(b["run_name"], float("nan")), "row": b}
    return table, errors


def problem_text(fields):
    return " ".join(f"{k}={v}" for k, v in fields)


def print_shared_memory(table):
    """Strategy 08's questions: tiled GEMM against cuBLAS, tiled over global blur, staged over plain map."""
    for (workload, fields), entries in sorted(table.items()):
        f = dict(fields)
        if workload == "matmul" and "cublas/sgemm" in entries:
            base = entries["cublas/sgemm"]["t"]
            print(f"\nmatmul {problem_text(fields)}: fraction of cuBLAS SGEMM (its time / each time)")
            for entry, r in sorted(entries.items(), key=lambda kv: kv[1]["t"]):
                tops = r["row"].get("TOP/s", float("nan"))
                print(f"  {entry:40s} {r['t']:10.1f} us  {tops:6.2f} TOP/s  {base / r['t']:6.3f}")
    blurs = sorted((int(dict(f)["r"]), e) for (w, f), e in table.items() if w == "image" and dict(f)["op"] == "box_blur")
    if blurs:
        print("\nimage box blur: global time / tiled time, per strategy (above 1: tiling pays)")
        strategies = sorted({e.split("/")[0] for _, entries in blurs for e in entries if e.endswith("/tiled")})
        print(f"{'r':>3s} " + " ".join(f"{s[:20]:>20s}" for s in strategies))
        for r, entries in blurs:
            print(f"{r:3d} " + " ".join(
                f"{entries[f'{s}/global']['t'] / entries[f'{s}/tiled']['t']:20.2f}"
                if f"{s}/global" in entries and f"{s}/tiled" in entries else f"{'-':>20s}" for s in strategies))
    for (workload, fields), entries in sorted(table.items()):
        staged = {e: r for e, r in entries.items() if e.endswith("/staged")}
        if workload in ("map", "zip") and staged and dict(fields).get("n") == str(1 << 28):
            print(f"\n{workload} {problem_text(fields)}: staged through shared memory / plain scalar (below 1: staging pays)")
            for entry, r in sorted(staged.items()):
                plain = entries.get(entry.replace("/staged", "/scalar"))
                if plain:
                    print(f"  {entry:40s} {r['t']:10.1f} us  scalar {plain['t']:10.1f} us  x{r['t'] / plain['t']:.3f}")


def main(path):
    doc = load(path)
    table, errors = rows_of(doc)
    ctx = doc["context"]
    print(f"device: {ctx.get('device', '?')}  copy bandwidth: {float(ctx.get('copy_bandwidth_gbs', 0)):.0f} GB/s"
          f"  revision: {ctx.get('git_revision', '?')}  mode: {ctx.get('cdl_mode', '?')}")
    for e in errors:
        print(f"ERROR {e}")
    if not table:
        sys.exit("summary: no results in the file")

    maps = {f: e for (w, f), e in table.items() if w == "map"}
    k1 = [f for f in maps if dict(f).get("k") == "1" and dict(f).get("type") == "f32"]
    if k1:
        big = max(k1, key=lambda f: int(dict(f)["n"]))
        print(f"\nmap, {problem_text(big)}")
        print(f"{'implementation':40s} {'median us':>10s} {'cv %':>6s} {'GB/s':>8s} {'of copy':>8s}")
        for entry, r in sorted(maps[big].items()):
            print(f"{entry:40s} {r['t']:10.1f} {100 * r['cv']:6.2f} {r['row']['GB/s']:8.0f} {r['row']['frac_copy']:8.3f}")

    print("\nfastest and slowest implementation per problem (median time)")
    for (workload, fields), entries in sorted(table.items()):
        fast = min(entries.items(), key=lambda kv: kv[1]["t"])
        slow = max(entries.items(), key=lambda kv: kv[1]["t"])
        print(f"{workload:7s} {problem_text(fields):44s} {fast[0]:34s} {fast[1]['t']:10.1f} us  "
              f"{slow[0]:34s} {slow[1]['t']:10.1f} us  x{slow[1]['t'] / fast[1]['t']:.2f}")

    sweep = sorted(((f, e) for f, e in maps.items() if dict(f).get("n") == str(1 << 22)),
                   key=lambda fe: (dict(fe[0])["op"], int(dict(fe[0])["k"])))
    if sweep:
        cols = ["02_device_lambda/vec", "03_switch/vec", "04_function_pointer.symbol/vec",
                "04_function_pointer.table/vec", "05_virtual/vec", "06_nvrtc_jit/vec", "07_jit_lto/vec"]
        print("\ndispatch penalty: time / 01_template_functor/vec time (map, f32, n = 2^22)")
        print(f"{'op':12s} {'k':>4s} " + " ".join(f"{c.split('/')[0][:22]:>22s}" for c in cols))
        for fields, entries in sweep:
            base = entries.get("01_template_functor/vec")
            if not base:
                continue
            f = dict(fields)
            print(f"{f['op']:12s} {f['k']:>4s} " + " ".join(
                f"{entries[c]['t'] / base['t']:22.2f}" if c in entries else f"{'-':>22s}" for c in cols))

    print_shared_memory(table)

    stages = {(b["run_name"], b["aggregate_name"]): b for b in doc["benchmarks"]
              if b["run_name"].startswith("jit/") and "aggregate_name" in b}
    medians = [b for (_, agg), b in stages.items() if agg == "median"]
    if medians:
        print("\nrun-time strategies: host-side costs (wall clock, median of repetitions)")
        for b in medians:
            lo, hi = (stages.get((b["run_name"], a), {}).get("real_time") for a in ("min", "max"))
            spread = f"  (min {lo:.3f}, max {hi:.3f})" if lo is not None and hi is not None else ""
            print(f"{b['run_name']:64s} {b['real_time']:10.3f} {b['time_unit']}{spread}")
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
