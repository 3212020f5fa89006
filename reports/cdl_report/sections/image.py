"""Stencils: box blur time against its radius, global against shared-memory tiled."""
from .. import plots
from ..document import table
from ..results import label


def add(doc, bench, noise):
    blurs = sorted(((int(f["r"]), e) for f, e in bench.select("image", op="box_blur")), key=lambda x: x[0])
    if not blurs:
        return {}
    shape = next(f["shape"] for f, _ in bench.select("image", op="box_blur"))
    doc.add(f"## Stencils: box blur against its radius ({shape}), global and shared-memory tiled\n")
    strategies = sorted({label(e) for _, es in blurs for e in es if e.endswith("/tiled")})
    plots.image_blur(doc, blurs, strategies)
    rows, ratio = [], {}
    for rad, es in blurs:
        cells = [rad]
        for s in strategies:
            g, t = es.get(f"{s}/global"), es.get(f"{s}/tiled")
            if g and t:
                ratio[(s, rad)] = g["median"] / t["median"]
                cells.append(f"{ratio[(s, rad)]:.2f}")
            else:
                cells.append("–")
        rows.append(cells)
    doc.add("Global time over tiled time (above 1: tiling pays):\n")
    doc.add(table(["r"] + [f"`{s}`" for s in strategies], rows))
    pays = sorted({rad for (s, rad), v in ratio.items() if s == "01_template_functor" and v > 1 + noise})
    if pays:
        doc.add(f"For the template functor, tiling pays from r = {pays[0]} on.\n")
    return ratio
