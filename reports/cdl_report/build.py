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
from .stats import noise_threshold


def write_report(results, out_dir, readme=None, others=()):
    """Writes out_dir/report.md and its plots from `results` (a results.Results), with a section
    comparing it with each of `others` (other devices' Results); returns (path, found)."""
    doc = Document(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    bench = results.bench
    noise, noise_how = noise_threshold(bench, results.repeat)
    found = {"noise": noise}
    header.add(doc, bench, noise, noise_how, results.resources)
    found["flush"] = flush.add(doc, bench, noise)
    found["map"] = map.add(doc, bench, results.resources)
    found["dispatch"] = dispatch.add(doc, bench, noise, results.resources)
    found["precision"] = precision.add(doc, bench, found["dispatch"])
    found["tasks"] = tasks.add(doc, bench)
    found["objects"] = objects.add(doc, bench, noise, results.profile)
    found["jit"] = jit.add(doc, bench, found["dispatch"], noise, results.jit_uncached)
    found["tiered"] = tiered.add(doc, results.tiered or bench, noise)
    found["image"] = image.add(doc, bench, noise)
    found["matmul"] = matmul.add(doc, bench)
    found["other"] = elementwise.add(doc, bench)
    found["python"] = python_peers.add(doc, bench, results.python, found["jit"].get("costs"))
    resources.add(doc, results.resources)
    found["profile"] = profile.add(doc, bench, results.profile)
    claims.add(doc, bench, results.facts, found, results.python)
    found["devices"] = devices.add(doc, results, others)
    repeat.add(doc, bench, results.repeat, noise)
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
