"""Statistics over repetitions and runs: what counts as a difference.

Two tests stand behind every "A differs from B" in the report:
  - the noise threshold: how far the same benchmark moves from one run to the next, read from the
    run's own repeat data (repeat.json: some benchmarks run again in a new process); without it,
    the fallback NOISE, said to be one;
  - a Mann-Whitney U test on the repetitions of the two benchmarks (as Google Benchmark's
    compare.py does), exact for the few repetitions a suite runs: the two sets of times are told
    apart only when the test says they are not one distribution.
A difference is a finding when it passes both. Pairs measured side by side (a compile with a part
beside one without it, a few milliseconds apart) are told apart by a paired t-test on their
differences instead (paired_p): the pairing takes out the host's drift between repetitions, which
two sets of times compared whole would carry. Where the report says one figure follows another
over a set of kernels, Spearman's rank correlation says it, with its p-value (spearman).
"""
import itertools
import math
import statistics
from collections import Counter
from functools import lru_cache

NOISE = 0.02  # the fallback noise threshold, when the run has no repeat data
NOISE_QUANTILE = 0.95  # the repeat run's differences under which this share of them falls
ALPHA = 0.05  # significance level of the Mann-Whitney U test


def median(values):
    return statistics.median(values)


def mode(values):
    return statistics.mode(values)


def quantile(values, q):
    """The q-quantile by linear interpolation between order statistics (numpy's default)."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def span(values, fmt="{:.2f}"):
    """'a–b' over the values (one value when both ends print alike), '–' when there are none."""
    values = list(values)
    if not values:
        return "–"
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


@lru_cache(maxsize=None)
def _u_counts(m, n):
    """How many of the C(m+n, m) orderings of two untied samples give each value of U (0..m*n)."""
    if m == 0 or n == 0:
        return (1,)
    # U(m, n) counts, by the last element: from the first sample (adds n) or from the second.
    a, b = _u_counts(m - 1, n), _u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(a):
        out[u + n] += c
    for u, c in enumerate(b):
        out[u] += c
    return tuple(out)


def ranks(values):
    """Each value's rank from 1, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r, i = [0.0] * len(values), 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def mann_whitney_p(a, b):
    """Two-sided p-value of the Mann-Whitney U test that samples a and b come from one distribution.
    Exact (every ordering counted) without ties; with ties, the normal approximation with the tie
    correction and a continuity correction. None when either sample is empty."""
    m, n = len(a), len(b)
    if not m or not n:
        return None
    pooled = list(a) + list(b)
    r1 = sum(ranks(pooled)[:m])
    ties = Counter(pooled).values()  # how many values each distinct value stands for
    u = r1 - m * (m + 1) / 2
    u_low = min(u, m * n - u)
    if all(t == 1 for t in ties) and m * n <= 400:
        counts = _u_counts(m, n)
        total = sum(counts)
        return min(1.0, 2 * sum(counts[: int(u_low) + 1]) / total)
    sigma = math.sqrt(m * n / 12 * ((m + n + 1) - sum(t**3 - t for t in ties) / ((m + n) * (m + n - 1))))
    if sigma == 0:
        return 1.0
    z = (abs(u - m * n / 2) - 0.5) / sigma
    return min(1.0, math.erfc(max(z, 0) / math.sqrt(2)))


def t_p(t, nu):
    """Two-sided p-value of Student's t with nu (a whole number) degrees of freedom, exact
    (Abramowitz and Stegun 26.7.3 and 26.7.4)."""
    theta = math.atan(abs(t) / math.sqrt(nu))
    c2, s, term = math.cos(theta) ** 2, 1.0, 1.0
    if nu % 2:  # A = 2/pi (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...)), to cos^(nu-3)
        for k in range(2, nu - 1, 2):
            term *= k / (k + 1) * c2
            s += term
        a = 2 / math.pi * (theta + (math.sin(theta) * math.cos(theta) * s if nu > 1 else 0.0))
    else:  # A = sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...), to cos^(nu-2)
        for k in range(1, nu - 2, 2):
            term *= k / (k + 1) * c2
            s += term
        a = math.sin(theta) * s
    return min(1.0, max(0.0, 1.0 - a))


def paired_p(differences):
    """Two-sided p-value of the paired t-test that paired differences have mean 0 (Student's t with
    n - 1 degrees of freedom). None below two differences. For pairs measured side by side whose
    pairs drift apart (a compile beside another on a host whose speed moves), where a sign test on
    five pairs can never reach p < 0.05 and "all five agree" passes one part in sixteen by chance."""
    n = len(differences)
    if n < 2:
        return None
    mean, sd = statistics.fmean(differences), statistics.stdev(differences)
    if sd == 0:
        return 0.0 if mean else 1.0
    return t_p(mean / (sd / math.sqrt(n)), n - 1)


EXACT_SPEARMAN = 8  # up to this many pairs the p-value counts every ordering (8! = 40320)


def spearman(xs, ys):
    """(Spearman's rank correlation, its two-sided p-value), or None below four pairs or where either
    side has one value only. The p-value is exact up to EXACT_SPEARMAN pairs (the share of the
    orderings of ys whose |rho| reaches the one seen: with four pairs even rho = -1 has p = 1/12),
    and the t approximation with n - 2 degrees of freedom beyond."""
    n = len(xs)
    if n < 4 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    rx, ry = ranks(xs), ranks(ys)
    rho = statistics.correlation(rx, ry)
    if n <= EXACT_SPEARMAN:
        seen = abs(rho) - 1e-12
        orderings = list(itertools.permutations(ry))
        hits = sum(1 for p in orderings if abs(statistics.correlation(rx, p)) >= seen)
        return rho, hits / len(orderings)
    if abs(rho) >= 1:
        return rho, 0.0
    return rho, t_p(rho * math.sqrt((n - 2) / (1 - rho * rho)), n - 2)


def noise_threshold(bench, repeat):
    """(threshold, how it was found): the NOISE_QUANTILE of |repeat / first - 1| over the GPU
    benchmarks both runs have, or NOISE when there is no repeat run."""
    if repeat is None:
        return NOISE, f"no repeat run beside the results: the fallback {NOISE:.0%}"
    diffs = [
        abs(repeat.rows[n]["median"] / bench.rows[n]["median"] - 1)
        for n in bench.rows
        if n in repeat.rows
        and "median" in bench.rows[n]
        and "median" in repeat.rows[n]
        and not n.startswith("jit/")
    ]
    if len(diffs) < 10:
        return NOISE, f"too few benchmarks in the repeat run ({len(diffs)}): the fallback {NOISE:.0%}"
    return (
        quantile(diffs, NOISE_QUANTILE),
        (
            f"the {NOISE_QUANTILE:.0%} quantile of how far {len(diffs)} benchmarks' "
            "medians moved when run again in a new process"
        ),
    )


def can_decide(m, n):
    """Whether samples of m and n repetitions can reach p < ALPHA at all: with 3 and 3 the smallest
    two-sided p is 2/20, and the test can say nothing."""
    return m > 0 and n > 0 and 2 / math.comb(m + n, m) < ALPHA


NOT_DECIDED = "not decided"
WITHIN = "within the noise of it: neither met nor missed"
NOT_TOLD = "not told apart from it: neither met nor missed"


def goal_verdict(value, goal, noise, at_least=True, reps=None, decidable=True):
    """A goal's outcome by one rule for every goal of the report. Within the noise of the goal it is
    neither met nor missed. Beyond it, where the value is a ratio of two measured times (reps: the
    repetitions (a, b) of value = median(b) / median(a)), the U test on b against the goal times a
    decides as it decides any difference: met or missed where it tells them apart, neither where it
    does not, not decided where the repetitions are too few for it. A value set against a constant
    (a model's rate) has no second sample: it is decided by which side it lies, unless the run cannot
    decide anything (decidable False: the quick mode)."""
    if goal and abs(value / goal - 1) <= noise:
        return WITHIN
    side = "met" if (value >= goal) == at_least else "missed"
    if reps is None:
        return side if decidable else NOT_DECIDED
    a, b = reps
    if not can_decide(len(a), len(b)):
        return NOT_DECIDED
    return side if mann_whitney_p([goal * t for t in a], b) < ALPHA else NOT_TOLD


def compare(row_a, row_b, noise):
    """(ratio of medians b/a, p-value, finding) for two benchmark rows. finding: False within the
    noise threshold (no difference); beyond it, True where the U test tells the two apart, False
    where it does not, and None where the repetitions are too few for the test to decide at all
    (p is None then): not decided, which no text may call a difference or the absence of one."""
    a, b = row_a.get("reps", []), row_b.get("reps", [])
    ratio = row_b["median"] / row_a["median"]
    if abs(ratio - 1) <= noise:
        return ratio, None, False
    if not can_decide(len(a), len(b)):
        return ratio, None, None
    p = mann_whitney_p(a, b)
    return ratio, p, p < ALPHA


UNDECIDED = "?"  # after a ratio beyond the noise that the repetitions cannot decide
LEGEND = (
    "a ratio in parentheses is no difference (within the noise, or the repetitions not told apart), one"
    f" with a {UNDECIDED} after it beyond the noise but not decided (too few repetitions for the test)"
)


def undecided_run(bench):
    """The repetitions most benchmarks of a run have, where they are too few for the U test to decide
    anything (the quick mode's 3); None where the run can decide."""
    reps = [len(r.get("reps", [])) for r in bench.rows.values() if r.get("reps")]
    typical = max(set(reps), key=reps.count) if reps else 0
    return typical if typical and not can_decide(typical, typical) else None


def mark(ratio, finding, digits=2, unit=""):
    """A ratio as a table prints it: bare where it is a difference, in parentheses where it is none,
    with UNDECIDED after it where the test could not decide."""
    text = f"{ratio:.{digits}f}{unit}"
    return text if finding else f"{text}{UNDECIDED}" if finding is None else f"({text})"
