"""Kernel resources from the compiler's report (and the SASS): registers, stack, spills, shared
memory, calls through a register and jump tables, for the map kernels and per source file; every
kernel in resources.md beside the report."""
from collections import defaultdict

from ..document import table


# How each strategy's float map kernel for the quadratic op is named in the build: the invoker in its
# template arguments (or the op's own kernel, for 00 and the hoisted switch). The run-time compiled
# kernels (06, 07, 08) are found by their records' registry entry, op and type (JIT_ENTRIES).
MAP_INVOKER = {
    "00_inline": "",
    "01_template_functor": "cdl::ops::quadratic>",
    "02_device_lambda": "cdl::ops::quadratic>",
    "03_switch": "switch_invoker",
    "03_switch.hoisted": "",
    "04_function_pointer.symbol": "pointer_invoker",
    "04_function_pointer.crowded": "pointer_invoker",
    "04_function_pointer.table": "table_invoker",
    "05_virtual": "virtual_invoker",
    "05_virtual.crowded": "virtual_invoker",
    "12_variant_visit": "variant_invoker",
}


JIT_ENTRIES = (
    "06_nvrtc_jit",
    "06_nvrtc_jit.fast_compile",
    "07_jit_lto",
    "07_jit_lto.preoptimised",
    "08_expression_jit",
    "08_expression_jit.baseline",
)


def map_kernel(resources, entry, op="quadratic"):
    """The resource record of an entry's float map kernel (of op where the kernel is per op),
    e.g. '04_function_pointer.crowded/scalar'; None when the build does not have it."""
    if not resources:
        return None
    for k in resources["kernels"]:
        if k.get("entry") == entry and k.get("op") == op and k.get("type") == "f32":
            return k
    lab, form = entry.split("/")
    strategy, _, variant = lab.partition(".")
    if lab not in MAP_INVOKER:
        return None
    # 04 and 05 are compiled once per workload (strategies/suite/one_workload.hpp), and whole as `crowded`.
    part = (
        ("crowded" if variant == "crowded" else "map")
        if strategy in ("04_function_pointer", "05_virtual")
        else None
    )
    # The suite's form of a strategy is strategies/suite/NN_<name>.cu (strategies/NN_<name>.cu before
    # the lessons took that name: older results say so).
    sources = (
        {f"strategies/{strategy}.{part}.cu"}
        if part
        else {f"strategies/suite/{strategy}.cu", f"strategies/{strategy}.cu"}
    )
    names = {
        "00_inline": f"map_quadratic_{form}<float>",
        "03_switch.hoisted": f"map_hoisted_kernel<float, (cdl::map_form){0 if form == 'scalar' else 1}>",
    }
    want = names.get(lab, f"map_{form}_kernel<float")
    for k in resources["kernels"]:
        if k["source"] in sources and want in k["name"] and MAP_INVOKER[lab] in k["name"]:
            return k
    return None


def short_kernel(name):
    """'void cdl::skeleton::map_vec_kernel<float, X>(args)' -> 'map_vec_kernel<float, X>', without
    namespaces."""
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


def cited(resources):
    """The kernels the report's tables cite by name: each strategy's float map kernel, scalar and vec."""
    found = (
        map_kernel(resources, f"{lab}/{form}")
        for lab in (*MAP_INVOKER, *JIT_ENTRIES)
        for form in ("scalar", "vec")
    )
    return [k for k in found if k]


def occupancy_missing(resources):
    """Why the report has no occupancy, or for which kernels not, in a sentence; None when every
    kernel has it (or there is no resources.json, which its section says)."""
    if not resources:
        return None
    if resources.get("occupancy_missing"):
        return f"`resources.json` has none ({resources['occupancy_missing']})"
    without = [k for k in resources["kernels"] if k.get("occupancy") is None]
    if not without:
        return None
    names = ", ".join(f"`{short_kernel(k['name'])}` ({k['source']})" for k in without[:5])
    more = f" and {len(without) - 5} more" if len(without) > 5 else ""
    return (
        f"`resources.json` has none for {len(without)} of {len(resources['kernels'])} kernels: {names}{more}"
    )


def find(resources):
    """What the section shows of resources.json: the kernels the report cites, 17's images, a row
    per source file, and what was and was not collected; None without the file."""
    if not resources:
        return None
    kernels = resources["kernels"]
    sass = resources.get("sass_inspected")
    per_source = defaultdict(list)
    for k in kernels:
        per_source[k["source"]].append(k)
    return {
        "kernels": kernels,
        "sass": sass,
        "run_time": any(k.get("entry") for k in kernels),
        "missing": occupancy_missing(resources),
        "cited": cited(resources),
        "images": sorted(
            (k for k in kernels if k["kernel"].startswith(("cdl_image_", "cdl_call_vec_"))),
            key=lambda k: (len(k["kernel"]), k["kernel"]),
        ),
        "per_source": [
            [
                f"`{src}`",
                len(ks),
                max(k.get("registers", 0) for k in ks),
                sum(1 for k in ks if k.get("spill_stores", 0) or k.get("spill_loads", 0)),
                sum(1 for k in ks if k.get("stack", 0)),
                "–" if not sass else sum(1 for k in ks if k.get("indirect_calls")),
                "–" if not sass else sum(1 for k in ks if k.get("brx")),
            ]
            for src, ks in sorted(per_source.items())
        ],
    }


HEADER = [
    "source",
    "kernel",
    "registers",
    "blocks/SM × threads (occupancy)",
    "stack B",
    "spill st/ld B",
    "smem B",
    "indirect CALL",
    "BRX",
]


def cells(k):
    """A kernel's row under HEADER."""
    occupancy = (
        "–" if k.get("occupancy") is None else f"{k['blocks_per_sm']} × {k['block']} ({k['occupancy']:.2f})"
    )
    return [
        f"`{k['source'].split('/')[-1]}`",
        f"`{short_kernel(k['name'])[:90]}`",
        k.get("registers", "?"),
        occupancy,
        k.get("stack", 0),
        f"{k.get('spill_stores', 0)} / {k.get('spill_loads', 0)}",
        k.get("smem", 0),
        "–" if k.get("indirect_calls") is None else k["indirect_calls"],
        "–" if k.get("brx") is None else k["brx"],
    ]


def add(doc, f):
    """The section, from find()'s."""
    if not f:
        doc.add(
            "## Kernel resources\n\nNo `resources.json` beside the results: run `reports/resources.py` on the"
            " build.\n"
        )
        return
    doc.add("## Kernel resources (the compiler's report)\n")
    doc.add(
        "From ptxas's resource report for every kernel in the build (`-Xptxas -v`)"
        + (
            ", and the SASS (`cuobjdump -sass`): calls through a register (indirect CALL) and indirect"
            " branches (BRX)."
            if f["sass"]
            else "; the SASS was not inspected (no cuobjdump where the report was collected)."
        )
        + (
            " The kernels compiled at run time (06, 07, 08; 10's tiers run the same) are compiled as their"
            " strategies compile them, with ptxas's report from that compiler (`cdl_jit_resources`)."
            if f["run_time"]
            else " The run-time compiled kernels (06, 07, 08) are not in this run's data."
        )
        + " Occupancy is the CUDA driver's"
        " (`cuOccupancyMaxActiveBlocksPerMultiprocessor`, asked by `cdl_occupancy`) at the kernel's launch"
        " bound, which is the block size the suite launches it with: resident blocks per SM, and the"
        " fraction of the SM's threads they fill"
        + ("" if not f["missing"] else f" (**missing**: {f['missing']})")
        + ".\n"
    )
    doc.add(
        "The float map kernel of each strategy, scalar and vec forms, with the quadratic op where the kernel"
        " is per op:\n"
    )
    doc.add(table(HEADER, [cells(k) for k in f["cited"]], keys=2))
    if f["images"]:
        doc.add(
            "17's patched kernels are the images nvcc compiled with a region of steps, the op's"
            " instructions written into the region: the registers, stack and occupancy are the image's,"
            " whatever op is written in (the smallest image whose region holds the op; `cdl_image_vec_N`"
            " is the vec form, a region of N steps for each of its four elements; `cdl_call_vec_C_S`, an op"
            " calling C functions, C slots between regions of S steps, each slot nvcc's inlined sin, cos,"
            " exp and sqrt behind a switch):\n"
        )
        doc.add(table(HEADER, [cells(k) for k in f["images"]]))
    doc.add("Per source file:\n")
    doc.add(
        table(
            [
                "source",
                "kernels",
                "max registers",
                "kernels that spill",
                "kernels with a stack frame",
                "with indirect calls",
                "with BRX",
            ],
            f["per_source"],
        )
    )
    doc.text_file(
        "resources.md", "# Every kernel's resources\n\n" + table(HEADER, [cells(k) for k in f["kernels"]])
    )
    doc.add("Every kernel: [resources.md](resources.md).\n")
