"""Stencils: box blur time against its radius, global against shared-memory tiled."""
from .. import plots
from ..document import table
from ..results import label


def find(bench):
    """{"blurs": [(radius, {entry: row})] by radius, "shape", "strategies" (those with a tiled form),
    "ratio": {(strategy, radius): global time / tiled time}}; {} without the blur."""
    blurs = sorted(((int(f["r"]), e) for f, e in bench.select("image", op="box_blur")), key=lambda x: x[0])
    if not blurs:
        return {}
    strategies = sorted({label(e) for _, es in blurs for e in es if e.endswith("/tiled")})
    ratio = {}
    for rad, es in blurs:
        for s in strategies:
            g, t = es.get(f"{s}/global"), es.get(f"{s}/tiled")
            if g and t:
                ratio[(s, rad)] = g["median"] / t["median"]
    return {
        "blurs": blurs,
        "shape": next(f["shape"] for f, _ in bench.select("image", op="box_blur")),
        "strategies": strategies,
        "ratio": ratio,
    }


def add(doc, found, noise):
    if not found:
        return
    blurs, strategies, ratio = found["blurs"], found["strategies"], found["ratio"]
    doc.add(f"## Stencils: box blur against its radius ({found['shape']}), global and shared-memory tiled\n")
    plots.image_blur(doc, blurs, strategies)
    rows = [
        [rad] + [f"{ratio[(s, rad)]:.2f}" if (s, rad) in ratio else "–" for s in strategies]
        for rad, _ in blurs
    ]
    doc.add("Global time over tiled time (above 1: tiling pays):\n")
    doc.add(table(["r"] + [f"`{s}`" for s in strategies], rows))
    pays = sorted({rad for (s, rad), v in ratio.items() if s == "01_template_functor" and v > 1 + noise})
    if pays:
        doc.add(f"For the template functor, tiling pays from r = {pays[0]} on.\n")
