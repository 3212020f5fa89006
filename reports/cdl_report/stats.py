"""Statistics over repetitions and runs: what counts as a difference.

NOISE is the run-to-run spread below which a difference between two medians is not a finding.
"""
import statistics

NOISE = 0.02  # run-to-run spread below which a difference is not a finding


def median(values):
    return statistics.median(values)


def mode(values):
    return statistics.mode(values)


def span(values, fmt="{:.2f}"):
    """'a–b' over the values (one value when they are equal), '–' when there are none."""
    return "–" if not values else fmt.format(min(values)) + ("" if min(values) == max(values) else "–" + fmt.format(max(values)))
