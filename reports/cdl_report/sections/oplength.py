"""An op's length: polynomials of 1 to 64 steps (bench/suite.cpp's op-length sweep) through the
interpreter (16), copy-and-patch's patched kernel (17), the expression JIT's compiled kernel (08) and
a switch over the lengths built in (03), at k = 1, 3 and 64; each time over 08's on the same
problem, and two goals judged from them: the interpreter's (at most GOAL × 08's kernel for an op of
GOAL_STEPS steps, at every k) and copy-and-patch's (at most PATCHED_GOAL × in every cell of the
sweep); and copy-and-patch's goal in the dispatch sweep, at its largest k (every op of the catalogue
at most CATALOGUE_GOAL × the template)."""
from ..document import fmt_time, pow2, table
from ..queries import BASE as TEMPLATE_VEC, k_sweep, penalties
from ..stats import compare, goal_verdict, mark

HEADING = "An op's length: the interpreter against compiled kernels"
BASE = "08_expression_jit/vec"
INTERPRETER, PATCHED = "16_interpreter/vec", "17_copy_and_patch/vec"
OTHERS = ("03_switch/vec", INTERPRETER, PATCHED)
GOAL_STEPS, GOAL, PATCHED_GOAL = 30, 3.0, 1.25
CATALOGUE_GOAL = 1.3


def times(ratio_finding):
    """'1.43×', '(1.00×)' where it is no difference, '1.43×?' where it is not decided (stats.mark)."""
    return mark(*ratio_finding, unit="×")


def ratios(bench, noise):
    """{(steps, k): {"08": µs, entry: (its time / 08's, finding?)}} over the sweep, and
    {(steps, k): {entry: (08's repetitions, its own)}}, what a goal's test reads."""
    out, reps = {}, {}
    for f, es in bench.select("oplength"):
        base = es.get(BASE)
        if not base:
            continue
        row = {"08": base["median"]}
        key = (int(f["steps"]), int(f["k"]))
        for e in OTHERS:
            if e in es:
                ratio, _, finding = compare(base, es[e], noise)
                row[e] = (ratio, finding)
                reps.setdefault(key, {})[e] = (base.get("reps", []), es[e].get("reps", []))
        out[key] = row
    return out, reps


def sweep_goals(bench, noise):
    """17 in the dispatch sweep at the largest k it ran: {"n", "k", "ops": {op: (its time / the
    template's, goal, verdict)}, "refused": [the ops the template ran and 17 did not], "catalogue": the
    verdict for every op}; None where the sweep has no 17."""
    n, sweep = k_sweep(bench)
    if not sweep:
        return None
    pen = penalties(bench, n, noise)
    ks = [k for (_, k), row in pen.items() if PATCHED in row]
    if not ks:
        return None
    top, ops = max(ks), {}
    rows = {f["op"]: es for f, es in bench.select("map", type="f32", n=n, k=str(top))}
    for (op, k), row in pen.items():
        if k == top and PATCHED in row:
            goal = CATALOGUE_GOAL
            es = rows[op]
            reps = (es[TEMPLATE_VEC].get("reps", []), es[PATCHED].get("reps", []))
            ops[op] = (row[PATCHED], goal, goal_verdict(row[PATCHED][0], goal, noise, False, reps))
    refused = sorted(op for (op, k), row in pen.items() if k == top and PATCHED not in row)
    catalogue = every_goal([v for _, _, v in ops.values()], refused)
    return {"n": n, "k": top, "ops": ops, "refused": refused, "catalogue": catalogue}


def every_goal(verdicts, refused=()):
    """One goal over several figures ("at every k", "every op"): missed where one is missed (or an op
    is refused), met where every one is met, else the first other verdict (not decided, or neither)."""
    if refused or "missed" in verdicts:
        return "missed"
    return next((v for v in verdicts if v != "met"), "met")


def find(bench, noise):
    """{"ratios": ratios(), "goal": {k: the interpreter's time over 08's at GOAL_STEPS steps},
    "verdict": (the worst k, the goal's verdict at every k), "patched": 17's ((steps, k) of its
    largest ratio, (ratio, finding), cells, the goal's verdict in every cell), "sweep":
    sweep_goals()}; {} without the sweep."""
    r, reps = ratios(bench, noise)
    if not r:
        return {}
    at = {k: row for (steps, k), row in r.items() if steps == GOAL_STEPS}
    goal = {k: row[INTERPRETER] for k, row in at.items() if INTERPRETER in row}
    worst_k = max(goal, key=lambda k: goal[k][0]) if goal else None
    verdict = (
        every_goal(
            [
                goal_verdict(v[0], GOAL, noise, False, reps[(GOAL_STEPS, k)][INTERPRETER])
                for k, v in goal.items()
            ]
        )
        if goal
        else None
    )
    cells = {key: row[PATCHED] for key, row in r.items() if PATCHED in row}
    worst = max(cells, key=lambda key: cells[key][0]) if cells else None
    return {
        "ratios": r,
        "goal": goal,
        "verdict": (worst_k, verdict),
        "patched": (
            (
                worst,
                cells[worst],
                len(cells),
                every_goal(
                    [
                        goal_verdict(v[0], PATCHED_GOAL, noise, False, reps[key][PATCHED])
                        for key, v in cells.items()
                    ]
                ),
            )
            if cells
            else None
        ),
        "sweep": sweep_goals(bench, noise),
    }


def add(doc, found):
    if not found:
        return
    r, goal = found["ratios"], found["goal"]
    doc.add(f"## {HEADING}\n")
    doc.add(
        "The catalogue's ops are one to seven steps of 08's language; a user's op is often longer. Here"
        " polynomials by Horner's rule of 1 to 64 steps (half multiplies, half additions) run through"
        " 08's compiled kernel, the interpreter (16), copy-and-patch's patched machine code (17: four"
        " elements a thread where its vec image holds the op, a multiply fused into the add after it)"
        " and 03's switch over the lengths"
        " built into it, each validated against the polynomial in float64; each time over 08's on the"
        " same problem (float, n = 2^24 at k = 1 and 3, 2^22 at k = 64), in parentheses where it is no"
        " difference. The interpreter fetches and decodes each step once for all of a thread's lanes: its vec"
        " kernels, from k = 4 on, run four steps of the k loop on one 16-byte vector at once (a step decoded"
        " once per four k steps, for 16 floats), and below k = 4 one k step on two vectors (once per k step,"
        " for 8 floats); each op runs the kernels with the fewest of the slots it saves values in (none, two"
        " or four) that hold it:\n"
    )
    shown = [e for e in OTHERS if any(e in row for row in r.values())]
    rows = [
        [steps, k, fmt_time(row["08"])] + [mark(*row[e]) if e in row else "–" for e in shown]
        for (steps, k), row in sorted(r.items())
    ]
    doc.add(table(["steps", "k", "08's kernel"] + [f"{e[:2]} × 08" for e in shown], rows))
    if goal:
        worst_k, verdict = found["verdict"]
        doc.add(
            f"An op of {GOAL_STEPS} steps through the interpreter takes at most {times(goal[worst_k])} 08's"
            f" kernel (k = {worst_k}) over k = {', '.join(str(k) for k in sorted(goal))}: the goal of at most"
            f" {GOAL:.0f}× at every k is {verdict}.\n"
        )
    if found.get("patched"):
        (steps, k), ratio, cells, verdict = found["patched"]
        doc.add(
            f"Copy-and-patch takes at most {times(ratio)} 08's kernel (an op of {steps} steps, k = {k}) over"
            f" the sweep's {cells} cells: the goal of at most {PATCHED_GOAL}× in every cell is {verdict}.\n"
        )
    sweep = found.get("sweep")
    if sweep:
        ops = sweep["ops"]
        doc.add(
            f"In the dispatch sweep (n = {pow2(sweep['n'])}, k = {sweep['k']}, the largest it ran)"
            " copy-and-patch takes "
            + ", ".join(
                f"{times(ratio)} the template for {op} (at most {goal}×: {verdict})"
                for op, (ratio, goal, verdict) in sorted(ops.items())
            )
            + (f"; it refuses {', '.join(sweep['refused'])} (08 or 16 run them)" if sweep["refused"] else "")
            + f". The goal of at most {CATALOGUE_GOAL}× for every op of the catalogue is"
            f" {sweep['catalogue']}.\n"
        )
