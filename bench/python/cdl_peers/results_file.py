"""The results file the runner writes (python.json, schema harness.PYTHON_SCHEMA): the systems' parts
merged into cdl_bench's records with the run's context, the revision it records, and a later call's
systems added to an earlier file (--add), refused where the two are not one device, revision and mode."""
import datetime
import json
import os
import platform
import subprocess
import sys

import numpy

from . import harness


def git_revision(build=None):
    """CDL_GIT_REVISION where it is set (as the build takes it), else the revision the build records
    (BUILD/git_revision, written when it was configured), else git's: a copy of the tree whose .git
    is not its own records the build's."""
    if os.environ.get("CDL_GIT_REVISION"):
        return os.environ["CDL_GIT_REVISION"]
    if build:
        try:
            with open(os.path.join(build, "git_revision")) as f:
                recorded = f.read().strip()
            if recorded:
                return recorded
        except OSError:
            pass
    try:
        return (
            subprocess.run(
                ["git", "rev-parse", "--short=12", "HEAD"],
                capture_output=True,
                text=True,
                cwd=os.path.dirname(os.path.abspath(__file__)),
            ).stdout.strip()
            or "unknown"
        )
    except OSError:
        return "unknown"


# What python.json says where a system's part left its experiments out (harness.run_system).
EXPERIMENTS_LEFT_OUT = "not run in the quick mode: `python3 -m cdl_peers` without --quick runs them"


def merge(parts, quick, cpp_stages=(), build=None):
    ran = [p for p in parts if p.get("status") == "ran"]
    first = ran[0] if ran else {}
    device = first.get("device", {})
    copy = first.get("copy_bandwidth_gbs", 0.0)
    env = {
        "device": device,
        "copy_bandwidth_gbs": copy,
        "copy_measured_by": first.get("system"),
        "git_revision": git_revision(build),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "host": platform.node(),
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    }
    systems = {
        p["system"]: {
            k: v
            for k, v in p.items()
            if k not in ("benchmarks", "experiments", "experiments_left_out", "system")
        }
        for p in parts
    }
    return {
        "context": {
            "date": env["timestamp"],
            "host_name": env["host"],
            "executable": "python3 -m cdl_peers",
            "cdl_environment": json.dumps(env),
            "cdl_mode": "quick" if quick else "full",
            "copy_bandwidth_gbs": str(copy),
            "device": device.get("name", "none"),
            "git_revision": env["git_revision"],
        },
        "benchmarks": [b for p in parts for b in p["benchmarks"]],
        "cdl_python": {
            "schema": harness.PYTHON_SCHEMA,
            "systems": systems,
            "experiments": [e for p in parts for e in p["experiments"]],
            "cpp_jit_stages": list(cpp_stages),
        }
        | (
            {"experiments_left_out": EXPERIMENTS_LEFT_OUT}
            if any(p.get("experiments_left_out") for p in parts)
            else {}
        ),
    }


def refuse(message):
    print(f"cdl_peers: {message}", file=sys.stderr)
    raise SystemExit(2)


def added(earlier_path, doc):
    """doc's systems added to the results file at earlier_path (--add: a run in two calls), or exit
    status 2 saying why they cannot be: the two must come from one device, revision and mode."""
    try:
        with open(earlier_path) as f:
            earlier = json.load(f)
        schema = earlier["cdl_python"]["schema"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        refuse(f"--add: {earlier_path} is not a python.json to add to ({e})")
    if schema != harness.PYTHON_SCHEMA:
        refuse(f"--add: {earlier_path} is a {schema} file, not {harness.PYTHON_SCHEMA}")
    for key in ("device", "git_revision", "cdl_mode"):
        if earlier["context"].get(key) != doc["context"].get(key) and doc["context"].get(key) != "none":
            refuse(
                f"--add: {earlier_path} has {key} {earlier['context'].get(key)!r}, this run"
                f" {doc['context'].get(key)!r}: results of two runs are not set side by side"
            )
    mine = set(doc["cdl_python"]["systems"])
    ours = earlier["cdl_python"]
    earlier["benchmarks"] = [
        b for b in earlier["benchmarks"] if b["run_name"].split("/")[1].split(".")[0] not in mine
    ] + doc["benchmarks"]
    ours["systems"] = {
        **{k: v for k, v in ours["systems"].items() if k not in mine},
        **doc["cdl_python"]["systems"],
    }
    ours["experiments"] = [e for e in ours["experiments"] if e.get("system") not in mine] + doc["cdl_python"][
        "experiments"
    ]
    ours["cpp_jit_stages"] = ours.get("cpp_jit_stages") or doc["cdl_python"]["cpp_jit_stages"]
    return earlier
