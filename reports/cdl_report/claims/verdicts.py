"""The claims of the source articles (articles.md, beside this file), ids A1-E3, each answered from the
data by a rule written beside it. A rule is a function of the figures: it returns the system the
figures come from, the figures, and a verdict, one of

    holds | does not hold | depends | not measured | not decided

"not measured" is itself computed: the figures the rule needs are not in the results (the article's
own system was not run, or the experiment does not exist yet), and the row says what is missing.
A row answered in another system than the article's says so. "not decided" is the verdict of a claim
whose rule sets times against the noise, in a run whose repetitions are too few for the test."""
import os
from types import SimpleNamespace

from ..document import table
from ..stats import undecided_run
from . import article_000, article_001, article_002, article_003, article_004
from .rules import DEPENDS, FAILS, HOLDS, UNDECIDED

# The project's page of the claims, quoted with their articles' questions and examples.
ARTICLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "articles.md")

CLAIMS = (
    article_000.CLAIMS + article_001.CLAIMS + article_002.CLAIMS + article_003.CLAIMS + article_004.CLAIMS
)


def answer_all(bench, facts, found, python):
    """[(claim, answered in, figures, verdict)] for every claim, in id order; a timed claim's verdict
    is "not decided" where the run's repetitions are too few for the test (stats.undecided_run)."""
    d = SimpleNamespace(bench=bench, facts=facts, found=found, python=python, noise=found["noise"])
    undecided = undecided_run(bench)
    out = []
    for c in CLAIMS:
        where, figures, verdict = c.answer(d)
        if undecided and c.timed and verdict in (HOLDS, FAILS, DEPENDS):
            verdict = UNDECIDED
        out.append((c, where, figures, verdict))
    return out


def add(doc, rows, noise, experiments_left_out=None):
    """Renders the claims' verdicts (answer_all's rows); experiments_left_out: python.json's word that
    a quick run left the articles' experiments out."""
    doc.add("## The articles' claims, checked\n")
    articles = os.path.relpath(ARTICLES, os.path.abspath(doc.out_dir))
    doc.add(
        f"Each claim of [the articles]({articles}) (each quoted there with its article's question and"
        " examples), by its id, with the figures that answer it and the rule that turns them into the"
        f" verdict (the noise is {noise:.1%}). *Answered in* names the system the figures come from;"
        " where that is not the article's own, it says so, and *not measured* means the figures the rule"
        " needs are not in these results"
        + (
            ": this quick run left the articles' experiments to a full run (`scripts/bench.sh --phases"
            " peers` without `--quick`)"
            if experiments_left_out
            else ""
        )
        + ".\n"
    )
    doc.add(
        table(
            ["id", "article", "claim", "article's system", "answered in", "figures", "rule", "verdict"],
            [
                [c.id, c.article, c.quote, c.system, where, figures, c.rule, f"**{verdict}**"]
                for c, where, figures, verdict in rows
            ],
        )
    )
