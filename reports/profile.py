#!/usr/bin/env python3
"""Nsight Compute's counters for the suite's kernels, into profile.json beside bench.json.

    reports/profile.py BUILD_DIR OUT.json [--ncu NCU] [--only SUBSTRING]

Runs `ncu` over BUILD_DIR/bench/cdl_profile, which validates each target on the suite's own
problem and launches it once more inside cudaProfilerStart/Stop (`--profile-from-start off`), so
each target is one launch after warm-up. Per kernel: achieved and theoretical occupancy,
registers, instructions executed per element (thread instructions, and warp instructions), the
warp-state breakdown (each stall reason's share of the cycles a warp waited per issued
instruction), DRAM bytes read and written against the problem's minimum, the L2 hit rate, branch
uniformity and active threads per warp instruction (divergence), issue-slot utilisation, and the
duration under the profiler, and loads from memory per element (a warp's load instructions by a
global or generic address, over its 32 elements, and the 32-byte sectors L1 was asked for) with
L1's hit rate. The file is written whole or not at all.

Exit status: 0; 1 when a target failed validation or ncu failed; 2 when ncu is missing, the
counters are not permitted (ERR_NVGPUCTRPERM), or the arguments are wrong, with a message.
"""
import argparse
import csv
import datetime
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

from cdl_report.document import WriteError, write_json

STALLS = "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
METRICS = [
    "gpu__time_duration.sum",
    "launch__registers_per_thread",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed.sum",
    "smsp__thread_inst_executed.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
    "smsp__sass_branch_targets_threads_divergent.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sector_hit_rate.pct",
    "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_generic_ld.sum",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    STALLS,
]
SCHEMA = "cdl-profile/1"
STALL_PREFIX, STALL_SUFFIX = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"


class ProfileError(Exception):
    pass


def find_ncu(given):
    for candidate in [given] if given else ["ncu", "/usr/local/cuda/bin/ncu"]:
        path = shutil.which(candidate) or (candidate if os.path.isfile(candidate) else None)
        if path:
            return path
    raise ProfileError(
        "ncu (Nsight Compute) not found on PATH or in /usr/local/cuda/bin: install the CUDA Toolkit's "
        "Nsight Compute, or name it with --ncu"
    )


def number(text):
    """ncu's raw values: '1,234.5' or 'n/a'."""
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def parse_csv(text):
    """ncu --csv --page raw: a header row of metric names, a row of units, a row per kernel."""
    rows = list(csv.reader(io.StringIO(text[text.index('"ID"') :] if '"ID"' in text else text)))
    if len(rows) < 2 or "Kernel Name" not in rows[0]:
        raise ProfileError("ncu wrote no kernel rows (its log is above)")
    header, units, data = rows[0], rows[1], rows[2:]
    return [
        {
            "kernel": r[header.index("Kernel Name")],
            "metrics": {h: number(v) for h, v in zip(header, r)},
            "units": dict(zip(header, units)),
        }
        for r in data
        if len(r) == len(header)
    ]


def derive(target, row):
    """One kernel's record: the target, then what the counters say per element and against the minimum."""
    m, units = row["metrics"], row["units"]
    elements, min_bytes = target["elements"], target["min_bytes"]

    def get(name):
        return m.get(name)

    stalls = {
        k[len(STALL_PREFIX) : -len(STALL_SUFFIX)]: v
        for k, v in m.items()
        if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX) and v is not None
    }
    total = sum(stalls.values())
    share = {k: v / total for k, v in sorted(stalls.items(), key=lambda kv: -kv[1])} if total > 0 else {}
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
    dram = [
        (get(n) or 0) * scale.get(units.get(n, "byte"), 1)
        for n in ("dram__bytes_read.sum", "dram__bytes_write.sum")
    ]
    duration_ns = (get("gpu__time_duration.sum") or 0) * {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(
        units.get("gpu__time_duration.sum", "nsecond"), 1
    )
    return {
        **target,
        "kernel": row["kernel"],
        "duration_us": duration_ns / 1e3,
        "registers": get("launch__registers_per_thread"),
        "occupancy_theoretical": (get("sm__maximum_warps_per_active_cycle_pct") or 0) / 100,
        "occupancy_achieved": (get("sm__warps_active.avg.pct_of_peak_sustained_active") or 0) / 100,
        "thread_instructions_per_element": (get("smsp__thread_inst_executed.sum") or 0) / elements,
        "warp_instructions_per_element": (get("smsp__inst_executed.sum") or 0) / elements,
        "threads_per_warp_instruction": get("smsp__thread_inst_executed_per_inst_executed.ratio"),
        "branch_uniform": (
            None
            if get("smsp__sass_average_branch_targets_threads_uniform.pct") is None
            else get("smsp__sass_average_branch_targets_threads_uniform.pct") / 100
        ),
        "divergent_branch_targets": get("smsp__sass_branch_targets_threads_divergent.sum"),
        "issue_active": (get("smsp__issue_active.avg.pct_of_peak_sustained_active") or 0) / 100,
        "dram_read_bytes": dram[0],
        "dram_write_bytes": dram[1],
        "dram_over_minimum": (dram[0] + dram[1]) / min_bytes if min_bytes else None,
        "l2_hit_rate": (
            None if get("lts__t_sector_hit_rate.pct") is None else get("lts__t_sector_hit_rate.pct") / 100
        ),
        # Load instructions by a global or a generic address (LDG, LD: an object's pointer, which the
        # compiler cannot prove global, is generic), a warp's counted once for its 32 elements: a
        # warp that repeats a load on each of its divergent paths counts it once per path.
        "loads_per_element": (
            sum(get(f"smsp__inst_executed_op_{s}_ld.sum") or 0 for s in ("global", "generic")) * 32 / elements
        ),
        "load_sectors_per_element": (get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") or 0) / elements,
        "l1_hit_rate": (
            None if get("l1tex__t_sector_hit_rate.pct") is None else get("l1tex__t_sector_hit_rate.pct") / 100
        ),
        "stall_cycles_per_issue": total,
        "stalls": share,
    }


def profile(build, ncu, only):
    program = os.path.join(build, "bench", "cdl_profile")
    if not os.access(program, os.X_OK):
        raise ProfileError(f"{program} not found: build the release configuration first")
    extra = ["--only", only] if only else []
    listed = subprocess.run([program, "--list", *extra], capture_output=True, text=True)
    if listed.returncode != 0:
        raise ProfileError(f"cdl_profile --list failed: {listed.stderr.strip()}")
    targets = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "ncu.csv")
        cmd = [ncu, "--profile-from-start", "off", "--csv", "--page", "raw", "--log-file", log]
        cmd += ["--metrics", ",".join(METRICS), program, *extra]
        print("profile: " + " ".join(cmd), file=sys.stderr)
        run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=None, text=True)
        text = open(log).read() if os.path.exists(log) else ""
    if "ERR_NVGPUCTRPERM" in text:
        raise ProfileError(
            "the GPU's performance counters are not permitted for this user (ERR_NVGPUCTRPERM): run as root, "
            "or see https://developer.nvidia.com/ERR_NVGPUCTRPERM"
        )
    if run.returncode != 0:
        sys.stderr.write(text[-3000:])
        raise ProfileError(
            (
                f"ncu or cdl_profile failed (exit status {run.returncode}); a target that failed "
                "validation is named above"
            ),
            1,
        )
    rows = parse_csv(text)
    if len(rows) != len(targets):
        raise ProfileError(
            (
                f"ncu profiled {len(rows)} kernels for {len(targets)} targets: a target launched more or"
                " fewer than one kernel in its profiled range"
            ),
            1,
        )
    version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return {
        "schema": SCHEMA,
        "context": {
            "tool": "cdl_profile under ncu",
            "ncu_version": version[-1] if version else "?",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "git_revision": git_revision(build),
            "device": device_name(),
            "metrics": METRICS,
        },
        "kernels": [derive(t, r) for t, r in zip(targets, rows)],
    }


def git_revision(build):
    """CDL_GIT_REVISION where set (as the build takes it), else the revision the build recorded when it
    was configured (BUILD/git_revision): a tree whose .git is not its own records its build's."""
    given = os.environ.get("CDL_GIT_REVISION")
    try:
        with open(os.path.join(build, "git_revision")) as f:
            return given or f.read().strip() or "?"
    except OSError:
        return given or "?"


def device_name():
    r = subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True
    )
    return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "?"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="the build directory (build/release)")
    ap.add_argument("out", help="profile.json to write")
    ap.add_argument("--ncu", help="the ncu to run (default: on PATH, else /usr/local/cuda/bin/ncu)")
    ap.add_argument("--only", help="only the targets whose name contains this")
    args = ap.parse_args(argv[1:])
    try:
        doc = profile(args.build, find_ncu(args.ncu), args.only)
    except ProfileError as e:
        print(f"profile: {e.args[0]}", file=sys.stderr)
        return e.args[1] if len(e.args) > 1 else 2
    try:
        write_json(args.out, doc)
    except WriteError as e:
        print(f"profile: {e}", file=sys.stderr)
        return 2
    print(f"profile: {len(doc['kernels'])} kernels -> {args.out}")
    print(f"{'kernel':64s} {'occ':>5s} {'inst/el':>8s} {'top stall':>24s}")
    for k in doc["kernels"]:
        top = next(iter(k["stalls"].items()), ("–", 0))
        print(
            f"{k['name'][:64]:64s} {k['occupancy_achieved']:5.2f} "
            f"{k['thread_instructions_per_element']:8.1f} {top[0] + f' {top[1]:.0%}':>24s}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
