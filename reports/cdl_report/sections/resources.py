"""Kernel resources from the compiler's report (and the SASS): registers, stack, spills, shared
memory, calls through a register and jump tables, for the map kernels and per source file; every
kernel in resources.md beside the report."""
from collections import defaultdict

from ..document import table


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


def add(doc, resources):
    if not resources:
        doc.add("## Kernel resources\n\nNo `resources.json` beside the results: run `reports/resources.py` on the build.\n")
        return
    kernels = resources["kernels"]
    sass = resources.get("sass_inspected")
    doc.add("## Kernel resources (the compiler's report)\n")
    doc.add("From ptxas's resource report for every kernel in the build (`-Xptxas -v`)" +
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
    doc.add("The float map kernel (vec form) of each strategy, with the quadratic op where the kernel is per op:\n")
    doc.add(table(header, [cells(k) for k in focus]))
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
    doc.add("Per source file:\n")
    doc.add(table(["source", "kernels", "max registers", "kernels that spill", "kernels with a stack frame",
                   "with indirect calls", "with BRX"], rows))
    doc.text_file("resources.md", "# Every kernel's resources\n\n" + table(header, [cells(k) for k in kernels]))
    doc.add("Every kernel: [resources.md](resources.md).\n")
