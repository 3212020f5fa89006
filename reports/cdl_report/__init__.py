"""The report generator's modules, one concern each. The command lines beside this package
(reports/report.py, and later reports/compare.py) are thin: they read a results directory with
`results`, compute with `stats`, and write with `document`.

    results.py       the results model: reading and validating bench.json, python.json,
                     resources.json, build_facts.json and repeat.json; the one place that knows
                     Google Benchmark's naming (workload/strategy[.variant]/form/key:value/...)
    stats.py         medians, spread and the noise threshold
    document.py      the Markdown page: tables, number formats, figures, files written whole
    plots.py         every figure, drawn from numbers a section has already computed
    findings.py      the stage before any writing: each section's figures and verdicts from
                     its find(), the claims' last; each section's add() renders them
    sections/        a module per section of the report or part of one (build.py gives the order)
    experiments.py   the Python peers' experiment records: how each went, what it shows
    readme_table.py  the results table of strategies/README.md
    build.py         the whole report: every section in order, then the files
"""
import os
import sys

# The articles' claims and their rules are the fact-check's (factcheck/ at the repository's root),
# which the report's findings call.
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)  # before site-packages: no installed `factcheck` hides this one
