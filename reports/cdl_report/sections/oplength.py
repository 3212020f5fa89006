"""An op's length: polynomials of 1 to 64 steps (bench/suite.cpp's op-length sweep) through the
interpreter (16), copy-and-patch's patched kernel (17), the expression JIT's compiled kernel (08) and
a switch over the lengths built in (03), at k = 1, 3 and 64; each time over 08's on the same
problem, and two goals judged from them: the interpreter's (at most GOAL × 08's kernel for an op of
GOAL_STEPS steps, at every k) and copy-and-patch's (at most PATCHED_GOAL × at k = 1); and
copy-and-patch's goals in the dispatch sweep, at its largest k (the quadratic op at most
SWEEP_GOALS's × the template, every op of the catalogue at most CATALOGUE_GOAL ×)."""
from ..document import fmt_time, pow2, table
from ..stats import compare, goal_verdict
from . import dispatch
from .dispatch import cell

HEADING = "An op's length: the interpreter against compiled kernels"
BASE = "08_expression_jit/vec"
INTERPRETER, PATCHED = "16_interpreter/vec", "17_copy_and_patch/vec"
OTHERS = ("03_switch/vec", INTERPRETER, PATCHED)
GOAL_STEPS, GOAL, PATCHED_GOAL = 30, 3.0, 1.5
SWEEP_GOALS, CATALOGUE_GOAL = {"quadratic": 1.3}, 1.5


def ratios(bench, noise):
    """{(steps, k): {"08": µs, entry: (its time / 08's, finding?)}} over the sweep."""
    out = {}
    for f, es in bench.select("oplength"):
        base = es.get(BASE)
        if not base:
            continue
        row = {"08": base["median"]}
        for e in OTHERS:
            if e in es:
                ratio, _, finding = compare(base, es[e], noise)
                row[e] = (ratio, finding)
        out[(int(f["steps"]), int(f["k"]))] = row
    return out


def sweep_goals(bench, noise):
    """17 in the dispatch sweep at the largest k it ran: {"n", "k", "ops": {op: (its time / the
    template's, goal, verdict)}, "refused": [the ops the template ran and 17 did not], "catalogue": the
    verdict for every op}; None where the sweep has no 17."""
    n, sweep = dispatch.k_sweep(bench)
    if not sweep:
        return None
    pen = dispatch.penalties(bench, n, noise)
    ks = [k for (_, k), row in pen.items() if PATCHED in row]
    if not ks:
        return None
    top, ops = max(ks), {}
    for (op, k), row in pen.items():
        if k == top and PATCHED in row:
            goal = SWEEP_GOALS.get(op, CATALOGUE_GOAL)
            ops[op] = (row[PATCHED][0], goal, goal_verdict(row[PATCHED][0], goal, noise, at_least=False))
    refused = sorted(op for (op, k), row in pen.items() if k == top and PATCHED not in row)
    verdicts = {v for _, _, v in ops.values()}
    catalogue = (
        "missed" if refused or "missed" in verdicts else next((v for v in verdicts if v != "met"), "met")
    )
    return {"n": n, "k": top, "ops": ops, "refused": refused, "catalogue": catalogue}


def find(bench, noise):
    """{"ratios": ratios(), "goal": {k: the interpreter's time over 08's at GOAL_STEPS steps},
    "verdict": (the worst k, the goal's verdict)}; {} without the sweep."""
    r = ratios(bench, noise)
    if not r:
        return {}
    goal = {
        k: row[INTERPRETER][0] for (steps, k), row in r.items() if steps == GOAL_STEPS and INTERPRETER in row
    }
    worst_k = max(goal, key=goal.get) if goal else None
    verdict = goal_verdict(goal[worst_k], GOAL, noise, at_least=False) if goal else None
    patched = r.get((GOAL_STEPS, 1), {}).get(PATCHED)
    return {
        "ratios": r,
        "goal": goal,
        "verdict": (worst_k, verdict),
        "patched": (
            (patched[0], goal_verdict(patched[0], PATCHED_GOAL, noise, at_least=False)) if patched else None
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
        " difference:\n"
    )
    shown = [e for e in OTHERS if any(e in row for row in r.values())]
    rows = [
        [steps, k, fmt_time(row["08"])] + [cell(row[e]) if e in row else "–" for e in shown]
        for (steps, k), row in sorted(r.items())
    ]
    doc.add(table(["steps", "k", "08's kernel"] + [f"{e[:2]} × 08" for e in shown], rows))
    if goal:
        worst_k, verdict = found["verdict"]
        doc.add(
            f"An op of {GOAL_STEPS} steps through the interpreter takes at most {goal[worst_k]:.2f}× 08's"
            f" kernel (k = {worst_k}) over k = {', '.join(str(k) for k in sorted(goal))}: the goal of at most"
            f" {GOAL:.0f}× at every k is {verdict}.\n"
        )
    if found.get("patched"):
        ratio, verdict = found["patched"]
        doc.add(
            f"Copy-and-patch takes {ratio:.2f}× 08's kernel for an op of {GOAL_STEPS} steps at k = 1:"
            f" the goal"
            f" of at most {PATCHED_GOAL}× is {verdict}.\n"
        )
    sweep = found.get("sweep")
    if sweep:
        ops = sweep["ops"]
        doc.add(
            f"In the dispatch sweep (n = {pow2(sweep['n'])}, k = {sweep['k']}, the largest it ran)"
            " copy-and-patch takes "
            + ", ".join(
                f"{ratio:.2f}× the template for {op} (at most {goal}×: {verdict})"
                for op, (ratio, goal, verdict) in sorted(ops.items())
            )
            + (f"; it refuses {', '.join(sweep['refused'])} (08 or 16 run them)" if sweep["refused"] else "")
            + f". The goal of at most {CATALOGUE_GOAL}× for every op of the catalogue is"
            f" {sweep['catalogue']}.\n"
        )
