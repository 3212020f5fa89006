"""What the hardware did: Nsight Compute's counters (profile.json, reports/profile.py) for one
validated launch of each profiled kernel, set out per question the rest of the report asks.

A *wait* is a stall reason other than `selected` (the cycle a warp issues) and `not_selected` (a
warp ready, another picked): each reason's share is of the cycles a warp spent per issued
instruction, as ncu's warp-state statistics count them."""
import math
import re

from ..document import fmt_time, table
from ..queries import top_wait, waits
from ..stats import NOISE

CALLS = (
    "01_template_functor",
    "03_switch",
    "03_switch.hoisted",
    "04_function_pointer.symbol",
    "04_function_pointer.table",
    "05_virtual",
    "06_nvrtc_jit",
    "12_variant_visit",
    "16_interpreter",
)


def pick(profile, workload, entry, problem_has=""):
    """The first kernel of the workload's entry whose problem has every `key=value` of problem_has."""
    wanted = set(problem_has.split())
    return next(
        (
            k
            for k in profile["kernels"]
            if k["workload"] == workload and k["entry"] == entry and wanted <= set(k["problem"].split())
        ),
        None,
    )


def row(label, k, copy_gbs=None):
    gbs = (k["dram_read_bytes"] + k["dram_write_bytes"]) / (k["duration_us"] * 1e3) if k["duration_us"] else 0
    return [
        label,
        fmt_time(k["duration_us"]),
        f"{k['occupancy_achieved']:.2f} / {k['occupancy_theoretical']:.2f}",
        f"{k['registers']:.0f}",
        f"{k['thread_instructions_per_element']:.1f}",
        f"{k['issue_active']:.2f}",
        f"{k['dram_over_minimum']:.2f}" if k.get("dram_over_minimum") is not None else "–",
        f"{gbs:.0f}" + (f" ({gbs / copy_gbs:.2f})" if copy_gbs else ""),
        f"{k['l2_hit_rate']:.2f}" if k.get("l2_hit_rate") is not None else "–",
        (
            f"{k['threads_per_warp_instruction']:.1f}"
            if k.get("threads_per_warp_instruction") is not None
            else "–"
        ),
        waits(k),
    ]


def paired_rows(pairs, first, second, copy):
    """Two rows per (entry, kernel, kernel): the entry's two kernels, one under the other."""
    return [r for e, a, b in pairs for r in (row(e + first, a, copy), row(e + second, b, copy))]


HEADER = [
    "kernel",
    "time",
    "occupancy achieved / theoretical",
    "registers",
    "instructions / element",
    "issue slots busy",
    "DRAM bytes / minimum",
    "DRAM GB/s (of copy)",
    "L2 hit rate",
    "threads / warp instruction",
    "top waits",
]


def find(bench, profile):
    """The kernels each of the counters' questions sets side by side, picked from profile.json: an
    indirect call's (`calls`: {(entry, k): kernel}, and `absent`, the measured entries profiled
    nowhere), the scalar form's against the vec's (`pairs`), divergence in tasks (`tasks`), tiling
    (`tiles`), and the figures the closing note asks for first (`asked`); None without profile.json."""
    if profile is None:
        return None
    calls = {}
    for k_ in (1, 64):
        for e in CALLS:
            k = pick(profile, "map", e + "/vec", f"op=quadratic k={k_}")
            if k:
                calls[(e, k_)] = k
    measured = {entry for (w, _), entries in bench.problems.items() if w == "map" for entry in entries}
    pairs = [
        (e, pick(profile, "map", e + "/scalar", "k=1"), pick(profile, "map", e + "/vec", "k=1"))
        for e in ("01_template_functor", "03_switch", "04_function_pointer.symbol", "05_virtual")
    ]
    catalogue = [
        (
            op,
            pick(profile, "map", "01_template_functor/vec", f"op={op} k=64"),
            pick(profile, "map", "16_interpreter/vec", f"op={op} k=64"),
            pick(profile, "map", "17_copy_and_patch/vec", f"op={op} k=64"),
        )
        for op in ("quadratic", "square", "threshold")
    ]
    tasks = [
        (e, pick(profile, "tasks", e, "layout=uniform"), pick(profile, "tasks", e, "layout=random"))
        for e in ("03_switch/per_element", "04_function_pointer.table/per_element", "05_virtual/per_element")
    ]
    tiles = [
        ("blur, global", pick(profile, "image", "01_template_functor/global")),
        ("blur, tiled", pick(profile, "image", "01_template_functor/tiled")),
        ("GEMM, naive", pick(profile, "matmul", "01_template_functor/naive")),
    ] + [
        (f"GEMM, tiled, {k['entry'].split('/')[0]}", k)
        for k in profile["kernels"]
        if k["workload"] == "matmul" and k["entry"].endswith("/tiled")
    ]
    asked = []
    for e in ("01_template_functor", "03_switch", "04_function_pointer.symbol", "05_virtual"):
        for form, k_ in (("scalar", 1), ("vec", 64)):
            k = pick(profile, "map", f"{e}/{form}", f"k={k_}")
            if k:
                r, s = top_wait(k)
                asked.append(
                    (
                        f"{e}/{form}, k = {k_}",
                        k["occupancy_achieved"],
                        k["thread_instructions_per_element"],
                        r,
                        s,
                    )
                )
    return {
        "context": profile["context"],
        "count": len(profile["kernels"]),
        "calls": calls,
        "absent": [e for e in CALLS if (e, 64) not in calls and e + "/vec" in measured],
        "pairs": [(e, s, v) for e, s, v in pairs if s and v],
        "patched": [(op, t, c) for op, t, _, c in catalogue if t and c],
        "interpreted": [(op, t, i) for op, t, i, _ in catalogue if t and i],
        "tasks": [(e, u, r) for e, u, r in tasks if u and r],
        "tiles": [(label, k) for label, k in tiles if k],
        "asked": asked,
    }


def add(doc, bench, found):
    """The counters' sections, from find()'s kernels."""
    if found is None:
        doc.add(
            "## What the hardware did (Nsight Compute)\n\nNo `profile.json` beside the results (or it was set"
            " aside, as the report's head says): `scripts/profile.sh` runs Nsight Compute over the suite's"
            " kernels and writes it.\n"
        )
        return
    c = found["context"]
    copy = bench.copy_gbs
    doc.add("## What the hardware did (Nsight Compute)\n")
    doc.add(
        f"One launch of each of {found['count']} kernels, after a validated run of the same problem,"
        f" under `ncu` ({c.get('ncu_version', '?')}) on the {c.get('device', '?')}, revision"
        f" `{c.get('git_revision', '?')}` ({c.get('date', '?')}); `scripts/profile.sh` makes `profile.json`."
        " Times are under the profiler (its replays flush the caches before each pass), so set them beside"
        " each other, not beside the benchmarks. "
        + __doc__.split("\n\n", 1)[1].replace("\n", " ")
        + " DRAM GB/s is the bytes ncu counted over the kernel's time, against this run's copy bandwidth.\n"
    )

    # Why an indirect call costs what it costs.
    by = found["calls"]
    rows = [row(f"{e}/vec, k = {k_}", by[(e, k_)], copy) for k_ in (1, 64) for e in CALLS if (e, k_) in by]
    if rows:
        doc.add("### Why an indirect call costs what it costs (map, quadratic, float32, 2^24, vec)\n")
        doc.add(table(HEADER, rows))
        base = by.get(("01_template_functor", 64))
        if base:
            lines = []
            for e in CALLS[1:]:
                k = by.get((e, 64))
                if not k:
                    continue
                extra = (k["thread_instructions_per_element"] - base["thread_instructions_per_element"]) / 64
                r, s = top_wait(k)
                lines.append(
                    f"- `{e}`: {k['thread_instructions_per_element']:.0f} instructions per element against"
                    f" the template's {base['thread_instructions_per_element']:.0f}, {extra:+.1f} per"
                    f" evaluation of the op; issue slots busy {k['issue_active']:.2f} (template"
                    f" {base['issue_active']:.2f}); its top wait `{r}` ({s:.0%})."
                )
            doc.add(
                "At k = 64 the kernel is the SMs' work, not the memory's, so what a call costs is what it"
                " adds to each evaluation:\n\n" + "\n".join(lines) + "\n"
            )
        stacked = [(f"{e}, k = 64", by[(e, 64)]) for e in CALLS if (e, 64) in by]
        if stacked:
            stall_bars(doc, stacked)
        absent = found["absent"]
        if absent:
            doc.add(
                "Measured in this run but not in this `profile.json` (profiled before they existed, or"
                " left out): " + ", ".join(f"`{e}`" for e in absent) + ".\n"
            )

    patched_parts(doc, found["patched"])
    interpreted_parts(doc, found["interpreted"])

    # Why the scalar form stops below copy.
    pairs = found["pairs"]
    if pairs:
        doc.add("### Why the scalar form stops below copy (map, quadratic, float32, 2^24, k = 1)\n")
        doc.add(table(HEADER, paired_rows(pairs, "/scalar", "/vec", copy)))
        e, s, v = pairs[0]
        rs, ss = top_wait(s)
        doc.add(
            f"The same bytes ({s['dram_over_minimum']:.2f} and {v['dram_over_minimum']:.2f} of the minimum)"
            f" at {(s['dram_read_bytes'] + s['dram_write_bytes']) / (s['duration_us'] * 1e3) / copy:.2f} and"
            f" {(v['dram_read_bytes'] + v['dram_write_bytes']) / (v['duration_us'] * 1e3) / copy:.2f} of copy"
            f" for `{e}`: the scalar kernel's warps wait on `{rs}` ({ss:.0%} of their waiting: a load's data)"
            f" with one 4-byte load in flight per thread at {s['occupancy_achieved']:.2f} occupancy, where"
            " each of the vec kernel's loads brings 16 bytes (four times the bytes a load of the scalar"
            f" kernel has in flight) at {v['occupancy_achieved']:.2f}.\n"
        )

    # What divergence does in tasks.
    tasks = found["tasks"]
    if tasks:
        doc.add("### What divergence does in tasks (an op per element, 2^24)\n")
        doc.add(table(HEADER, paired_rows(tasks, ", uniform", ", random/32", copy)))
        doc.add(
            "Uniform (one op) against random (32 ops, each element its own): "
            + "; ".join(
                f"`{e.split('/')[0]}` {u['threads_per_warp_instruction']:.1f} →"
                f" {r['threads_per_warp_instruction']:.1f} threads per warp instruction,"
                f" {u['thread_instructions_per_element']:.0f} →"
                f" {r['thread_instructions_per_element']:.0f} instructions per element, top wait"
                f" `{top_wait(r)[0]}` ({top_wait(r)[1]:.0%})"
                for e, u, r in tasks
            )
            + ". A warp runs each distinct op among its 32 elements in turn, with the others' lanes masked"
            " off.\n"
        )

    # Why tiling pays.
    tiles = found["tiles"]
    if tiles:
        doc.add("### Why tiling pays (blur 3840x2160 r = 4; GEMM 4096^3, float32, (+,×))\n")
        doc.add(table(HEADER, [row(label, k, copy) for label, k in tiles]))
        d = dict(tiles)
        g, t = d.get("GEMM, naive"), d.get("GEMM, tiled, 01_template_functor")
        if g and t:
            doc.add(
                f"The naive GEMM executes {g['thread_instructions_per_element']:.0f} instructions per output"
                f" element and waits on `{top_wait(g)[0]}` ({top_wait(g)[1]:.0%}): every step loads from"
                f" global memory (L2 hit rate {g['l2_hit_rate']:.2f}). The tiled one executes"
                f" {t['thread_instructions_per_element']:.0f}, reading each loaded value from shared memory"
                f" and registers many times, and takes {t['duration_us'] / g['duration_us']:.2f} of its time."
                " In the same tiled loop, against the template's instructions per element: "
                + ", ".join(
                    f"`{label.split(', ')[-1]}`"
                    f" {k['thread_instructions_per_element'] / t['thread_instructions_per_element']:.2f}×"
                    for label, k in tiles
                    if label.startswith("GEMM, tiled") and k is not t
                )
                + ".\n"
            )
    if found["asked"]:
        doc.add("The figures asked for first (map, quadratic, float32, 2^24):\n")
        doc.add(
            table(
                ["kernel", "achieved occupancy", "instructions / element", "top wait"],
                [[a, f"{o:.2f}", f"{i:.1f}", f"{r} ({s:.0%})"] for a, o, i, r, s in found["asked"]],
            )
        )


def parts(t, c):
    """A kernel's time over the template's (under the profiler) and its two counted parts: its warp
    instructions over the template's, and the template's issue slots busy over its own."""
    return (
        c["duration_us"] / t["duration_us"],
        c["warp_instructions_per_element"] / t["warp_instructions_per_element"],
        t["issue_active"] / c["issue_active"],
    )


def which_part(instructions, issue):
    """What 17's extra time is, from its two parts: the same instruction count to two decimals is the
    same work; an issue ratio within the noise is no difference in issue slots; where both differ,
    the larger (in log terms) is named."""
    same_work, same_issue = round(instructions, 2) == 1.0, abs(issue - 1) <= NOISE
    if same_work and same_issue:
        return "no part differs: the same instructions, the same issue slots busy"
    if same_work:
        return f"the same instructions; {issue:.2f}× from the issue slots busy (the stalls the patch writes)"
    if same_issue:
        return f"{instructions:.2f}× the instructions, the same issue slots busy (the steps the patch writes)"
    main = (
        "the instructions" if abs(math.log(instructions)) >= abs(math.log(issue)) else "the issue slots busy"
    )
    return f"{instructions:.2f}× the instructions and {issue:.2f}× from the issue slots busy: mostly {main}"


def patched_parts(doc, items):
    """17 beside the template, op by op: its time as instructions times issue slots."""
    if not items:
        return
    doc.add(
        "### What 17's time over the template's is made of (vec, float32, 2^24, k = 64)\n\n"
        "Where every SM issues for the whole kernel, a kernel takes its warp instructions over the issue"
        " slots it keeps busy. So 17's time over the template's is the product of two counted parts: its"
        " instructions over the template's (what the patch writes against what nvcc wrote for the same op)"
        " and the template's issue slots busy over its own (the stalls each instruction carries).\n"
    )
    rows, lines = [], []
    for op, t, c in items:
        time, instructions, issue = parts(t, c)
        rows.append(
            [
                op,
                f"{time:.2f}",
                f"{c['warp_instructions_per_element']:.2f} / {t['warp_instructions_per_element']:.2f}",
                f"{instructions:.2f}",
                f"{c['issue_active']:.2f} / {t['issue_active']:.2f}",
                f"{issue:.2f}",
                f"{instructions * issue:.2f}",
            ]
        )
        lines.append(f"- `{op}`: {which_part(instructions, issue)}.")
    doc.add(
        table(
            [
                "op",
                "time ×",
                "warp instructions / element (17 / 01)",
                "instructions ×",
                "issue slots busy (17 / 01)",
                "issue ×",
                "instructions × issue",
            ],
            rows,
        )
    )
    doc.add("\n".join(lines) + "\n")


def slots(kernel):
    """The slots an interpreter kernel keeps values in: the last number of its name
    (interpreter_vec<T, V, S, Slots>, strategies/suite/16_interpreter.cu; or float's
    cdl_interpreter_vec_f32_<V>_<S>_<Slots>, interpreter_f32.cu beside it), or None."""
    m = re.search(r"interpreter_vec(?:<[^>]*,\s*|_f32_\d+_\d+_)(\d+)\b", kernel.get("kernel", ""))
    return int(m.group(1)) if m else None


def interpreted_parts(doc, items):
    """16 beside the template, op by op: each op runs the kernel with the slots it needs, and a kernel
    with more slots holds more registers, so fewer warps, so fewer issue slots busy."""
    if not items:
        return
    doc.add(
        "### What 16's time over the template's is made of, op by op (vec, float32, 2^24, k = 64)\n\n"
        "Each op runs the interpreter kernel with the slots its values need (a select's arms, a value"
        " used twice); the same two parts as 17's above, with each kernel's registers and occupancy.\n"
    )
    rows = []
    for op, t, i in items:
        time, instructions, issue = parts(t, i)
        n = slots(i)
        rows.append(
            [
                op,
                "?" if n is None else str(n),
                f"{i['registers']:.0f}",
                f"{i['occupancy_achieved']:.2f} / {i['occupancy_theoretical']:.2f}",
                f"{time:.2f}",
                f"{instructions:.2f}",
                f"{i['issue_active']:.2f} / {t['issue_active']:.2f}",
                f"{issue:.2f}",
            ]
        )
    doc.add(
        table(
            [
                "op",
                "slots",
                "registers",
                "occupancy achieved / theoretical",
                "time ×",
                "instructions ×",
                "issue slots busy (16 / 01)",
                "issue ×",
            ],
            rows,
        )
    )
    least = min(items, key=lambda item: item[2]["occupancy_theoretical"])
    most = max(items, key=lambda item: item[2]["occupancy_theoretical"])
    if least[2]["occupancy_theoretical"] < most[2]["occupancy_theoretical"]:
        op, t, i = least
        time, instructions, issue = parts(t, i)
        fewest, most_op = i["occupancy_theoretical"], most[2]["occupancy_theoretical"]
        doc.add(
            f"The `{op}` kernel holds {i['registers']:.0f} registers a thread, so at most {fewest:.2f} of an"
            f" SM's warps against {most_op:.2f} for the `{most[0]}`'s; against the template:"
            f" {which_part(instructions, issue)}.\n"
        )


def stall_bars(doc, items):
    """Stacked bars: each kernel's waiting cycles per issued instruction, by reason."""
    reasons = []
    for _, k in items:
        for r in k["stalls"]:
            if r not in reasons:
                reasons.append(r)
    fig, ax = doc.plt.subplots(figsize=(8, 0.45 * len(items) + 1.8))
    left = [0.0] * len(items)
    for i, r in enumerate(reasons[:10]):
        vals = [k["stalls"].get(r, 0) * k["stall_cycles_per_issue"] for _, k in items]
        ax.barh([label for label, _ in items], vals, left=left, label=r, color=f"C{i}")
        left = [a + b for a, b in zip(left, vals)]
    ax.invert_yaxis()
    ax.set_xlabel("cycles a warp spends per issued instruction, by state")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(axis="x", alpha=0.3)
    doc.figure(
        "profile_stalls.png",
        fig,
        (
            "Map vec kernels at k = 64: where each warp's cycles go per issued instruction (Nsight Compute's"
            " warp states)"
        ),
    )
