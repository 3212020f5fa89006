"""Kernel resources from the compiler's report (and the SASS): registers, stack, spills, shared
memory, calls through a register and jump tables, for the map kernels and per source file; every
kernel in resources.md beside the report."""
from collections import defaultdict

from ..document import table
from ..queries import JIT_ENTRIES, MAP_INVOKER, map_kernel, occupancy_missing, short_kernel


def cited(resources):
    """The kernels the report's tables cite by name: each strategy's float map kernel, scalar and vec."""
    found = (
        map_kernel(resources, f"{lab}/{form}")
        for lab in (*MAP_INVOKER, *JIT_ENTRIES)
        for form in ("scalar", "vec")
    )
    return [k for k in found if k]


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
