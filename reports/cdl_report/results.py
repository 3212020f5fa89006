"""The results model: what one run wrote, read and checked before anything is computed from it.

A results directory holds
  bench.json        cdl_bench's Google Benchmark JSON (required)
  python.json       the Python peers (bench/python), the same records plus which systems ran
  resources.json    each kernel's registers, stack and spills (reports/resources.py)
  build_facts.json  what nvcc and NVRTC accept (cdl_build_facts)
  repeat.json       a second run of some of the same benchmarks, for run-to-run spread (the noise)
  jit_cache_disabled.json
                    the jit/ stages again with CUDA_CACHE_DISABLE=1 (the compilers' own caches off)
Every file but bench.json is optional. A file that is present but missing, malformed or foreign
raises ResultsError, and the command lines turn that into exit status 2 with nothing written.

Benchmark names are Google Benchmark's run names as cdl_bench registers them:
    workload/strategy[.variant]/form/key:value/.../iterations:N/manual_time
    jit/<stage>/...                 host-timed costs of the run-time strategies
    copy/cudaMemcpy/bytes:N         the floor
A name is a benchmark's key; what it measured is read from the fields its records carry (their
label: identity, stage_fields), never by taking the name apart. docs/results_format.md describes
every file and field.
"""
import json
import os
from collections import defaultdict

# Names that changed, as older results files hold them: read under today's name.
RENAMED = (
    ("06_nvrtc_jit.fast/", "06_nvrtc_jit.fast_compile/"),
    ("jit/compile/06_fast/", "jit/compile/06_fast_compile/"),
)


def current_name(name):
    for old, new in RENAMED:
        name = name.replace(old, new)
    return name


UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


# The counters a workload's median must carry: the report sets every kernel beside the copy bandwidth.
MEDIAN_COUNTERS = {
    w: ("GB/s", "frac_copy") for w in ("map", "zip", "points", "image", "tasks", "objects", "matmul", "copy")
}
# The fields every kernel of resources.json has (the occupancy's may be null: not measured there).
KERNEL_FIELDS = ("source", "kernel", "name", "registers", "stack", "spill_stores", "spill_loads", "smem")
OCCUPANCY_FIELDS = ("block", "blocks_per_sm", "occupancy")
# The fields of an experiment of python.json, with their types.
EXPERIMENT_FIELDS = {"claim": str, "name": str, "runs": bool, "valid": bool, "error": str, "figures": dict}


class ResultsError(Exception):
    """A results file that cannot be used: missing, not JSON, or not what it claims to be."""


def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file ({what})")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ResultsError(f"{path}: not a readable JSON file ({what}): {e}")


def identity(name, record):
    """(workload, entry, {key: value}) of a benchmark from the fields its records carry (the label,
    a JSON object: docs/results_format.md). A record without them, a label that is not a benchmark's
    fields, or one that says another benchmark than the name, is refused."""
    label = record.get("label") if isinstance(record, dict) else None
    if not label:
        raise ResultsError(
            f"benchmark {name}: its records carry no fields (no label): a file written before records"
            " carried them, which this report no longer reads; run the benchmark again"
        )
    try:
        f = {k: str(v) for k, v in json.loads(label).items()}
        workload, strategy = f.pop("workload"), f.pop("strategy")
    except (ValueError, AttributeError, KeyError) as e:
        raise ResultsError(f"benchmark {name}: its label is not a benchmark's fields ({e}): {label[:80]}")
    variant, form = f.pop("variant", None), f.pop("form", None)  # the copy has neither
    entry = strategy + (f".{variant}" if variant else "") + (f"/{form}" if form else "")
    if not (name + "/").startswith(f"{workload}/{entry}/"):
        raise ResultsError(
            f"benchmark {name}: its label's fields name another benchmark ({workload}/{entry})"
        )
    return workload, entry, f


def stage_fields(name, record):
    """The fields a jit/ stage's records carry (bench/jit_stages.cpp's stage_id: the stage, its route
    and the cache state its text meets where it has them, the problem and its fields), or None in a
    file written before they carried them: there the stage is known by its name alone. A label whose
    stage, route, text or problem fields are not the name's is refused."""
    label = record.get("label") if isinstance(record, dict) else None
    if not label:
        return None
    try:
        f = {k: str(v) for k, v in json.loads(label).items()}
        path = "/".join(["jit", f["stage"]] + [f[k] for k in ("route", "text") if k in f])
    except (ValueError, AttributeError, KeyError) as e:
        raise ResultsError(f"benchmark {name}: its label is not a jit/ stage's fields ({e}): {label[:80]}")
    parts = name.split("/")
    problem = {k: v for k, v in f.items() if k not in ("workload", "stage", "route", "text", "problem")}
    if (
        f.get("workload") != "jit"
        or not (name + "/").startswith(path + "/")
        or ("problem" in f and f["problem"] not in parts)
        or any(f"{k}:{v}" not in parts for k, v in problem.items())
    ):
        raise ResultsError(f"benchmark {name}: its label's fields name another stage: {label[:120]}")
    return f


def strategy_of(entry):
    """'04_function_pointer.table/vec' -> '04_function_pointer': variants and forms are its ways."""
    return entry.split("/")[0].split(".")[0]


def label(entry):
    """'04_function_pointer.table/vec' -> '04_function_pointer.table'."""
    return entry.split("/")[0]


def clocks(context, key):
    """A clock reading of the run's context (cdl_clocks_start/_end, common/clocks.hpp), or None."""
    try:
        reading = json.loads(context[key])
    except (KeyError, TypeError, ValueError):
        return None
    return reading if isinstance(reading, dict) else None


class Bench:
    """One cdl_bench results file: per benchmark, the median time (µs), its spread (cv, min, max)
    and every repetition's time (µs, in `reps`) where the file has them."""

    def __init__(self, path, doc=None, required=True):
        doc = read_json(path, "cdl_bench results") if doc is None else doc
        if (
            not isinstance(doc, dict)
            or not isinstance(doc.get("benchmarks"), list)
            or not isinstance(doc.get("context"), dict)
        ):
            raise ResultsError(
                f"{path}: not a Google Benchmark results file (no 'context' and 'benchmarks' list)"
            )
        self.path, self.context = path, doc["context"]
        if "cdl_environment" not in self.context:
            raise ResultsError(
                f"{path}: a Google Benchmark file, but not from cdl_bench (no cdl_environment in its context)"
            )
        try:
            self.env = json.loads(self.context["cdl_environment"])
            self.copy_gbs = float(self.context["copy_bandwidth_gbs"])
            self.l2_bytes = int(self.env.get("device", {}).get("l2_bytes", 0))
        except (KeyError, TypeError, ValueError) as e:
            raise ResultsError(f"{path}: malformed cdl_environment or copy bandwidth in its context: {e}")
        self.errors, self.rows = [], defaultdict(dict)
        for b in doc["benchmarks"]:
            if not isinstance(b, dict) or "run_name" not in b:
                raise ResultsError(f"{path}: a benchmark entry without a run_name: {str(b)[:80]}")
            name = current_name(b["run_name"])
            if b.get("error_occurred"):
                self.errors.append((name, b.get("error_message", "")))
                continue
            agg = b.get("aggregate_name")
            if agg is None and b.get("run_type") == "aggregate":
                raise ResultsError(f"{path}: benchmark {name}: an aggregate without its aggregate_name")
            if agg is None and b.get("run_type") == "iteration" and "real_time" in b:
                try:  # one repetition: the mean time of its iterations (and its counters, in rep_counters)
                    self.rows[name].setdefault("reps", []).append(
                        float(b["real_time"]) * UNIT_US[b["time_unit"]]
                    )
                    self.rows[name].setdefault("rep_counters", []).append(b)
                except (KeyError, TypeError, ValueError) as e:
                    raise ResultsError(
                        f"{path}: benchmark {name}: a repetition without a usable real_time/time_unit ({e})"
                    )
                continue
            if agg not in ("median", "cv", "min", "max"):
                continue
            try:
                value = float(b["real_time"]) * (UNIT_US[b["time_unit"]] if agg != "cv" else 1.0)
            except (KeyError, TypeError, ValueError) as e:
                raise ResultsError(f"{path}: benchmark {name}: no usable real_time/time_unit ({e})")
            row = self.rows[name]
            row[agg] = value
            if agg == "median":
                for field in MEDIAN_COUNTERS.get(name.split("/")[0], ()):
                    if not isinstance(b.get(field), (int, float)):
                        raise ResultsError(f"{path}: benchmark {name}: its median has no number {field!r}")
                row["counters"] = b
        # A benchmark of one repetition has no aggregates (the interleaved compiles, whose counters are
        # its percentiles): its one repetition is its median.
        for row in self.rows.values():
            if "median" not in row and len(row.get("reps", [])) == 1:
                row["median"], row["counters"] = row["reps"][0], row["rep_counters"][0]
        if required and not self.rows and not self.errors:
            raise ResultsError(f"{path}: no benchmark results in the file")
        self.clocks_start, self.clocks_end = clocks(self.context, "cdl_clocks_start"), clocks(
            self.context, "cdl_clocks_end"
        )
        try:
            self.parts = json.loads(self.context.get("cdl_parts", "[]"))
            self.not_run = json.loads(self.context.get("cdl_not_run", "[]"))  # by reports/merge.py
        except ValueError:
            raise ResultsError(f"{path}: malformed cdl_parts or cdl_not_run in its context")
        # Whether the map skeleton's vec form ran one k loop for all of a thread's values, as 08's
        # kernel does (bench_common.cpp); in older runs 08's loop differed from the others'.
        self.map_loop_fused = self.context.get("cdl_map_vec_loop") == "fused"
        # (workload, problem fields) -> entry -> row
        self.problems = defaultdict(dict)
        self.stages = {}
        self.copies = {}
        for name, row in self.rows.items():
            if "median" not in row:
                continue
            if name.startswith("jit/"):
                stage_fields(name, row.get("counters"))  # a label, where there is one, must be the name's
                self.stages[name.split("/iterations:")[0]] = row
            elif name.startswith("copy/"):
                self.copies[int(name.split("bytes:")[1].split("/")[0])] = row
            else:
                workload, entry, fields = identity(name, row.get("counters"))
                self.problems[(workload, tuple(sorted(fields.items())))][entry] = row
        # Whether the run measured the tiled GEMM's step forms (`tiled_step0`...): builds from before
        # the skeleton had them ran an earlier tiled kernel.
        self.gemm_steps = any(
            "/tiled_step" in e for (w, _), es in self.problems.items() if w == "matmul" for e in es
        )

    def select(self, workload, **want):
        """[(fields dict, {entry: row})] of a workload whose fields match `want` (values as text)."""
        out = []
        for (w, fields), entries in self.problems.items():
            f = dict(fields)
            if w == workload and all(f.get(k) == str(v) for k, v in want.items()):
                out.append((f, entries))
        return out


class PythonPeers:
    """python.json from bench/python (cdl_peers): the same records as cdl_bench's, plus which systems
    ran or were skipped and why, and the function-as-argument experiments."""

    def __init__(self, path):
        doc = read_json(path, "Python peers' results")
        info = doc.get("cdl_python") if isinstance(doc, dict) else None
        if not isinstance(info, dict) or info.get("schema") != "cdl-python/1":
            raise ResultsError(f"{path}: not a cdl-python/1 file (bench/python writes them)")
        self.bench = Bench(path, doc, required=False)
        self.systems, self.experiments = info.get("systems", {}), info.get("experiments", [])
        self.experiments_left_out = info.get("experiments_left_out")  # a quick run's, saying why
        for e in self.experiments:
            for field, kind in EXPERIMENT_FIELDS.items():
                if not isinstance(e, dict) or not isinstance(e.get(field), kind):
                    what = e.get("name", "?") if isinstance(e, dict) else str(e)[:60]
                    raise ResultsError(f"{path}: experiment {what!r}: no {kind.__name__} {field!r}")
        # cdl_bench's new-op JIT stages, timed in the same run as the peers (files from before have none).
        stages = info.get("cpp_jit_stages", [])
        self.cpp_stages = (
            Bench(path, {"context": doc["context"], "benchmarks": stages}, required=False).stages
            if stages
            else {}
        )

    def experiment(self, start):
        return next((e for e in self.experiments if e.get("name", "").startswith(start)), None)


def load_optional(path, schema):
    """A file with a top-level 'schema' field (resources.json, build_facts.json), or None when absent."""
    if not os.path.exists(path):
        return None
    doc = read_json(path, schema)
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise ResultsError(
            f"{path}: not a {schema} file (its 'schema' field is"
            f" {doc.get('schema') if isinstance(doc, dict) else None!r})"
        )
    return doc


def check_resources(path, doc):
    kernels = doc.get("kernels") if doc else []
    if doc is not None and not isinstance(kernels, list):
        raise ResultsError(f"{path}: no 'kernels' list")
    for k in kernels:
        for field in KERNEL_FIELDS + OCCUPANCY_FIELDS:
            if not isinstance(k, dict) or field not in k:
                raise ResultsError(f"{path}: a kernel without {field!r}: {str(k)[:80]}")
            if k[field] is None and field in KERNEL_FIELDS:
                raise ResultsError(f"{path}: kernel {k.get('name')}: {field!r} is null")
    return doc


class Results:
    """Every file of one results directory, read and checked. A file of another device than
    bench.json's, or, for those that measure the same code again (repeat.json,
    jit_cache_disabled.json, tiered.json), of another revision, is set aside: not read, and named
    in `set_aside` (the report's head says so)."""

    def __init__(self, directory):
        self.directory = directory
        self.bench = Bench(os.path.join(directory, "bench.json"))
        self.set_aside = []
        resources = os.path.join(directory, "resources.json")
        self.resources = check_resources(resources, load_optional(resources, "cdl-resources/1"))
        self.facts = load_optional(os.path.join(directory, "build_facts.json"), "cdl-build-facts/1")
        # Nsight Compute's counters for a set of kernels (reports/profile.py, scripts/profile.sh).
        self.profile = load_optional(os.path.join(directory, "profile.json"), "cdl-profile/1")
        if self.profile is not None and not isinstance(self.profile.get("kernels"), list):
            raise ResultsError(f"{os.path.join(directory, 'profile.json')}: no 'kernels' list")
        if self.profile is not None and not self.same(
            "profile.json", self.profile.get("context", {}).get("device")
        ):
            self.profile = None
        python_path = os.path.join(directory, "python.json")
        self.python = PythonPeers(python_path) if os.path.exists(python_path) else None
        if self.python and not self.same("python.json", self.python.bench.context.get("device")):
            self.python = None
        if self.python:
            self.bench.errors += self.python.bench.errors
        self.repeat = self.rerun("repeat.json")
        # The JIT stages again with the driver's compile cache off (CUDA_CACHE_DISABLE=1).
        self.jit_uncached = self.rerun("jit_cache_disabled.json")
        # Strategy 10's streams (cdl_bench's tiered/), where they were run apart from bench.json.
        self.tiered = self.rerun("tiered.json")

    def same(self, name, device, revision=None):
        """Whether a file is of bench.json's device (and revision, when given); if not, it is set aside."""
        mine = self.bench.env.get("device", {}).get("name")
        why = (
            f"of {device}, not {mine}"
            if device != mine
            else (
                f"of revision {revision}, not {self.bench.context.get('git_revision')}"
                if revision is not None and revision != self.bench.context.get("git_revision")
                else None
            )
        )
        if why:
            self.set_aside.append((name, why))
        return why is None

    def rerun(self, name):
        """A file that measured some of bench.json's benchmarks again: its Bench, or None when it is
        absent or set aside."""
        path = os.path.join(self.directory, name)
        if not os.path.exists(path):
            return None
        other = Bench(path)
        device = other.env.get("device", {}).get("name")
        return other if self.same(name, device, other.context.get("git_revision")) else None
