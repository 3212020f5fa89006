"""The fact-check's rules: the five articles' claims (A1-E3), each answered from the measured
figures in the article's own system (README.md beside this file says how it fits together and how
to add a claim).

    articles.md        the articles' questions and examples, and each claim quoted with its id
    article_NNN.py     an article's claims: each one's Claim (id, quote, system, the rule in words)
                       and the function that answers it from the results
    rules.py           what the rules share: the verdicts, and the lookups of figures and records
    verdicts.py        every claim answered, and the report's table of them

The experiments that measure the claims run on a GPU in the Python peers
(bench/python/cdl_peers/experiments/); their records, in python.json, are what the rules read."""
