#!/usr/bin/env python3
"""Collects the compiler's resource report of every kernel into one results file.

    reports/resources.py BUILD_DIR OUTPUT.json [--occupancy CDL_OCCUPANCY] [--jit CDL_JIT_RESOURCES]

The build leaves ptxas's report (-Xptxas=-v) beside each CUDA object as <object>.ptxas
(cmake/ptxas_report.sh). For every kernel this records registers, stack frame, spill stores and
loads and shared memory. When cuobjdump is on PATH it also reads each object's SASS and counts,
per kernel, calls through a register (an indirect CALL: function pointers, virtual functions)
and indirect branches (BRX: a switch's jump table), from the SASS lines that name them, which
the build wrote beside the object as <object>.sass (CDL_KEEP_SASS=1: cmake/ptxas_report.sh),
where that is there and no older than the object, else from cuobjdump now. Without either those
counts are null and the report says so.

The kernels compiled at run time (06, 07, 08; 10's tiers run these) are not in the build: with --jit
(the build's bench/cdl_jit_resources) each is compiled as its strategy compiles it, with ptxas's -v
from that compiler, and recorded like the others, with `entry`, `op` and `type` (the registry's name,
the catalogue op and the element type) and `source` "jit ENTRY op:OP type:TYPE".

With --occupancy (the build's bench/cdl_occupancy) and cuobjdump, each object's CUBIN is
extracted (in parallel, as the SASS is read) and the program asks the CUDA driver for every
kernel's theoretical occupancy at its launch block size (blocks per SM and the fraction of the
SM's threads). That needs a GPU: without one the occupancy fields are null and `occupancy_missing`
says why. A kernel the driver cannot be asked about keeps null fields and its `occupancy_error`,
and is named on stderr; the others keep theirs.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from cdl_report.document import WriteError, write_json

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
    """[(object path, source as 'dir/file.cu')] for every CUDA object of the build with a ptxas report,
    and 17's images and call images (the kernels its ops are written into, with their resources)."""
    current = objects_in_build(build_dir)
    plugins = os.path.join(build_dir, "plugins")
    calls = sorted(
        glob.glob(os.path.join(plugins, "cdl_calls_*.cubin")),
        key=lambda path: int(re.search(r"_(\d+)\.cubin$", path).group(1)),
    )
    cubins = [os.path.join(plugins, "cdl_images.cubin")] + calls
    out = [(c, "strategies/suite/copy_and_patch/stencils.cu") for c in cubins if os.path.exists(c + ".ptxas")]
    for root, _, files in os.walk(build_dir):
        for f in sorted(files):
            if f.endswith(".o.ptxas"):
                obj = os.path.join(root, f[: -len(".ptxas")])
                if current is None or os.path.normpath(os.path.abspath(obj)) in current:
                    out.append((obj, re.sub(r"^.*/(\w+)/CMakeFiles/[^/]+\.dir/", r"\1/", obj[: -len(".o")])))
    return out


def in_parallel(fn, items, what):
    """[fn(item) for item in items], a thread per CPU (each call waits on a cuobjdump of its own),
    and a line on stderr: how long it took, and which item took longest."""
    start, took = time.perf_counter(), {}

    def timed(item):
        t = time.perf_counter()
        out = fn(item)
        took[item] = time.perf_counter() - t
        return out

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        out = list(pool.map(timed, items))
    if took:
        slowest = max(took, key=took.get)
        name = slowest[-1] if isinstance(slowest, tuple) else slowest
        print(
            (
                f"resources: {what} of {len(took)} objects in {time.perf_counter() - start:.1f} s "
                f"(the longest {took[slowest]:.1f} s: {os.path.basename(name)})"
            ),
            file=sys.stderr,
        )
    return out


def cuobjdump_run(args, cwd=None):
    """cuobjdump's output; a failure ends the program, naming the command and what it said."""
    run = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"resources: {' '.join(args[1:])} failed: {run.stderr.strip()}")
    return run.stdout


def device_links(build_dir):
    """{a target's object folder ('NAME.dir'): its device-link object}: CMake links a target of
    relocatable device code (CUDA_SEPARABLE_COMPILATION) into cmake_device_link.o, the one place its
    kernels can be loaded from, the device runtime's symbols resolved."""
    return {
        os.path.basename(root): os.path.join(root, "cmake_device_link.o")
        for root, _, files in os.walk(build_dir)
        if "cmake_device_link.o" in files
    }


def ask_occupancy(program, lines):
    """(cdl_occupancy's records, one per line 'NAME<tab>CUBIN...', None), or (None, why)."""
    start = time.perf_counter()
    run = subprocess.run([program], input="\n".join(lines) + "\n", capture_output=True, text=True)
    print(f"resources: {os.path.basename(program)} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    if run.returncode != 0:
        return (
            None,
            f"{os.path.basename(program)}: {run.stderr.strip() or 'exit status ' + str(run.returncode)}",
        )
    return json.loads(run.stdout), None


def jit_kernels(program, arch, occupancy_program, cuobjdump):
    """The run-time strategies' kernels (cdl_jit_resources), each as a record of its own: ptxas's -v
    text parsed as the build's, the SASS counts and the occupancy asked of its CUBIN, and the
    registry entry, op and type it serves."""
    with tempfile.TemporaryDirectory(prefix="cdl_jit_resources.") as tmp:
        start = time.perf_counter()
        run = subprocess.run([program, arch, tmp], capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"resources: {os.path.basename(program)} failed: {run.stderr.strip()}")
        records = json.loads(run.stdout)
        print(
            f"resources: {len(records)} kernels compiled at run time in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
        cubins = [r["cubin"] for r in records]
        sass = (
            dict(
                zip(
                    cubins,
                    in_parallel(
                        lambda cubin: parse_sass(cuobjdump_run([cuobjdump, "-sass", cubin])),
                        cubins,
                        "SASS of the kernels compiled at run time",
                    ),
                )
            )
            if cuobjdump
            else {}
        )
        out = []
        for r in records:
            source = f"jit {r['entry']} op:{r['op']} type:{r['type']}"
            k = parse_ptxas(r["ptxas"], source).get(r["kernel"])
            if k is None:
                raise SystemExit(
                    f"resources: {source}: no ptxas -v report of {r['kernel']} in the compiler's log"
                )
            calls, brx = sass.get(r["cubin"], {}).get(r["kernel"], (None, None))
            k.update(entry=r["entry"], op=r["op"], type=r["type"], indirect_calls=calls, brx=brx)
            out.append((k, r["cubin"]))
        answers, why = (
            ask_occupancy(occupancy_program, [f"{k['kernel']}\t{cubin}" for k, cubin in out])
            if occupancy_program
            else (None, "not asked for")
        )
    for i, (k, _) in enumerate(out):
        o = answers[i] if answers else {}
        k.update(block=o.get("block"), blocks_per_sm=o.get("blocks_per_sm"), occupancy=o.get("occupancy"))
        if "error" in o:
            k["occupancy_error"] = o["error"]
    return [k for k, _ in out], why


def occupancy(kernels, cuobjdump, program, build_dir):
    """({(object, mangled name): cdl_occupancy's record}, None), or (None, why) when it cannot run.
    A kernel the driver could not be asked about has a record with its `error` instead."""
    links = device_links(build_dir)

    def candidates(obj):
        # The target's folder is the 'NAME.dir' above the object, which CMake places under the
        # source's own folders (strategies/suite/15_device_launch.cu's under NAME.dir/suite/).
        folders = os.path.normpath(os.path.dirname(obj)).split(os.sep)
        link = links.get(next((f for f in reversed(folders) if f.endswith(".dir")), None))
        return [obj] + ([link] if link else [])

    with tempfile.TemporaryDirectory(prefix="cdl_occupancy.") as tmp:

        def cubins_of(numbered):
            i, obj = numbered
            if obj.endswith(".cubin"):  # 17's images: a CUBIN already, for its kernels' architecture
                return {k["arch"]: os.path.abspath(obj) for (o, _), k in kernels.items() if o == obj}
            where = os.path.join(tmp, str(i))
            os.mkdir(where)
            cuobjdump_run([cuobjdump, "-xelf", "all", os.path.abspath(obj)], cwd=where)
            return {
                c.rsplit(".", 2)[-2]: os.path.join(where, c)
                for c in os.listdir(where)
                if c.endswith(".cubin")
            }

        objects = sorted({c for o, _ in kernels for c in candidates(o)})
        cubins = dict(zip(objects, in_parallel(cubins_of, list(enumerate(objects)), "CUBINs")))
        asked, lines = [], []
        for (o, name), k in kernels.items():
            paths = [cubins[c][k["arch"]] for c in candidates(o) if k["arch"] in cubins[c]]
            if paths:
                asked.append((o, name))
                lines.append("\t".join([name, *paths]))
        answers, why = ask_occupancy(program, lines)
        if answers is None:
            return None, why
    found = dict(zip(asked, answers))  # in the order asked: a name may be in several objects
    return {
        key: found.get(key, {"error": f"no {k['arch']} CUBIN in {key[0]}"}) for key, k in kernels.items()
    }, None


def object_sass(cuobjdump, obj):
    """The object's SASS: what the build kept beside it, when no older than the object, else cuobjdump's."""
    kept = obj + ".sass"
    if os.path.exists(kept) and os.path.getmtime(kept) >= os.path.getmtime(obj):
        with open(kept) as f:
            return f.read()
    return cuobjdump_run([cuobjdump, "-sass", obj])


def collect(build_dir, occupancy_program=None, jit_program=None):
    cuobjdump = shutil.which("cuobjdump")
    reports = []
    for obj, source in objects_with_reports(build_dir):
        with open(obj + ".ptxas") as fh:
            reports.append((obj, parse_ptxas(fh.read(), source)))
    with_kernels = [obj for obj, found in reports if found]
    sass = (
        dict(
            zip(
                with_kernels,
                in_parallel(lambda obj: parse_sass(object_sass(cuobjdump, obj)), with_kernels, "SASS"),
            )
        )
        if cuobjdump
        else {}
    )
    kernels = {}
    for obj, found in reports:
        for name, k in found.items():
            calls, brx = sass[obj].get(name, (None, None)) if cuobjdump else (None, None)
            k.update(indirect_calls=calls, brx=brx)
            kernels[(obj, name)] = k
    doc = {"schema": "cdl-resources/1", "sass_inspected": bool(cuobjdump)}
    occupancies, missing = None, "not asked for (reports/resources.py --occupancy)"
    if occupancy_program and not cuobjdump:
        missing = "no cuobjdump to extract the CUBINs"
    elif occupancy_program:
        occupancies, missing = occupancy(kernels, cuobjdump, occupancy_program, build_dir)
    for key, k in kernels.items():
        o = (occupancies or {}).get(key) or {}
        k.update(block=o.get("block"), blocks_per_sm=o.get("blocks_per_sm"), occupancy=o.get("occupancy"))
        if "error" in o:
            k["occupancy_error"] = o["error"]
    if occupancies is None:
        doc["occupancy_missing"] = missing
    jit = []
    if jit_program and kernels:
        arch = next(iter(kernels.values()))["arch"].removeprefix("sm_")
        jit, _ = jit_kernels(
            jit_program, arch, occupancy_program if occupancies is not None else None, cuobjdump
        )
    names = demangle(sorted({n for _, n in kernels} | {k["kernel"] for k in jit}))
    for k in list(kernels.values()) + jit:
        k["name"] = names.get(k["kernel"], k["kernel"])
    doc["kernels"] = sorted(list(kernels.values()) + jit, key=lambda k: (k["source"], k["name"]))
    return doc


def main(argv):
    args = argv[1:]
    programs = {}
    for flag in ("--occupancy", "--jit"):
        if flag in args:
            i = args.index(flag)
            programs[flag] = args[i + 1] if i + 1 < len(args) else sys.exit(__doc__)
            del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    build_dir, output = args
    doc = collect(build_dir, programs.get("--occupancy"), programs.get("--jit"))
    if not doc["kernels"]:
        sys.exit(f"resources: no ptxas reports (*.o.ptxas) under {build_dir}; build it first")
    try:
        write_json(output, doc)  # never a half-written file under the final name
    except WriteError as e:
        sys.exit(f"resources: {e}")
    sass = "with SASS" if doc["sass_inspected"] else "without SASS (no cuobjdump on PATH)"
    skipped = [k for k in doc["kernels"] if "occupancy_error" in k]
    for k in skipped:
        print(
            f"resources: no occupancy for {k['source']}: {k['name']}: {k['occupancy_error']}", file=sys.stderr
        )
    if "occupancy_missing" in doc:
        occupancy_note = f", no occupancy ({doc['occupancy_missing']})"
    else:
        asked = len(doc["kernels"]) - len(skipped)
        occupancy_note = f", occupancy for {asked} (the driver could not be asked about {len(skipped)})"
    print(f"resources: {len(doc['kernels'])} kernels {sass}{occupancy_note} -> {output}")


if __name__ == "__main__":
    main(sys.argv)
