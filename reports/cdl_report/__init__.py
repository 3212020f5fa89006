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
    claims/          the articles' claims (A1-E3), each quoted once with the rule that answers
                     it from the figures, and the table of verdicts
    sections/        a module per section of the report or part of one (build.py gives the order)
    experiments.py   the Python peers' experiment records: how each went, what it shows
    readme_table.py  the results table of strategies/README.md
    build.py         the whole report: every section in order, then the files
"""
