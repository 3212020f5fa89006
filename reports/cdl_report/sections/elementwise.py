"""Zip, staging through shared memory against the plain form, and arrays of structs against
structs of arrays."""
from ..document import of_copy, of_copy_note, pow2, table
from ..results import strategy_of


def find(bench):
    """{"staged": {(workload, op, entry): staged time / scalar}, at the largest n; "zip": (n, {(op,
    strategy): its best form's fraction of copy}) at the largest n, or None; "aos_soa": {(n,
    strategy): array of structs' time / struct of arrays'}}."""
    out = {"staged": {}, "zip": None, "aos_soa": {}}
    for workload in ("map", "zip"):
        runs = (
            bench.select(workload, type="f32") if workload == "zip" else bench.select("map", type="f32", k=1)
        )
        if not runs:
            continue
        n = max(int(f["n"]) for f, _ in runs)
        for f, es in runs:
            if int(f["n"]) != n:
                continue
            for entry, row in es.items():
                plain = es.get(entry.replace("/staged", "/scalar"))
                if entry.endswith("/staged") and plain:
                    out["staged"][(workload, f["op"], entry)] = row["median"] / plain["median"]
    zips = bench.select("zip", type="f32")
    if zips:
        n = max(int(f["n"]) for f, _ in zips)
        best = {}
        for f, es in zips:
            if int(f["n"]) == n:
                for e, row in es.items():
                    s = strategy_of(e)
                    best[(f["op"], s)] = max(best.get((f["op"], s), 0), row["counters"].get("frac_copy", 0))
        out["zip"] = (n, best)
    for f, es in bench.select("points"):
        for e, row in es.items():
            if e.endswith("/aos") and e.replace("/aos", "/soa") in es:
                out["aos_soa"][(f["n"], strategy_of(e))] = (
                    row["median"] / es[e.replace("/aos", "/soa")]["median"]
                )
    return out


def add(doc, bench, found):
    doc.add("## Zip, staging through shared memory, and arrays of structs\n")
    if found["staged"]:
        doc.add(
            "Staged through shared memory over the plain scalar form, largest n (below 1: staging pays):\n"
        )
        doc.add(
            table(
                ["workload", "op", "implementation", "staged / scalar"],
                [[w, op, f"`{e}`", f"{v:.3f}"] for (w, op, e), v in sorted(found["staged"].items())],
            )
        )
    if found["zip"]:
        n, best = found["zip"]
        doc.add(f"Zip, n = {pow2(n)}: best form per strategy as a fraction of copy bandwidth:\n")
        doc.add(
            table(
                ["op", "strategy", "of copy"],
                [
                    [op, f"`{s}`", of_copy(v, 3 * 4 * n, bench.l2_bytes)]
                    for (op, s), v in sorted(best.items())
                ],
            )
        )
        doc.add(of_copy_note(bench.l2_bytes) + "\n")
    if found["aos_soa"]:
        doc.add(
            "Points (`x *= 2, y += 1`), array of structs over struct of arrays (time ratio; the same skeleton"
            " serves both):\n"
        )
        doc.add(
            table(
                ["n", "strategy", "AoS / SoA"],
                [[pow2(n), f"`{s}`", f"{v:.3f}"] for (n, s), v in sorted(found["aos_soa"].items())],
            )
        )
