"""When a compile pays off: the number of elements after which 06's kernel has saved its compile
against the route that runs the same user's op with none (the interpreter), per op and k of the
dispatch sweep, and the plot of it."""
from .. import plots
from ..document import table
from ..stats import compare

# The route that runs a user's op with no compiler, and so the one a compile for a new op competes
# with: a switch, a pointer table or a virtual call serve only the ops the program was built with.
RIVAL = "16_interpreter/"


# Each compile the break-even is taken for: its key in the compiles' costs, and its column's name.
LABELS = (
    ("first compile, new process", "first compile (new process)"),
    ("compile", "later compile"),
    ("disk hit (fresh process)", "disk-cache hit"),
)


def find(bench, dispatch, noise, c):
    """Per (op, k) of the dispatch sweep: the rival, 06's kernel time over the rival's with whether
    it is a finding, and the break-even n of each compile (None: never, or not decided); and
    {(op, k, which compile): elements}. c: the compiles' costs (jit.find's)."""
    # A compile pays once the time it saves over the route that needs none exceeds it: after n
    # elements, n * (t_rival - t_jit) / n_sweep; a break-even is printed only where the two times
    # differ beyond the noise, and only against a route that runs the same user's op (RIVAL).
    rows, breakeven = [], {}
    # 06's kernel is the skeleton's; 08's vec kernel runs one k loop for all of a thread's values
    # (dispatch.py says how much that alone changes), so its speed against a rival is not the
    # JIT's alone, and 08 is left out here.
    sweep_rows = {
        (f["op"], int(f["k"])): es for f, es in bench.select("map", type="f32", n=dispatch["n"]) if "k" in f
    }
    for (op, k), _ in sorted(dispatch["penalty"].items()):
        es = sweep_rows[(op, k)]
        rivals = {e: r for e, r in es.items() if e.startswith(RIVAL)}
        jits = {
            e: r for e, r in es.items() if e.startswith("06_nvrtc_jit/")
        }  # not `fast_compile`: it has its own cost
        if not rivals or not jits:
            continue
        rival = min(rivals, key=lambda e: rivals[e]["median"])
        jit = min(jits, key=lambda e: jits[e]["median"])
        ratio, _, differs = compare(jits[jit], rivals[rival], noise)
        saving_per_element_ms = (rivals[rival]["median"] - jits[jit]["median"]) / 1000 / dispatch["n"]
        for key, name in LABELS:
            if c[key] and differs and saving_per_element_ms > 0:
                breakeven[(op, k, name)] = c[key] / saving_per_element_ms
        rows.append((op, k, rival, ratio, differs))
    return {"rows": rows, "breakeven": breakeven}


def add(doc, dispatch, found):
    """The break-even table and its finding, from find()'s."""
    breakeven = found["breakeven"]
    rows = []
    for op, k, rival, ratio, differs in found["rows"]:
        cells = [
            op,
            k,
            f"`{rival}`",
            f"{ratio:.2f}" + ("" if differs else " (not decided)" if differs is None else " (no difference)"),
        ]
        for _, name in LABELS:
            cells.append(
                f"{breakeven[(op, k, name)]:.2e}"
                if (op, k, name) in breakeven
                else "not decided"
                if differs is None
                else "never"
            )
        rows.append(cells)
    doc.add(
        "**When a compile pays off.** A compile for a user's op competes with the route that runs the same"
        " op with none, the interpreter (16): the number of elements (over any number of launches) after"
        " which the JIT kernel (06, best form) has saved its compile against it, printed only where the two"
        " kernels' times differ beyond the noise. A switch, a pointer table or a virtual call is no rival:"
        " they run only the ops built into the program"
        + (".\n" if rows else f"; the interpreter was not measured at the sweep's n = {dispatch['n']}.\n")
    )
    if rows:
        doc.detail(
            "When a compile pays off, per op and k",
            table(
                ["op", "k", "rival", "its time / JIT time"] + [f"break-even n: {n}" for _, n in LABELS],
                rows,
            ),
            "Each (op, k) of the dispatch sweep with its rival, the two kernels' ratio and the break-even of"
            " each compile",
        )
        never = sum(1 for r in rows if r[4] == "never")
        undecided = sum(1 for r in rows if r[4] == "not decided")
        if undecided == len(rows):
            doc.add(
                f"Not decided in any of the {len(rows)} (op, k) pairs: the repetitions are too few for the"
                " test to tell the two kernels apart, so no break-even, nor its absence, is found.\n"
            )
            return
        doc.add(
            (
                f"No break-even (the times within the noise, or the interpreter faster) in {never} of"
                f" {len(rows)} (op, k) pairs"
                if never
                else "A break-even in every (op, k) pair the test decides"
                f" ({len(rows) - undecided} of {len(rows)})"
            )
            + (f"; not decided in {undecided} (too few repetitions for the test)" if undecided else "")
            + (
                f"; where the JIT kernel is faster, its compile is repaid after {min(breakeven.values()):.1e}"
                f" elements at the soonest and {max(breakeven.values()):.1e} at the latest.\n"
                if breakeven
                else ".\n"
            )
        )
        if breakeven:
            plots.jit_breakeven(doc, breakeven)
