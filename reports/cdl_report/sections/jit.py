"""Run-time compilation: what each stage of 06 and 07 costs on the host, and the number of
elements after which a compile has paid for itself."""
from .. import plots
from ..document import table


def add(doc, bench, dispatch):
    if not bench.stages:
        return {}
    doc.add("## Run-time compilation: what it costs and when it pays\n")
    rows = []
    for name, row in sorted(bench.stages.items()):
        rows.append([f"`{name}`", f"{row['median'] / 1000:.3f}", f"{row.get('min', float('nan')) / 1000:.3f}",
                     f"{row.get('max', float('nan')) / 1000:.3f}"])
    doc.add(table(["stage (host wall clock)", "median ms", "min ms", "max ms"], rows))
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
        for cost in ("compile", "disk hit (fresh process)"):
            c = costs[cost]
            if c and saving_per_element_ms > 0:
                n_even = c / saving_per_element_ms
                breakeven[(op, k, cost)] = n_even
                cells.append(f"{n_even:.2e}")
            else:
                cells.append("never")
        rows.append(cells)
    if rows:
        doc.add("**When a compile pays off.** The number of elements (over any number of launches) after which the "
                "JIT kernel (best form) has saved its own compile, or its disk-cache load, against the fastest "
                "strategy that takes the op at run time without a compiler (per-call switch, function pointer, "
                "virtual call; best form):\n")
        doc.add(table(["op", "k", "fastest alternative", "its time / JIT time", "break-even n (compile)",
                       "break-even n (disk cache hit)"], rows))
        plots.jit_breakeven(doc, breakeven)
    out["breakeven"] = breakeven
    return out
