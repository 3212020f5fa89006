"""The five articles' examples run as written, and the experiment each of their claims (A1-E3) needs,
in the article's own system: one module a system, each called by that system's peer module.

    numba.py, numba_later.py     articles 000, 001, 003 and 004's Numba claims
    pycuda.py, pycuda_examples.py  articles 002 and 004's PyCUDA examples and claims
    cupy.py                      article 003's CuPy examples and claims

Each experiment writes a record naming its claim's id (experiment.py's attempt); the rules that
turn the records into verdicts are the report's (reports/cdl_report/claims/)."""
