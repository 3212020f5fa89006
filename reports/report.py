#!/usr/bin/env python3
"""The performance report: Markdown, PNG plots and tables, from result files only.

    reports/report.py RESULTS_DIR [--out DIR]

RESULTS_DIR holds what one run wrote (scripts/bench.sh, scripts/device_check.sh):
  bench.json        cdl_bench's Google Benchmark JSON (required)
  resources.json    each kernel's registers, stack and spills (reports/resources.py; optional)
  build_facts.json  what nvcc and NVRTC accept (cdl_build_facts; optional)
  repeat.json       a second run of some of the same benchmarks, for run-to-run spread (optional)
  python.json       the Python peers (bench/python: CuPy, Numba, cuda-python), same records (optional)
Writes DIR/report.md and DIR/*.png (DIR defaults to RESULTS_DIR), each through a temporary
file and a rename, and prints a short table last. Every finding in the text is computed from
the numbers. A results file that is missing, malformed or foreign is an error (exit status 2)
and nothing is written; benchmarks that failed validation are listed first in the report, and
make the exit status 1.
"""
import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

GB_SUFFIXES = ("min_time:", "repeats:", "manual_time", "real_time", "iterations:")
UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
COPY_TARGET = 0.97  # the fraction of copy bandwidth a memory-bound map's best form should reach
NOISE = 0.02        # run-to-run spread below which a difference is not a finding


class ResultsError(Exception):
    """A results file that cannot be used: missing, not JSON, or not what it claims to be."""


# ---------------------------------------------------------------------------------------------
# Reading results

def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file ({what})")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ResultsError(f"{path}: not a readable JSON file ({what}): {e}")


def parse_name(run_name):
    """workload/strategy[.variant]/form/key:value/... -> (workload, entry, {key: value})."""
    parts = [p for p in run_name.split("/") if not p.startswith(GB_SUFFIXES)]
    if len(parts) < 3:
        raise ResultsError(f"benchmark name {run_name!r} is not workload/strategy/form/...")
    fields = dict(p.split(":", 1) if ":" in p else ("shape", p) for p in parts[3:])
    return parts[0], parts[1] + "/" + parts[2], fields


class Bench:
    """One cdl_bench results file: per benchmark, the median time (µs) and its spread."""

    def __init__(self, path, doc=None, required=True):
        doc = read_json(path, "cdl_bench results") if doc is None else doc
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list) or \
                not isinstance(doc.get("context"), dict):
            raise ResultsError(f"{path}: not a Google Benchmark results file (no 'context' and 'benchmarks' list)")
        self.path, self.context = path, doc["context"]
        if "cdl_environment" not in self.context:
            raise ResultsError(f"{path}: a Google Benchmark file, but not from cdl_bench (no cdl_environment in its context)")
        try:
            self.env = json.loads(self.context["cdl_environment"])
            self.copy_gbs = float(self.context["copy_bandwidth_gbs"])
        except (KeyError, TypeError, ValueError) as e:
            raise ResultsError(f"{path}: malformed cdl_environment or copy bandwidth in its context: {e}")
        self.errors, self.rows = [], defaultdict(dict)
        for b in doc["benchmarks"]:
            if not isinstance(b, dict) or "run_name" not in b:
                raise ResultsError(f"{path}: a benchmark entry without a run_name: {str(b)[:80]}")
            name = b["run_name"]
            if b.get("error_occurred"):
                self.errors.append((name, b.get("error_message", "")))
                continue
            agg = b.get("aggregate_name")
            if agg not in ("median", "cv", "min", "max"):
                continue
            try:
                value = float(b["real_time"]) * (UNIT_US[b["time_unit"]] if agg != "cv" else 1.0)
            except (KeyError, TypeError, ValueError) as e:
                raise ResultsError(f"{path}: benchmark {name}: no usable real_time/time_unit ({e})")
            row = self.rows[name]
            row[agg] = value
            if agg == "median":
                row["counters"] = b
        if required and not self.rows and not self.errors:
            raise ResultsError(f"{path}: no benchmark results in the file")
        # (workload, problem fields) -> entry -> row
        self.problems = defaultdict(dict)
        self.stages = {}
        self.copies = {}
        for name, row in self.rows.items():
            if "median" not in row:
                continue
            if name.startswith("jit/"):
                self.stages[name.split("/iterations:")[0]] = row
            elif name.startswith("copy/"):
                self.copies[int(name.split("bytes:")[1].split("/")[0])] = row
            else:
                workload, entry, fields = parse_name(name)
                self.problems[(workload, tuple(sorted(fields.items())))][entry] = row

    def select(self, workload, **want):
        """[(fields dict, {entry: row})] of a workload whose fields match `want` (values as text)."""
        out = []
        for (w, fields), entries in self.problems.items():
            f = dict(fields)
            if w == workload and all(f.get(k) == str(v) for k, v in want.items()):
                out.append((f, entries))
        return out


class PythonPeers:
    """python.json from bench/python (cdl_peers): the same records as cdl_bench's, plus which systems
    ran or were skipped and why, and the function-as-argument experiments."""

    def __init__(self, path):
        doc = read_json(path, "Python peers' results")
        info = doc.get("cdl_python") if isinstance(doc, dict) else None
        if not isinstance(info, dict) or info.get("schema") != "cdl-python/1":
            raise ResultsError(f"{path}: not a cdl-python/1 file (bench/python writes them)")
        self.bench = Bench(path, doc, required=False)
        self.systems, self.experiments = info.get("systems", {}), info.get("experiments", [])

    def experiment(self, start):
        return next((e for e in self.experiments if e.get("name", "").startswith(start)), None)


def load_optional(path, schema):
    if not os.path.exists(path):
        return None
    doc = read_json(path, schema)
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise ResultsError(f"{path}: not a {schema} file (its 'schema' field is {doc.get('schema') if isinstance(doc, dict) else None!r})")
    return doc


# ---------------------------------------------------------------------------------------------
# Small helpers

def strategy_of(entry):
    """'04_function_pointer.table/vec' -> '04_function_pointer': variants and forms are its ways."""
    return entry.split("/")[0].split(".")[0]


def label(entry):
    """'04_function_pointer.table/vec' -> '04_function_pointer.table'."""
    return entry.split("/")[0]


def fmt_time(us):
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.1f} µs"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def pow2(n):
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


class Report:
    def __init__(self, out_dir):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt, self.out_dir, self.parts, self.files = plt, out_dir, [], {}

    def add(self, text):
        self.parts.append(text)

    def figure(self, name, fig, caption):
        path = os.path.join(self.out_dir, name)
        tmp = path + ".tmp.png"
        fig.tight_layout()
        fig.savefig(tmp, dpi=110)
        self.plt.close(fig)
        self.files[path] = tmp
        self.add(f"![{caption}]({name})\n\n*{caption}*\n")

    def text_file(self, name, text):
        """Writes a text file under a temporary name; write() renames it with the rest."""
        path = os.path.join(self.out_dir, name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        self.files[path] = path + ".tmp"
        return path

    def write(self, name):
        """Writes the report as `name`, then moves every file into place."""
        path = self.text_file(name, "\n".join(self.parts))
        for final, temporary in self.files.items():
            os.replace(temporary, final)
        return path


# ---------------------------------------------------------------------------------------------
# Sections. Each returns what the summary and the claims need, and adds its text and plots.

def section_header(r, bench):
    dev, ctx = bench.env.get("device", {}), bench.context
    r.add(f"# CUDA Dispatch Lab: performance report for {dev.get('name', '?')}\n")
    r.add(f"Generated by `reports/report.py` from `{os.path.basename(bench.path)}` and the files beside it; "
          "every figure and finding below is computed from them.\n")
    r.add(table(["", ""], [
        ["device", f"{dev.get('name', '?')}, {dev.get('sm_count', '?')} SMs, L2 {dev.get('l2_bytes', 0) / 2**20:.0f} MiB, "
                   f"compute capability {dev.get('cc_major', '?')}.{dev.get('cc_minor', '?')}"],
        ["measured copy bandwidth (the floor)", f"{bench.copy_gbs:.0f} GB/s (theoretical peak {dev.get('peak_bandwidth_gbs', 0):.0f} GB/s)"],
        ["run", f"{ctx.get('date', '?')}, suite mode `{ctx.get('cdl_mode', '?')}`, revision `{ctx.get('git_revision', '?')}`, "
                f"nvcc {bench.env.get('nvcc_version', '?')}, driver {dev.get('driver_version', '?')}"],
    ]))
    r.add("Times are medians over repetitions of CUDA-event-timed launches, L2 flushed before each; "
          "`cv` is the coefficient of variation across repetitions. A difference smaller than the spread "
          f"of the same benchmark (or {NOISE:.0%}, run to run) is noise.\n")
    if bench.errors:
        r.add("## ERRORS: benchmarks that failed\n")
        r.add(f"**{len(bench.errors)} benchmarks reported an error (a wrong result is never timed):**\n")
        r.add("\n".join(f"- `{n}`: {m}" for n, m in bench.errors) + "\n")


def map_kernel_facts(resources, entry):
    """The resource facts of an entry's float map kernel (vec form), as text; '' when unknown."""
    if not resources:
        return ""
    source = entry.split("/")[0].split(".")[0]
    for k in resources["kernels"]:
        if k["source"].endswith(f"/{source}.cu") and "map_vec_kernel<float" in k["name"] and "quadratic" not in k["name"] \
                and "ops::" not in k["name"]:
            calls = "" if k.get("indirect_calls") is None else f"{k['indirect_calls']} calls through a register, "
            return (f"its kernel: {calls}{k.get('registers')} registers, {k.get('spill_stores', 0)} B of spill stores, "
                    f"{k.get('stack', 0)} B stack frame")
    return ""


def section_map(r, bench, resources):
    """Memory-bound map: each strategy's fraction of the copy bandwidth; bandwidth against n."""
    runs = bench.select("map", k=1, type="f32", op="quadratic")
    if not runs:
        return {}
    n_max = max(int(f["n"]) for f, _ in runs)
    entries = next(e for f, e in runs if int(f["n"]) == n_max)
    r.add(f"## The memory-bound map (quadratic, float32, k = 1, n = {pow2(n_max)})\n")
    rows = []
    for entry, row in sorted(entries.items()):
        c = row["counters"]
        rows.append([f"`{entry}`", f"{row['median']:.1f}", f"{100 * row.get('cv', float('nan')):.2f}",
                     f"{c.get('GB/s', float('nan')):.0f}", f"{c.get('frac_copy', float('nan')):.3f}"])
    r.add(table(["implementation", "median µs", "cv %", "GB/s", "of copy"], rows))
    best = {}
    for entry, row in entries.items():
        s, frac = strategy_of(entry), row["counters"].get("frac_copy", 0)
        if s not in best or frac > best[s][1]:
            best[s] = (entry, frac)
    reached = [s for s, (_, f) in best.items() if f >= COPY_TARGET]
    below = sorted(((f, s, e) for s, (e, f) in best.items() if f < COPY_TARGET))
    r.add(f"**Best form per strategy.** {len(reached)} of {len(best)} strategies (peers included) reach "
          f"{COPY_TARGET} of the copy bandwidth with their best form" +
          ("; below it: " + "; ".join(f"`{e}` {f:.3f}" + (f" ({map_kernel_facts(resources, e)})" if map_kernel_facts(resources, e) else "")
                                       for f, s, e in below) if below else "") + ".\n")
    scalar = [row["counters"]["frac_copy"] for e, row in entries.items() if e.endswith("/scalar")]
    vec = [row["counters"]["frac_copy"] for e, row in entries.items() if e.endswith("/vec")]
    if scalar and vec:
        r.add(f"One element per thread (`scalar`) reaches {min(scalar):.2f}–{max(scalar):.2f} of copy; 16-byte loads "
              f"with several in flight per thread (`vec`) reach {min(vec):.2f}–{max(vec):.2f}. At this size the load "
              "width and the bytes in flight decide the time; how the op is called matters only where the call "
              "itself stalls the loads (see the resource table).\n")
    # Bandwidth against n, each strategy's vec form and the peers, with the copy of the same bytes.
    fig, ax = r.plt.subplots(figsize=(8, 5))
    by_entry = defaultdict(list)
    for f, e in runs:
        for entry, row in e.items():
            by_entry[entry].append((int(f["n"]), row["counters"]["GB/s"]))
    # Each strategy's vec form, and the peers (whose "form" is the library's function name).
    shown = sorted(e for e in by_entry if e.split("/")[1] not in ("scalar", "staged"))
    for entry in shown + [e for e in ("01_template_functor/scalar",) if e in by_entry]:
        pts = sorted(by_entry[entry])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                linestyle="--" if entry.endswith("scalar") else "-", label=entry)
    copy = sorted((b // 4, row["counters"]["GB/s"]) for b, row in bench.copies.items())
    if copy:
        ax.plot([c[0] for c in copy], [c[1] for c in copy], color="black", lw=2.5, label="cudaMemcpy (floor)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (float32 elements)")
    ax.set_ylabel("GB/s (bytes read + written / time)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    r.figure("map_bandwidth.png", fig, "Map bandwidth against n: each strategy's vec form, the library peers, "
             "the template's scalar form (dashed) and the device-to-device copy of the same bytes")
    return {"best": best, "n": n_max}


def k_sweep(bench):
    """{op: {k: {entry: median}}} for the dispatch sweep (f32, the most common n among k > 1)."""
    runs = [(f, e) for f, e in bench.select("map", type="f32") if f.get("k") not in (None, "1")]
    if not runs:
        return None, {}
    n = statistics.mode(f["n"] for f, _ in runs)
    sweep = defaultdict(dict)
    for f, e in bench.select("map", type="f32", n=n):
        sweep[f["op"]][int(f["k"])] = {entry: row["median"] for entry, row in e.items()}
    return int(n), sweep


def section_dispatch(r, bench):
    n, sweep = k_sweep(bench)
    if not sweep:
        return {}
    r.add(f"## The dispatch penalty: time against k (map, float32, n = {pow2(n)})\n")
    r.add("Each element evaluates the op k times, so the cost of a call separates from the cost of memory. "
          "The table gives each strategy's time over the template functor's (vec forms; 1.00 = no penalty).\n")
    cols = sorted({e for ks in sweep.values() for row in ks.values() for e in row
                   if e.endswith("/vec") and not e.startswith(("00_", "01_"))})
    rows, penalty = [], {}
    for op, ks in sorted(sweep.items()):
        for k, row in sorted(ks.items()):
            base = row.get("01_template_functor/vec")
            if not base:
                continue
            ratios = {c: row[c] / base for c in cols if c in row}
            penalty[(op, k)] = ratios
            rows.append([op, k] + [f"{ratios[c]:.2f}" if c in ratios else "–" for c in cols])
    r.add(table(["op", "k"] + [f"`{label(c)}`" for c in cols], rows))
    ops = sorted(sweep)
    fig, axes = r.plt.subplots(1, len(ops), figsize=(6 * len(ops), 4.5), squeeze=False)
    for ax, op in zip(axes[0], ops):
        ks = sorted(sweep[op])
        for c in ["01_template_functor/vec"] + cols:
            pts = [(k, sweep[op][k][c]) for k in ks if c in sweep[op][k]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label(c))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(op)
        ax.set_xlabel("k (evaluations per element)")
        ax.set_ylabel("median time (µs)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    r.figure("dispatch_penalty.png", fig, "Time against k per strategy (vec forms): the slope is the cost of a call")
    # Findings, from the largest k of each op.
    for op in ops:
        k = max(k for (o, k) in penalty if o == op)
        p = penalty[(op, k)]
        indirect = {c: v for c, v in p.items() if c.startswith(("04_", "05_"))}
        jit = {c: v for c, v in p.items() if c.startswith(("06_", "07_"))}
        text = f"- **{op}, k = {k}:** "
        if indirect:
            text += (f"function pointers and virtual calls take {min(indirect.values()):.2f}–{max(indirect.values()):.2f}× "
                     "the template's time (the call cannot be inlined, and the arguments go through the ABI)")
        if "03_switch/vec" in p:
            text += f"; the per-element switch {p['03_switch/vec']:.2f}×"
        if "03_switch.hoisted/vec" in p:
            text += f", hoisted out of the loop {p['03_switch.hoisted/vec']:.2f}×"
        if jit:
            text += f"; the run-time compiled strategies {min(jit.values()):.2f}–{max(jit.values()):.2f}×"
        r.add(text + ".")
    r.add("")
    return {"n": n, "sweep": sweep, "penalty": penalty}


def section_precision(r, bench, dispatch):
    """float32 against float64: memory-bound and arithmetic-bound."""
    rows, ratios = [], {}
    f64_big = bench.select("map", type="f64", k=1, op="quadratic")
    f32 = {int(f["n"]): e for f, e in bench.select("map", type="f32", k=1, op="quadratic")}
    for f, e in f64_big:
        n = int(f["n"])
        n32 = n if n in f32 else max(f32, default=None)  # the quick suite runs f64 at half the largest f32 n
        ref = f32.get(n32, {})
        if "01_template_functor/vec" in e and "01_template_functor/vec" in ref:
            per64 = e["01_template_functor/vec"]["median"] / n
            per32 = ref["01_template_functor/vec"]["median"] / n32
            ratios[("memory", "quadratic", 1)] = per64 / per32
            rows.append(["quadratic", 1, pow2(n), f"{per32 * 1e6:.3f}", f"{per64 * 1e6:.3f}", f"{per64 / per32:.2f}"])
    for f, e in bench.select("map", type="f64"):
        k = int(f["k"])
        if k == 1 or not dispatch:
            continue
        row32 = dispatch["sweep"].get(f["op"], {}).get(k)
        if row32 and "01_template_functor/vec" in e and "01_template_functor/vec" in row32:
            t64, t32 = e["01_template_functor/vec"]["median"], row32["01_template_functor/vec"]
            ratios[("arithmetic", f["op"], k)] = t64 / t32
            n = int(f["n"])
            rows.append([f["op"], k, pow2(n), f"{t32 / n * 1e6:.3f}", f"{t64 / n * 1e6:.3f}", f"{t64 / t32:.2f}"])
    if rows:
        r.add("## float32 against float64 (template functor, vec form)\n")
        r.add(table(["op", "k", "n", "ps/element f32", "ps/element f64", "f64 / f32"], rows))
    return ratios


def section_tasks(r, bench):
    runs = bench.select("tasks")
    if not runs:
        return {}
    r.add("## Per-element dispatch: the tasks workload (divergence)\n")
    r.add("Each element's op id comes from a task record. `per_element` strategies dispatch per element "
          "(a warp whose elements hold d different ids runs d cases one after the other); the templates and "
          "lambdas cannot, and group the elements by op first (`grouped`: a sort, then one launch per op; "
          "the grouping is timed with them).\n")
    uniform = {e: row["median"] for f, es in runs if f["layout"] == "uniform" for e, row in es.items()}
    layouts = sorted({f["layout"] for f, _ in runs if f["layout"] != "uniform"})
    entries = sorted({e for _, es in runs for e in es})
    fig, axes = r.plt.subplots(1, len(layouts), figsize=(5.5 * len(layouts), 4.3), squeeze=False, sharey=True)
    rows = []
    for ax, layout in zip(axes[0], layouts):
        for entry in entries:
            pts = sorted((int(f["distinct"]), es[entry]["median"]) for f, es in runs if f["layout"] == layout and entry in es)
            if entry in uniform:
                pts = [(1, uniform[entry])] + pts
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=entry)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"layout: {layout}")
        ax.set_xlabel("distinct ops (per warp for 'warp' and 'random')")
        ax.set_ylabel("median time (µs)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    r.figure("tasks_divergence.png", fig, "Tasks: time against the number of distinct ops, per layout (d = 1 is the uniform layout)")
    worst = {}
    for f, es in runs:
        for e, row in es.items():
            if e in uniform:
                worst[e] = max(worst.get(e, 1.0), row["median"] / uniform[e])
    for e in entries:
        if e in uniform:
            rows.append([f"`{e}`", fmt_time(uniform[e]), f"{worst.get(e, 1.0):.2f}"])
    r.add(table(["implementation", "uniform (1 op)", "worst layout / uniform"], rows))
    return {"uniform": uniform, "worst": worst}


def section_jit(r, bench, dispatch):
    if not bench.stages:
        return {}
    r.add("## Run-time compilation: what it costs and when it pays\n")
    rows = []
    for name, row in sorted(bench.stages.items()):
        rows.append([f"`{name}`", f"{row['median'] / 1000:.3f}", f"{row.get('min', float('nan')) / 1000:.3f}",
                     f"{row.get('max', float('nan')) / 1000:.3f}"])
    r.add(table(["stage (host wall clock)", "median ms", "min ms", "max ms"], rows))
    get = lambda prefix: next((row["median"] / 1000 for n, row in bench.stages.items() if n.startswith(prefix)), None)
    costs = {"first compile": get("jit/first_compile_in_process/06"), "compile": get("jit/compile/06"),
             "disk hit (fresh process)": get("jit/cache_disk_hit_fresh_process"), "memory hit": get("jit/cache_memory_hit")}
    out = {"costs": costs}
    if not dispatch or not costs["compile"]:
        return out
    # A compile pays once the time it saves, over the fastest strategy that calls an op chosen at
    # run time without a compiler (per-call switch, function pointer, virtual call), exceeds it:
    # after n elements, n * (t_alt - t_jit) / n_sweep. (The hoisted switch is left out: with one op
    # per launch it is every op instantiated at build time, the template strategy again.)
    rows, breakeven = [], {}
    for (op, k), _ in sorted(dispatch["penalty"].items()):
        row = dispatch["sweep"][op][k]
        alts = {e: t for e, t in row.items() if e.startswith(("03_switch/", "04_", "05_"))}
        jit = min((t for e, t in row.items() if e.startswith("06_")), default=None)
        if not alts or not jit:
            continue
        alt, t_alt = min(alts.items(), key=lambda kv: kv[1])
        saving_per_element_ms = (t_alt - jit) / 1000 / dispatch["n"]
        cells = [op, k, f"`{alt}`", f"{t_alt / jit:.2f}"]
        for label in ("compile", "disk hit (fresh process)"):
            c = costs[label]
            if c and saving_per_element_ms > 0:
                n_even = c / saving_per_element_ms
                breakeven[(op, k, label)] = n_even
                cells.append(f"{n_even:.2e}")
            else:
                cells.append("never")
        rows.append(cells)
    if rows:
        r.add("**When a compile pays off.** The number of elements (over any number of launches) after which the "
              "JIT kernel (best form) has saved its own compile, or its disk-cache load, against the fastest "
              "strategy that takes the op at run time without a compiler (per-call switch, function pointer, "
              "virtual call; best form):\n")
        r.add(table(["op", "k", "fastest alternative", "its time / JIT time", "break-even n (compile)",
                     "break-even n (disk cache hit)"], rows))
        pts = defaultdict(list)
        for (op, k, label), n_even in breakeven.items():
            pts[(op, label)].append((k, n_even))
        fig, ax = r.plt.subplots(figsize=(7, 4.5))
        for (op, label), p in sorted(pts.items()):
            p.sort()
            ax.plot([x[0] for x in p], [x[1] for x in p], marker="o", ms=3, linestyle="-" if label == "compile" else "--",
                    label=f"{op}, {label}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("k (evaluations per element)")
        ax.set_ylabel("elements processed to repay it")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        r.figure("jit_breakeven.png", fig, "Elements after which a JIT compile (solid) or a disk-cache load (dashed) has paid for itself")
    out["breakeven"] = breakeven
    return out


def section_image(r, bench):
    blurs = sorted(((int(f["r"]), e) for f, e in bench.select("image", op="box_blur")), key=lambda x: x[0])
    if not blurs:
        return {}
    shape = next(f["shape"] for f, _ in bench.select("image", op="box_blur"))
    r.add(f"## Stencils: box blur against its radius ({shape}), global and shared-memory tiled\n")
    strategies = sorted({label(e) for _, es in blurs for e in es if e.endswith("/tiled")})
    fig, ax = r.plt.subplots(figsize=(8, 5))
    for i, s in enumerate(strategies):
        color = f"C{i % 10}"
        for form, style in (("global", "-"), ("tiled", "--")):
            pts = [(rad, es[f"{s}/{form}"]["median"]) for rad, es in blurs if f"{s}/{form}" in es]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, marker="o", ms=3,
                    label=f"{s} ({form})")
    ax.set_xlabel("radius r")
    ax.set_ylabel("median time (µs)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    r.figure("image_blur.png", fig, "Box blur time against radius: global form (solid) and tiled form (dashed) per strategy")
    rows, ratio = [], {}
    for rad, es in blurs:
        cells = [rad]
        for s in strategies:
            g, t = es.get(f"{s}/global"), es.get(f"{s}/tiled")
            if g and t:
                ratio[(s, rad)] = g["median"] / t["median"]
                cells.append(f"{ratio[(s, rad)]:.2f}")
            else:
                cells.append("–")
        rows.append(cells)
    r.add("Global time over tiled time (above 1: tiling pays):\n")
    r.add(table(["r"] + [f"`{s}`" for s in strategies], rows))
    pays = sorted({rad for (s, rad), v in ratio.items() if s == "01_template_functor" and v > 1 + NOISE})
    if pays:
        r.add(f"For the template functor, tiling pays from r = {pays[0]} on.\n")
    return ratio


def section_matmul(r, bench):
    runs = [(f, e) for f, e in bench.select("matmul", semiring="plus_times") if "cublas/sgemm" in e]
    if not runs:
        return {}
    r.add("## Matrix products against cuBLAS\n")
    fractions = {}
    for f, es in sorted(runs, key=lambda fe: fe[0]["shape"]):
        base = es["cublas/sgemm"]["median"]
        rows = []
        for entry, row in sorted(es.items(), key=lambda kv: kv[1]["median"]):
            frac = base / row["median"]
            fractions[(f["shape"], entry)] = frac
            rows.append([f"`{entry}`", fmt_time(row["median"]), f"{row['counters'].get('TOP/s', float('nan')):.2f}", f"{frac:.3f}"])
        r.add(f"(+,×), float32, {f['shape']}: fraction of cuBLAS SGEMM (its time / each time)\n")
        r.add(table(["implementation", "median", "TOP/s", "of cuBLAS"], rows))
    shape = max((f["shape"] for f, _ in runs), key=lambda s: int(s.split("x")[0]))
    es = next(e for f, e in runs if f["shape"] == shape)
    items = sorted(((fractions[(shape, e)], e) for e in es), reverse=True)
    fig, ax = r.plt.subplots(figsize=(8, 0.35 * len(items) + 1.2))
    ax.barh([e for _, e in items][::-1], [v for v, _ in items][::-1], color="C0")
    ax.set_xlabel(f"fraction of cuBLAS SGEMM, {shape}")
    ax.set_xlim(0, 1.05)
    ax.grid(axis="x", alpha=0.3)
    ax.tick_params(axis="y", labelsize=7)
    r.figure("matmul_cublas.png", fig, f"(+,×) matrix product, float32, {shape}: each implementation's fraction of cuBLAS")
    return fractions


def section_elementwise_other(r, bench):
    """Zip and points at their largest n, and staging against the plain form."""
    out = {"staged": {}, "aos_soa": {}}
    r.add("## Zip, staging through shared memory, and arrays of structs\n")
    for workload in ("map", "zip"):
        runs = bench.select(workload, type="f32") if workload == "zip" else bench.select("map", type="f32", k=1)
        if not runs:
            continue
        n = max(int(f["n"]) for f, _ in runs)
        for f, es in runs:
            if int(f["n"]) != n:
                continue
            for entry, row in es.items():
                plain = es.get(entry.replace("/staged", "/scalar"))
                if entry.endswith("/staged") and plain:
                    out["staged"][(workload, f["op"], entry)] = row["median"] / plain["median"]
    if out["staged"]:
        r.add("Staged through shared memory over the plain scalar form, largest n (below 1: staging pays):\n")
        r.add(table(["workload", "op", "implementation", "staged / scalar"],
                    [[w, op, f"`{e}`", f"{v:.3f}"] for (w, op, e), v in sorted(out["staged"].items())]))
    zips = bench.select("zip", type="f32")
    if zips:
        n = max(int(f["n"]) for f, _ in zips)
        best = {}
        for f, es in zips:
            if int(f["n"]) == n:
                for e, row in es.items():
                    s = strategy_of(e)
                    best[(f["op"], s)] = max(best.get((f["op"], s), 0), row["counters"].get("frac_copy", 0))
        r.add(f"Zip, n = {pow2(n)}: best form per strategy as a fraction of copy bandwidth:\n")
        r.add(table(["op", "strategy", "of copy"], [[op, f"`{s}`", f"{v:.3f}"] for (op, s), v in sorted(best.items())]))
    for f, es in bench.select("points"):
        for e, row in es.items():
            if e.endswith("/aos") and e.replace("/aos", "/soa") in es:
                out["aos_soa"][(f["n"], strategy_of(e))] = row["median"] / es[e.replace("/aos", "/soa")]["median"]
    if out["aos_soa"]:
        r.add("Points (`x *= 2, y += 1`), array of structs over struct of arrays (time ratio; the same skeleton "
              "serves both):\n")
        r.add(table(["n", "strategy", "AoS / SoA"], [[pow2(n), f"`{s}`", f"{v:.3f}"] for (n, s), v in sorted(out["aos_soa"].items())]))
    return out


def short_kernel(name):
    """'void cdl::skeleton::map_vec_kernel<float, X>(args)' -> 'map_vec_kernel<float, X>' without namespaces."""
    head = name.replace("(anonymous namespace)", "{anon}")
    head = head[5:] if head.startswith("void ") else head
    depth, cut = 0, len(head)
    for i, ch in enumerate(head):  # strip the argument list at top level
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            cut = i
            break
    head = head[:cut]
    for junk in ("cdl::skeleton::", "cdl::{anon}::", "{anon}::", "cdl::ops::", "cdl::"):
        head = head.replace(junk, "")
    return head


# The C++ entry each Python peer is set beside: the same form (one element per thread, global reads,
# a per-element switch), written with a template functor, the static best case.
CPP_SAME_FORM = {"map": "01_template_functor/scalar", "zip": "01_template_functor/scalar",
                 "tasks": "03_switch/per_element", "image": "01_template_functor/global"}


def section_python(r, bench, python):
    """The articles' own systems beside the C++ strategies, problem by problem."""
    found = {"ratio": {}, "first_ms": {}}
    if python is None:
        return found
    r.add("## The articles' own systems: CuPy, Numba, runtime-compiled source from Python\n")
    r.add("The same problems written the ways the source articles write them (`bench/python`), on the inputs and "
          "against the reference of the C++ workloads, timed by each system's own CUDA events with the C++ suite's "
          "protocol. Events open before each call, so a system's per-call host time is in its figure wherever the "
          "GPU waits for it. *First call* is the host time from defining the kernel to the end of its first run, "
          "compile included (CuPy's disk cache starts empty). Fractions of copy use this report's copy floor "
          f"({bench.copy_gbs:.0f} GB/s, cudaMemcpy). `python.json`: {python.bench.context.get('date', '?')[:16]}, "
          f"revision `{python.bench.context.get('git_revision', '?')}`, mode `{python.bench.context.get('cdl_mode', '?')}`, "
          f"Python {python.bench.env.get('python', '?')}, numpy {python.bench.env.get('numpy', '?')}.\n")
    rows = []
    for name, sysinfo in python.systems.items():
        status = sysinfo.get("status")
        detail = sysinfo.get("version", "") if status == "ran" else sysinfo.get("reason", "")
        notes = "; ".join(sysinfo.get("notes", []))
        rows.append([f"`{name}`", status, detail + (f" ({notes})" if notes else "")])
    r.add(table(["system", "status", "version, or why not"], rows))
    for (workload, fields), entries in sorted(python.bench.problems.items()):
        cpp = bench.problems.get((workload, fields), {})
        f = dict(fields)
        problem = f"{workload}: " + ", ".join(f"{k} = {pow2(v) if k == 'n' else v}" for k, v in f.items() if k != "shape") + \
            (f", {f['shape']}" if "shape" in f else "")
        same = cpp.get(CPP_SAME_FORM.get(workload, ""))
        best_entry = min(cpp, key=lambda e: cpp[e]["median"]) if cpp else None
        rows = []
        for entry, row in sorted(entries.items(), key=lambda kv: kv[1]["median"]):
            c = row["counters"]
            ratio = row["median"] / same["median"] if same else None
            found["ratio"][(workload, fields, label(entry))] = ratio
            found["first_ms"][(workload, fields, label(entry))] = c.get("first_call_ms")
            rows.append([f"`{label(entry)}`", fmt_time(row["median"]), f"{c.get('GB/s', float('nan')) / bench.copy_gbs:.3f}",
                         "–" if ratio is None else f"{ratio:.2f}×", f"{c.get('first_call_ms', float('nan')):.1f} ms"])
        for entry in dict.fromkeys(e for e in (CPP_SAME_FORM.get(workload), best_entry) if e and e in cpp):
            row = cpp[entry]
            rows.append([f"C++ `{entry}`", fmt_time(row["median"]), f"{row['counters'].get('frac_copy', float('nan')):.3f}",
                         f"{row['median'] / same['median']:.2f}×" if same else "–", "built ahead"])
        r.add(f"**{problem}**\n")
        r.add(table(["peer", "median", "of copy", f"time / C++ `{CPP_SAME_FORM.get(workload, '?')}`", "first call"], rows))
    if python.experiments:
        r.add("Handing a function to a Numba kernel, as the articles do (article 000's `apply_lambda` kernel, validated "
              "where it runs; the error verbatim where it does not):\n")
        rows = []
        for e in python.experiments:
            extra = f" (first {e['first_ms']:.0f} ms, again {e['reuse_ms']:.2f} ms)" if "first_ms" in e else ""
            rows.append([e["name"], ("runs" + (", valid" if e.get("valid") else ", WRONG RESULT")) if e["runs"] else "fails",
                         (f"`{e['error'].splitlines()[0][:160]}`" if e.get("error") else "–") + extra])
        r.add(table(["attempt", "result", "error"], rows))
    return found


def section_resources(r, resources):
    if not resources:
        r.add("## Kernel resources\n\nNo `resources.json` beside the results: run `reports/resources.py` on the build.\n")
        return
    kernels = resources["kernels"]
    sass = resources.get("sass_inspected")
    r.add("## Kernel resources (the compiler's report)\n")
    r.add("From ptxas's resource report for every kernel in the build (`-Xptxas -v`)" +
          (", and the SASS (`cuobjdump -sass`): calls through a register (indirect CALL) and indirect branches (BRX)."
           if sass else "; the SASS was not inspected (no cuobjdump where the report was collected).") +
          " The run-time compiled kernels (06, 07) are not in the build.\n")
    focus = [k for k in kernels if "map_vec_kernel<float" in k["name"] or "map_quadratic_vec<float" in k["name"]
             or "map_hoisted_kernel<float, (cdl::map_form)1>" in k["name"]]
    focus = [k for k in focus if "quadratic" in k["name"] or "switch_invoker" in k["name"] or "ops::" not in k["name"]
             and "lambda" not in k["name"]] or focus

    def cells(k):
        return [f"`{k['source'].split('/')[-1]}`", f"`{short_kernel(k['name'])[:90]}`", k.get("registers", "?"),
                k.get("stack", 0), f"{k.get('spill_stores', 0)} / {k.get('spill_loads', 0)}", k.get("smem", 0),
                "–" if k.get("indirect_calls") is None else k["indirect_calls"], "–" if k.get("brx") is None else k["brx"]]
    header = ["source", "kernel", "registers", "stack B", "spill st/ld B", "smem B", "indirect CALL", "BRX"]
    r.add("The float map kernel (vec form) of each strategy, with the quadratic op where the kernel is per op:\n")
    r.add(table(header, [cells(k) for k in focus]))
    per_source = defaultdict(list)
    for k in kernels:
        per_source[k["source"]].append(k)
    rows = []
    for src, ks in sorted(per_source.items()):
        rows.append([f"`{src}`", len(ks), max(k.get("registers", 0) for k in ks),
                     sum(1 for k in ks if k.get("spill_stores", 0) or k.get("spill_loads", 0)),
                     sum(1 for k in ks if k.get("stack", 0)),
                     "–" if not sass else sum(1 for k in ks if k.get("indirect_calls")),
                     "–" if not sass else sum(1 for k in ks if k.get("brx"))])
    r.add("Per source file:\n")
    r.add(table(["source", "kernels", "max registers", "kernels that spill", "kernels with a stack frame",
                 "with indirect calls", "with BRX"], rows))
    r.text_file("resources.md", "# Every kernel's resources\n\n" + table(header, [cells(k) for k in kernels]))
    r.add("Every kernel: [resources.md](resources.md).\n")


# ---------------------------------------------------------------------------------------------
# The claims of the source articles (../shared/seeds/README.md), each answered from the data.

def verdict_ratio(values, holds_if_below=True):
    """'holds' when every ratio is beyond the noise in the claimed direction, 'does not hold' when every
    one is beyond it the other way, else 'depends'."""
    if not values:
        return "no data"
    better = [v < 1 - NOISE for v in values] if holds_if_below else [v > 1 + NOISE for v in values]
    worse = [v > 1 + NOISE for v in values] if holds_if_below else [v < 1 - NOISE for v in values]
    return "holds" if all(better) else "does not hold" if all(worse) else "depends"


def fact(facts, fid):
    for f in (facts or {}).get("facts", []):
        if f.get("id") == fid:
            return f
    return None


def compiles(f, compiler):
    v = (f or {}).get(compiler)
    return None if v is None else bool(v.get("compiles"))


def python_ratios(found, peer):
    """{problem text: time / C++ same form} of one Python peer."""
    return {f"{w} {dict(f).get('op', dict(f).get('layout', ''))} {dict(f).get('type', '')}".strip(): x
            for (w, f, p), x in found["python"]["ratio"].items() if p == peer and x}


def span(values, fmt="{:.2f}"):
    return "–" if not values else fmt.format(min(values)) + ("" if min(values) == max(values) else "–" + fmt.format(max(values)))


def numba_switch(found):
    sw, fn = python_ratios(found, "numba.op_switch"), python_ratios(found, "numba.device_function")
    both = [sw[k] / fn[k] for k in sw if k in fn and k.startswith("map")]
    return f" Numba: the if/elif kernel takes {span(both)}× the time of the kernel calling one device function." if both else ""


def python_source_text(found):
    parts = []
    for peer, what in (("cuda_python.nvrtc", "NVRTC through cuda-python"), ("cupy.RawKernel", "CuPy's RawKernel"),
                       ("pycuda.SourceModule", "PyCUDA's SourceModule")):
        ratios = python_ratios(found, peer)
        first = [v for (w, f, p), v in found["python"]["first_ms"].items() if p == peer and v]
        if ratios:
            parts.append(f"{what}: first call {span(first, '{:.0f}')} ms, then {span(list(ratios.values()))}× the C++ same-form time")
    return (" From Python, " + "; ".join(parts) + ".") if parts else ""


def section_claims(r, bench, facts, found, python):
    rows = []
    no_python = ("no data", "Needs the Python peers' results (bench/python); none beside this run.")
    numba = (python.systems.get("numba", {}) if python else {})

    njit = python.experiment("an @njit function as a kernel argument") if python else None
    if njit:
        works = [e["name"] for e in python.experiments if e["runs"] and e.get("valid") and "factory" not in e["name"]]
        rows.append(["000", "An `@njit` function can be passed as a kernel argument", f"Numba {numba.get('version', '')}",
                     "holds" if njit["runs"] and njit.get("valid") else "does not hold",
                     ("It runs and validates" if njit["runs"] else f"`{njit['error'].splitlines()[0][:160]}`") +
                     (f". What does run: {'; '.join(works)}." if works else ".")])
    else:
        rows.append(["000", "An `@njit` function can be passed as a kernel argument", "Numba",
                     *(no_python if not numba else ("no data", f"Numba {numba.get('status')}: {numba.get('reason', '')}"))])

    staged = found["other"].get("staged", {})
    v = verdict_ratio(list(staged.values()))
    rows.append(["000, 002", "Staging elementwise data in shared memory improves performance (incl. vector add)",
                 "map/zip `staged` against `scalar`, largest n", v,
                 ", ".join(f"{w} {op} {e.split('/')[0]}: ×{x:.3f}" for (w, op, e), x in sorted(staged.items())) or "–"])

    costs = found["jit"].get("costs", {})
    best = found["map"].get("best", {})
    jit_ratio = None
    if "06_nvrtc_jit" in best and "01_template_functor" in best:
        jit_ratio = best["01_template_functor"][1] / best["06_nvrtc_jit"][1]
    if costs.get("first compile"):
        text = (f"A JIT pays {costs['first compile']:.1f} ms for its first compile in a process, {costs['compile']:.1f} ms "
                f"for later ones, {costs['disk hit (fresh process)']:.2f} ms for a disk-cache hit; a pre-compiled "
                "kernel pays none of it")
        if jit_ratio:
            text += f", and afterwards the JIT kernel runs at {jit_ratio:.3f}× the template's time"
        factory = python.experiment("kernel factory") if python else None
        numba_first = [v for (w, f, p), v in found["python"]["first_ms"].items() if p.startswith("numba.") and v]
        if numba_first:
            text += f". Numba compiles at a kernel's first call: {span(numba_first, '{:.0f}')} ms here"
            if factory and "reuse_ms" in factory:
                text += f"; a factory's second call with the same function takes {factory['reuse_ms']:.2f} ms"
        rows.append(["000", "A pre-compiled function avoids the overhead of dynamic compilation", "`jit/` stages, map",
                     "holds", text + "."])
    else:
        rows.append(["000", "A pre-compiled function avoids the overhead of dynamic compilation", "`jit/` stages", "no data", "–"])

    pen = found["dispatch"].get("penalty", {})
    vs_indirect, vs_static = [], []
    for (op, k), p in pen.items():
        sw = p.get("03_switch/vec")
        ind = [x for c, x in p.items() if c.startswith(("04_", "05_"))]
        if sw and ind:
            vs_indirect.append(sw / min(ind))
        if sw:
            vs_static.append(sw)
    if vs_indirect:
        v_ind, v_st = verdict_ratio(vs_indirect), verdict_ratio(vs_static)
        v = "holds" if v_ind == v_st == "holds" else "does not hold" if v_ind == "does not hold" else "depends"
        rows.append(["001", "If/else selection on an op id is \"far more efficient\" than the alternatives",
                     "map dispatch sweep, vec forms", v,
                     f"switch / fastest indirect call: {min(vs_indirect):.2f}–{max(vs_indirect):.2f}× over the ops and k; "
                     f"switch / template functor: {min(vs_static):.2f}–{max(vs_static):.2f}× (the template and the JIT "
                     "are the efficient alternatives)." + numba_switch(found)])
    tasks = found["tasks"]
    per_element = {e: w for e, w in tasks.get("worst", {}).items() if e.endswith("/per_element")}
    failed_tasks = [n for n, _ in bench.errors if n.startswith("tasks/")]
    if per_element:
        rows.append(["001", "A per-element task array can pick the op per element", "tasks workload, validated",
                     "does not hold" if failed_tasks else "holds",
                     f"{len(per_element)} per-element implementations validated; their worst layout costs "
                     f"{min(per_element.values()):.2f}–{max(per_element.values()):.2f}× the uniform one (divergence)."])
    gg, gl = fact(facts, "global_calls_global"), fact(facts, "global_launches_global")
    if gg:
        nvcc, nvrtc = compiles(gg, "nvcc"), compiles(gg, "nvrtc")
        text = f"nvcc: {'accepts' if nvcc else 'refuses' if nvcc is not None else 'not run'} a kernel called like a function"
        if nvcc is False:
            first = next((l for l in gg["nvcc"]["log"].splitlines() if "error" in l), "")
            text += f" (`{first.split('error:')[-1].strip()}`)"
        text += f"; NVRTC {'accepts it (and inlines the callee as a device function)' if nvrtc else 'refuses it'}"
        if gl:
            text += f"; a launch from a kernel (dynamic parallelism, `-rdc`) {'compiles' if compiles(gl, 'nvcc') else 'does not compile'} with nvcc"
        rows.append(["001", "A kernel may call other kernels as functions", "build probes (`cdl_build_facts`)",
                     "does not hold" if nvcc is False else "holds" if nvcc else "no data", text + "."])
    if jit_ratio and pen:
        sw = [p.get("03_switch/vec") for p in pen.values() if p.get("03_switch/vec")]
        rows.append(["002", "Runtime-compiled C++ source is *the* way to get run-time-chosen logic into a kernel",
                     "06 against 01 and 03/04/05", "depends",
                     f"The JIT runs at {jit_ratio:.3f}× the template's time, but a switch, function pointers and virtual "
                     f"calls also take a run-time choice without a compiler, at {min(sw):.2f}–{max(sw):.2f}× (switch) in the "
                     "dispatch sweep: the JIT is the way when the op is not known at build time or the call is hot." +
                     python_source_text(found)])
    ufunc, elementwise = python_ratios(found, "cupy.ufunc_chain"), python_ratios(found, "cupy.ElementwiseKernel")
    if ufunc or elementwise:
        ratios = list(ufunc.values()) + list(elementwise.values())
        fast = [x <= 1 + NOISE for x in ratios]
        rows.append(["003", "CuPy ufunc chains and `ElementwiseKernel` are a fast path", "CuPy, against C++ `01_template_functor/scalar`",
                     "holds" if all(fast) else "does not hold" if not any(fast) else "depends",
                     "Time / the C++ template functor's one-element-per-thread kernel: ufunc chain " +
                     ", ".join(f"{k} {v:.2f}×" for k, v in ufunc.items()) + "; ElementwiseKernel " +
                     ", ".join(f"{k} {v:.2f}×" for k, v in elementwise.items()) +
                     ". A chain of operators is a kernel and a temporary per operator."])
    else:
        rows.append(["003", "CuPy ufunc chains and `ElementwiseKernel` are a fast path", "CuPy",
                     *(no_python if not python else ("no data", "CuPy: " + python.systems.get("cupy", {}).get(
                         "reason", "not among the systems run")))])
    prec = found["precision"]
    if prec:
        v = verdict_ratio(list(prec.values()), holds_if_below=False)
        rows.append(["003", "float32 matters for performance", "map, f64 against f32", v,
                     "; ".join(f"{kind} ({op}, k = {k}): f64 takes {x:.2f}× per element" for (kind, op, k), x in sorted(prec.items())) + "."])
    gd = fact(facts, "global_calls_device")
    if gd:
        nvcc = compiles(gd, "nvcc")
        rows.append(["004", "A `__global__` function cannot call a `__device__` function directly",
                     "build probe; every skeleton", "does not hold" if nvcc else "holds" if nvcc is False else "no data",
                     f"nvcc {'compiles' if nvcc else 'refuses'} it, NVRTC {'compiles' if compiles(gd, 'nvrtc') else 'refuses'} it; "
                     "every kernel of this suite calls its op as a device function."])
    aos = found["other"].get("aos_soa", {})
    aos_fact = fact(facts, "aos_struct")
    if aos:
        rows.append(["004", "Struct (AoS) data needs special handling", "points workload; build probe",
                     "does not hold" if (compiles(aos_fact, "nvcc") is not False) else "holds",
                     f"The same skeleton takes both layouts, validated; AoS / SoA time {min(aos.values()):.2f}–{max(aos.values()):.2f}× "
                     "(a cost of layout, not a need for special code)."])
    r.add("## The articles' claims, checked\n")
    r.add("Each claim of `shared/seeds/` with the measurement or build that answers it. The verdict is computed: "
          f"*holds* when every figure is beyond the {NOISE:.0%} noise in the claimed direction, *does not hold* when every "
          "one is beyond it the other way, *depends* otherwise.\n")
    r.add(table(["article", "claim", "answered by", "verdict", "figures"], rows))
    return rows


def section_repeat(r, bench, repeat_path):
    if not os.path.exists(repeat_path):
        return
    other = Bench(repeat_path)
    common = [n for n in bench.rows if n in other.rows and "median" in bench.rows[n] and "median" in other.rows[n]
              and not n.startswith("jit/")]
    if not common:
        raise ResultsError(f"{repeat_path}: no benchmark in common with {bench.path}")
    diffs = sorted((abs(other.rows[n]["median"] / bench.rows[n]["median"] - 1), n) for n in common)
    over = [(d, n) for d, n in diffs if d > NOISE]
    r.add("## Run to run\n")
    r.add(f"{len(common)} GPU benchmarks were run again in a second process (`{os.path.basename(repeat_path)}`). "
          f"Their medians differ by {statistics.median(d for d, _ in diffs):.2%} at the median and {diffs[-1][0]:.2%} "
          f"at most (`{diffs[-1][1].split('/iterations')[0]}`); {len(over)} differ by more than {NOISE:.0%}.\n")


def strategies_table(bench, found):
    """The results table of strategies/README.md: one row per strategy (and variant)."""
    def median(workload, entry, **want):
        runs = [e for _, e in bench.select(workload, **want) if entry in e]
        return runs[0][entry]["median"] if runs else None

    n = found["map"].get("n")
    sweep = found["dispatch"].get("sweep", {})
    k_max = max((k for ks in sweep.values() for k in ks), default=None)

    def penalty(op, lab):
        row = sweep.get(op, {}).get(k_max, {})
        t, base = row.get(f"{lab}/vec"), row.get("01_template_functor/vec")
        return t / base if t and base else None

    big = max((shape for shape, _ in found["matmul"]), key=lambda x: int(x.split("x")[0]), default=None)
    labels = sorted({label(e) for (w, _), es in bench.problems.items() for e in es if w in ("map", "tasks", "matmul")})
    map_big = next((e for _, e in bench.select("map", k=1, type="f32", op="quadratic", n=n)), {})
    rows = []
    for lab in labels:
        def cell(v, f="{:.2f}"):
            return "–" if v is None else f.format(v)
        forms = {e.split("/", 1)[1]: row["counters"].get("frac_copy") for e, row in map_big.items() if label(e) == lab}
        scalar, best = forms.get("scalar"), max(forms.values(), default=None)
        tiled = next((v for (shape, e), v in found["matmul"].items() if shape == big and label(e) == lab and e.endswith("/tiled")), None)
        if lab == "cublas":
            tiled = 1.0
        blur = found["image"].get((lab, 8))
        rows.append([f"`{lab}`", cell(scalar), cell(best),
                     cell(penalty("quadratic", lab)), cell(penalty("exp_sin_cos", lab)),
                     cell(median("tasks", f"{lab}/per_element", layout="random", distinct=32) or
                          median("tasks", f"{lab}/grouped", layout="random", distinct=32), "{:.0f}"),
                     cell(median("matmul", f"{lab}/naive", semiring="plus_times", shape="1024x1024x1024"), "{:.0f}"),
                     cell(tiled, "{:.3f}"), cell(blur)])
    head = ["strategy", f"map n = {pow2(n)}: scalar, of copy", "best form, of copy",
            f"quadratic k = {k_max}: time / template", f"exp_sin_cos k = {k_max}", "tasks random, 32 ops: µs",
            "GEMM 1024³ naive: µs", f"tiled GEMM {big}: of cuBLAS", "blur r = 8: global / tiled"]
    dev = bench.env.get("device", {}).get("name", "?")
    return (f"Generated by `reports/report.py --readme` from the reference results ({dev}, "
            f"{bench.context.get('date', '?')[:10]}, revision `{bench.context.get('git_revision', '?')}`, "
            f"suite mode `{bench.context.get('cdl_mode', '?')}`, copy {bench.copy_gbs:.0f} GB/s). The full report: "
            "[reports/reference](../reports/reference/).\n\n" + table(head, rows))


def update_readme(path, text):
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    try:
        with open(path) as f:
            doc = f.read()
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it: {e}")
    if begin not in doc or end not in doc:
        raise ResultsError(f"{path}: no '{begin}' ... '{end}' block to replace")
    doc = doc[: doc.index(begin) + len(begin)] + "\n" + text + doc[doc.index(end):]
    with open(path + ".tmp", "w") as f:
        f.write(doc)
    os.replace(path + ".tmp", path)


# ---------------------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="directory with bench.json (and resources.json, build_facts.json, repeat.json)")
    ap.add_argument("--out", help="where report.md and the plots go (default: the results directory)")
    ap.add_argument("--readme", help="also regenerate the results table of this README (strategies/README.md)")
    args = ap.parse_args(argv[1:])
    out_dir = args.out or args.results
    try:
        bench = Bench(os.path.join(args.results, "bench.json"))
        resources = load_optional(os.path.join(args.results, "resources.json"), "cdl-resources/1")
        facts = load_optional(os.path.join(args.results, "build_facts.json"), "cdl-build-facts/1")
        python_path = os.path.join(args.results, "python.json")
        python = PythonPeers(python_path) if os.path.exists(python_path) else None
        if python:
            bench.errors += python.bench.errors
        try:
            report = Report(out_dir)
        except ImportError as e:
            print(f"report: matplotlib is missing for {sys.executable} ({e}); install python3-matplotlib", file=sys.stderr)
            return 2
        os.makedirs(out_dir, exist_ok=True)
        found = {}
        section_header(report, bench)
        found["map"] = section_map(report, bench, resources)
        found["dispatch"] = section_dispatch(report, bench)
        found["precision"] = section_precision(report, bench, found["dispatch"])
        found["tasks"] = section_tasks(report, bench)
        found["jit"] = section_jit(report, bench, found["dispatch"])
        found["image"] = section_image(report, bench)
        found["matmul"] = section_matmul(report, bench)
        found["other"] = section_elementwise_other(report, bench)
        found["python"] = section_python(report, bench, python)
        section_resources(report, resources)
        section_claims(report, bench, facts, found, python)
        section_repeat(report, bench, os.path.join(args.results, "repeat.json"))
        path = report.write("report.md")
        if args.readme:
            update_readme(args.readme, strategies_table(bench, found))
    except ResultsError as e:
        print(f"report: {e}", file=sys.stderr)
        return 2
    print(f"report: {path}")
    print(f"\n{'strategy':28s} {'best form, map n=' + pow2(found['map'].get('n', 0)):>28s} {'of copy':>8s}")
    for s, (entry, frac) in sorted(found["map"].get("best", {}).items()):
        print(f"{s:28s} {entry:>28s} {frac:8.3f}{'' if frac >= COPY_TARGET else '  < ' + str(COPY_TARGET)}")
    if bench.errors:
        print(f"\nreport: {len(bench.errors)} benchmarks FAILED (listed at the top of the report)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
