"""A benchmark's records as cdl_bench writes them into its results file (docs/results_format.md):
Google Benchmark's entries, one per repetition, then the aggregates, each carrying the benchmark's
fields as its label (Problem.identify), so that the report reads a Python peer's record as it reads
a strategy's."""
import statistics


def result_entries(run_name, label, rep_ms, counters, repetitions, iterations):
    """Every repetition, then Google Benchmark's aggregates (median, mean, min, max, cv), in
    microseconds, each with the label (Problem.identify), as cdl_bench writes them."""
    mean = statistics.fmean(rep_ms)
    values = {
        "median": statistics.median(rep_ms),
        "mean": mean,
        "min": min(rep_ms),
        "max": max(rep_ms),
        "cv": (statistics.stdev(rep_ms) / mean) if len(rep_ms) > 1 and mean > 0 else 0.0,
    }
    out = [
        {
            "name": run_name,
            "run_name": run_name,
            "run_type": "iteration",
            "repetitions": repetitions,
            "repetition_index": i,
            "threads": 1,
            "iterations": iterations,
            "real_time": ms * 1e3,
            "cpu_time": 0.0,
            "time_unit": "us",
            "label": label,
        }
        for i, ms in enumerate(rep_ms)
    ]
    for agg, v in values.items():
        e = {
            "name": f"{run_name}_{agg}",
            "run_name": run_name,
            "run_type": "aggregate",
            "repetitions": repetitions,
            "threads": 1,
            "aggregate_name": agg,
            "aggregate_unit": "percentage" if agg == "cv" else "time",
            "iterations": iterations,
            "real_time": v if agg == "cv" else v * 1e3,
            "cpu_time": 0.0,
            "time_unit": "us",
            "label": label,
        }
        e.update(counters)
        out.append(e)
    return out


def error_entry(run_name, label, message):
    return {
        "name": run_name,
        "run_name": run_name,
        "label": label,
        "run_type": "iteration",
        "error_occurred": True,
        "error_message": message,
    }
