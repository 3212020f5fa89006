"""The whole report: every section in the order it appears, then the files, written whole."""
import os

from . import claims, readme_table
from .document import Document
from .sections import (
    devices,
    dispatch,
    elementwise,
    profile,
    flush,
    header,
    image,
    jit,
    map,
    matmul,
    objects,
    precision,
    python_peers,
    repeat,
    resources,
    tasks,
    tiered,
)
from .results import ResultsError
from .stats import noise_threshold


def guarded(name, section, *args):
    """section.add(*args); a field that a results file lacks or garbles past the checks made on
    reading it is an error of the input (exit status 2), named with the section and where it broke."""
    try:
        return section.add(*args)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        where = f"{os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        raise ResultsError(
            f"the {name} section: a results file lacks or garbles what it needs: {type(e).__name__}: {e} "
            f"(at {where})"
        ) from e


def write_report(results, out_dir, readme=None, others=()):
    """Writes out_dir/report.md and its plots from `results` (a results.Results), with a section
    comparing it with each of `others` (other devices' Results); returns (path, found)."""
    doc = Document(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    bench = results.bench
    noise, noise_how = noise_threshold(bench, results.repeat)
    found = {"noise": noise}
    guarded("head", header, doc, bench, noise, noise_how, results.resources, results.set_aside)
    found["flush"] = guarded("flush", flush, doc, bench, noise)
    found["map"] = guarded("map", map, doc, bench, results.resources)
    found["dispatch"] = guarded("dispatch", dispatch, doc, bench, noise, results.resources)
    found["precision"] = guarded("precision", precision, doc, bench, found["dispatch"])
    found["tasks"] = guarded("tasks", tasks, doc, bench)
    found["objects"] = guarded("objects", objects, doc, bench, noise, results.profile)
    found["jit"] = guarded(
        "run-time compilation", jit, doc, bench, found["dispatch"], noise, results.jit_uncached
    )
    found["tiered"] = guarded("tiered", tiered, doc, results.tiered or bench, noise)
    found["image"] = guarded("image", image, doc, bench, noise)
    found["matmul"] = guarded("matmul", matmul, doc, bench)
    found["other"] = guarded("elementwise", elementwise, doc, bench)
    found["python"] = guarded(
        "Python peers", python_peers, doc, bench, results.python, found["jit"].get("costs")
    )
    guarded("kernel resources", resources, doc, results.resources)
    found["profile"] = guarded("profile", profile, doc, bench, results.profile)
    guarded("claims", claims, doc, bench, results.facts, found, results.python)
    found["devices"] = guarded("devices", devices, doc, results, others)
    guarded("run to run", repeat, doc, bench, results.repeat, noise)
    if bench.not_run:
        doc.add("## Not run\n")
        doc.add(
            f"{len(bench.not_run)} benchmarks of the suite are not in these results: the part of the run that holds "
            "them was interrupted before it reached them (`reports/merge.py` keeps no partial result), so every "
            "section above is computed without them:\n"
        )
        doc.add("\n".join(f"- `{n}`" for n in bench.not_run) + "\n")
    path = doc.write("report.md")
    if readme:
        readme_table.update(readme, readme_table.text(bench, found))
    return path, found
