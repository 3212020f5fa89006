"""The fact-check: the five articles this project answers, their claims (A1-E3), the experiments that
answer each in the article's own system, and the rules that turn the figures into verdicts, in one
place (README.md says how it fits together and how to add a claim).

    articles.md        the articles' questions and examples, and each claim quoted with its id
    article_NNN.py     an article's claims: each one's Claim (id, quote, system, the rule in words)
                       and the function that answers it from the results
    rules.py           what the rules share: the verdicts, and the lookups of figures and records
    verdicts.py        every claim answered, and the report's table of them
    experiments_*.py   each article's examples run as written and its claims' experiments, one
                       module a system (CuPy, Numba, PyCUDA), run by the Python peers (cdl_peers)
                       on a GPU; their records, in python.json, are what the rules read

The two halves run in two processes: the experiments beside the Python peers (which import them
from here), the rules inside the report (reports/cdl_report, which imports them from here); so this
file imports neither, and each module imports only its own half's package."""
