#!/usr/bin/env python3
"""Collects the compiler's resource report of every kernel into one results file.

    reports/resources.py BUILD_DIR OUTPUT.json

The build leaves ptxas's report (-Xptxas=-v) beside each CUDA object as <object>.ptxas
(cmake/ptxas_report.sh). For every kernel this records registers, stack frame, spill stores and
loads and shared memory. When cuobjdump is on PATH it also reads each object's SASS and counts,
per kernel, calls through a register (an indirect CALL: function pointers, virtual functions)
and indirect branches (BRX: a switch's jump table). Without cuobjdump those counts are null
and the report says so. The kernels compiled at run time (06, 07) are not in the build.
"""
import json
import os
import re
import shutil
import subprocess
import sys

ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes cumulative stack size)?"
                  r"(?:, (\d+) bytes smem)?")
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
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return dict(zip(names, out.splitlines()))


def collect(build_dir):
    cuobjdump = shutil.which("cuobjdump")
    kernels = {}
    for root, _, files in os.walk(build_dir):
        for f in sorted(files):
            if not f.endswith(".o.ptxas"):
                continue
            source = re.sub(r"^.*/(\w+)/CMakeFiles/[^/]+\.dir/", r"\1/", os.path.join(root, f[: -len(".o.ptxas")]))
            with open(os.path.join(root, f)) as fh:
                found = parse_ptxas(fh.read(), source)
            sass = {}
            if cuobjdump and found:
                obj = os.path.join(root, f[: -len(".ptxas")])
                run = subprocess.run([cuobjdump, "-sass", obj], capture_output=True, text=True)
                if run.returncode != 0:
                    sys.exit(f"resources: cuobjdump -sass {obj} failed: {run.stderr.strip()}")
                sass = parse_sass(run.stdout)
            for name, k in found.items():
                calls, brx = sass.get(name, (None, None)) if cuobjdump else (None, None)
                k.update(indirect_calls=calls, brx=brx)
                kernels[(source, name)] = k
    names = demangle(sorted({n for _, n in kernels}))
    for (_, mangled), k in kernels.items():
        k["name"] = names.get(mangled, mangled)
    return {"schema": "cdl-resources/1", "sass_inspected": bool(cuobjdump),
            "kernels": sorted(kernels.values(), key=lambda k: (k["source"], k["name"]))}


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    build_dir, output = argv[1], argv[2]
    doc = collect(build_dir)
    if not doc["kernels"]:
        sys.exit(f"resources: no ptxas reports (*.o.ptxas) under {build_dir}; build it first")
    tmp = output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, output)  # never a half-written file under the final name
    sass = "with SASS" if doc["sass_inspected"] else "without SASS (no cuobjdump on PATH)"
    print(f"resources: {len(doc['kernels'])} kernels {sass} -> {output}")


if __name__ == "__main__":
    main(sys.argv)
