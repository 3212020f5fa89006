#!/usr/bin/env python3
"""Collects the compiler's resource report of every kernel into one results file.

    reports/resources.py BUILD_DIR OUTPUT.json [--occupancy CDL_OCCUPANCY]

The build leaves ptxas's report (-Xptxas=-v) beside each CUDA object as <object>.ptxas
(cmake/ptxas_report.sh). For every kernel this records registers, stack frame, spill stores and
loads and shared memory. When cuobjdump is on PATH it also reads each object's SASS and counts,
per kernel, calls through a register (an indirect CALL: function pointers, virtual functions)
and indirect branches (BRX: a switch's jump table). Without cuobjdump those counts are null
and the report says so. The kernels compiled at run time (06, 07) are not in the build.

With --occupancy (the build's bench/cdl_occupancy) and cuobjdump, each object's CUBIN is
extracted and the program asks the CUDA runtime for every kernel's theoretical occupancy at its
launch block size (blocks per SM and the fraction of the SM's threads). That needs a GPU: without
one the occupancy fields are null and `occupancy_missing` says why.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(
    r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes cumulative stack size)?"
    r"(?:, (\d+) bytes smem)?"
)
FUNCTION = re.compile(r"^\s*Function : (\S+)")
# CALL.REL.NOINC R12 / CALL.ABS.NOINC R4: the target is in a register, not an immediate.
INDIRECT_CALL = re.compile(r"\bCALL\.(?:REL|ABS)(?:\.NOINC)? R\d+")
BRX = re.compile(r"\bBRX\b")


def parse_ptxas(text, source):
    """ptxas -v text -> {mangled name: record} for the entry functions (kernels) in it."""
    kernels, current, frame = {}, None, None
    for line in text.splitlines():
        if m := ENTRY.search(line):
            current, frame = {"source": source, "kernel": m.group(1), "arch": m.group(2)}, None
            kernels[m.group(1)] = current
        elif current is None:
            continue
        elif "Function properties for" in line:
            frame = line.split("Function properties for", 1)[1].strip()
        elif (m := FRAME.search(line)) and frame == current["kernel"]:
            current.update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        elif m := USED.search(line):
            current.update(registers=int(m.group(1)), smem=int(m.group(3) or 0))
            current = None
    return kernels


def parse_sass(text):
    """cuobjdump -sass text -> {mangled name: (indirect calls, BRX)}."""
    counts, name = {}, None
    for line in text.splitlines():
        if m := FUNCTION.match(line):
            name = m.group(1)
            counts[name] = [0, 0]
        elif name:
            counts[name][0] += bool(INDIRECT_CALL.search(line))
            counts[name][1] += bool(BRX.search(line))
    return counts


def demangle(names):
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(
        ["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True
    ).stdout
    return dict(zip(names, out.splitlines()))


def objects_in_build(build_dir):
    """The objects the build makes now (compile_commands.json), so that a stale one left in the
    directory by an earlier layout of the sources is not reported; None when the file is absent."""
    try:
        with open(os.path.join(build_dir, "compile_commands.json")) as f:
            commands = json.load(f)
    except FileNotFoundError:
        return None
    out = set()
    for c in commands:
        m = re.search(r"(?:^|\s)-o\s+(\S+)", c["command"])
        if m:
            out.add(os.path.normpath(os.path.join(c["directory"], m.group(1))))
    return out


def objects_with_reports(build_dir):
    """[(object path, source as 'dir/file.cu')] for every CUDA object of the build with a ptxas report."""
    current = objects_in_build(build_dir)
    out = []
    for root, _, files in os.walk(build_dir):
        for f in sorted(files):
            if f.endswith(".o.ptxas"):
                obj = os.path.join(root, f[: -len(".ptxas")])
                if current is None or os.path.normpath(os.path.abspath(obj)) in current:
                    out.append((obj, re.sub(r"^.*/(\w+)/CMakeFiles/[^/]+\.dir/", r"\1/", obj[: -len(".o")])))
    return out


def occupancy(kernels, cuobjdump, program):
    """{(object, mangled name): cdl_occupancy's record}, or (None, why) when it cannot run."""
    with tempfile.TemporaryDirectory(prefix="cdl_occupancy.") as tmp:
        lines = []
        for i, obj in enumerate(sorted({o for o, _ in kernels})):
            where = os.path.join(tmp, str(i))
            os.mkdir(where)
            run = subprocess.run(
                [cuobjdump, "-xelf", "all", os.path.abspath(obj)], cwd=where, capture_output=True, text=True
            )
            if run.returncode != 0:
                sys.exit(f"resources: cuobjdump -xelf all {obj} failed: {run.stderr.strip()}")
            cubins = {
                c.rsplit(".", 2)[-2]: os.path.join(where, c)
                for c in os.listdir(where)
                if c.endswith(".cubin")
            }
            for (o, name), k in kernels.items():
                if o == obj and k["arch"] in cubins:
                    lines.append(f"{cubins[k['arch']]}\t{name}")
        run = subprocess.run([program], input="\n".join(lines) + "\n", capture_output=True, text=True)
        if run.returncode != 0:
            return (
                None,
                f"{os.path.basename(program)}: {run.stderr.strip() or 'exit status ' + str(run.returncode)}",
            )
        by_name = {r["kernel"]: r for r in json.loads(run.stdout)}
    return {(o, n): by_name.get(n) for o, n in kernels}, None


def collect(build_dir, occupancy_program=None):
    cuobjdump = shutil.which("cuobjdump")
    kernels = {}
    for obj, source in objects_with_reports(build_dir):
        with open(obj + ".ptxas") as fh:
            found = parse_ptxas(fh.read(), source)
        sass = {}
        if cuobjdump and found:
            run = subprocess.run([cuobjdump, "-sass", obj], capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"resources: cuobjdump -sass {obj} failed: {run.stderr.strip()}")
            sass = parse_sass(run.stdout)
        for name, k in found.items():
            calls, brx = sass.get(name, (None, None)) if cuobjdump else (None, None)
            k.update(indirect_calls=calls, brx=brx)
            kernels[(obj, name)] = k
    doc = {"schema": "cdl-resources/1", "sass_inspected": bool(cuobjdump)}
    occupancies, missing = None, "not asked for (reports/resources.py --occupancy)"
    if occupancy_program and not cuobjdump:
        missing = "no cuobjdump to extract the CUBINs"
    elif occupancy_program:
        occupancies, missing = occupancy(kernels, cuobjdump, occupancy_program)
    for key, k in kernels.items():
        o = (occupancies or {}).get(key) or {}
        k.update(block=o.get("block"), blocks_per_sm=o.get("blocks_per_sm"), occupancy=o.get("occupancy"))
    if occupancies is None:
        doc["occupancy_missing"] = missing
    names = demangle(sorted({n for _, n in kernels}))
    for (_, mangled), k in kernels.items():
        k["name"] = names.get(mangled, mangled)
    doc["kernels"] = sorted(kernels.values(), key=lambda k: (k["source"], k["name"]))
    return doc


def main(argv):
    args = argv[1:]
    program = None
    if "--occupancy" in args:
        i = args.index("--occupancy")
        program = args[i + 1] if i + 1 < len(args) else sys.exit(__doc__)
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    build_dir, output = args
    doc = collect(build_dir, program)
    if not doc["kernels"]:
        sys.exit(f"resources: no ptxas reports (*.o.ptxas) under {build_dir}; build it first")
    tmp = output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, output)  # never a half-written file under the final name
    sass = "with SASS" if doc["sass_inspected"] else "without SASS (no cuobjdump on PATH)"
    occupancy_note = (
        f", no occupancy ({doc['occupancy_missing']})" if "occupancy_missing" in doc else ", with occupancy"
    )
    print(f"resources: {len(doc['kernels'])} kernels {sass}{occupancy_note} -> {output}")


if __name__ == "__main__":
    main(sys.argv)
