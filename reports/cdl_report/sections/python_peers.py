"""The articles' own systems (CuPy, Numba, runtime-compiled source from Python) beside the C++
strategies, problem by problem."""
from ..document import fmt_time, pow2, table
from ..results import label

# The C++ entry each Python peer is set beside: the same form (one element per thread, global reads,
# a per-element switch), written with a template functor, the static best case.
CPP_SAME_FORM = {"map": "01_template_functor/scalar", "zip": "01_template_functor/scalar",
                 "tasks": "03_switch/per_element", "image": "01_template_functor/global"}


def add(doc, bench, python):
    found = {"ratio": {}, "first_ms": {}}
    if python is None:
        return found
    doc.add("## The articles' own systems: CuPy, Numba, runtime-compiled source from Python\n")
    doc.add("The same problems written the ways the source articles write them (`bench/python`), on the inputs and "
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
    doc.add(table(["system", "status", "version, or why not"], rows))
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
        doc.add(f"**{problem}**\n")
        doc.add(table(["peer", "median", "of copy", f"time / C++ `{CPP_SAME_FORM.get(workload, '?')}`", "first call"], rows))
    if python.experiments:
        doc.add("Handing a function to a Numba kernel, as the articles do (article 000's `apply_lambda` kernel, validated "
                "where it runs; the error verbatim where it does not):\n")
        rows = []
        for e in python.experiments:
            extra = f" (first {e['first_ms']:.0f} ms, again {e['reuse_ms']:.2f} ms)" if "first_ms" in e else ""
            rows.append([e["name"], ("runs" + (", valid" if e.get("valid") else ", WRONG RESULT")) if e["runs"] else "fails",
                         (f"`{e['error'].splitlines()[0][:160]}`" if e.get("error") else "–") + extra])
        doc.add(table(["attempt", "result", "error"], rows))
    return found
