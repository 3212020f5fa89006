"""The whole report: every section in the order it appears, then the files, written whole."""
import os
import re

from . import findings, readme_table
from .document import Detail, Document, anchor
from .outline import SECTIONS
from .results import ResultsError


def guarded(name, add, *args):
    """add(*args), a section's; a field that a results file lacks or garbles past the checks made on
    reading it is an error of the input (exit status 2), named with the section and where it broke."""
    try:
        return add(*args)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        where = f"{os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        raise ResultsError(
            f"the {name} section: a results file lacks or garbles what it needs: {type(e).__name__}: {e} "
            f"(at {where})"
        ) from e


# Every term the report uses that a GPU programmer may not read the same way, defined once.
GLOSSARY = (
    (
        "k",
        "how many times each element calls the op (the map sums op(x + j·δ) over j < k): the call's cost"
        " grows with k while the memory's does not",
    ),
    ("n", "the number of elements of a problem, each read and written once"),
    (
        "vec, scalar",
        "a kernel's form: scalar gives a thread one element, vec one 16-byte vector (4 floats)"
        " per input, so that a warp's loads are wide",
    ),
    (
        "template",
        "`01_template_functor`, the op as a template parameter, inlined at compile time: the static"
        " case every ratio is set against (×, time over its time)",
    ),
    (
        "copy bandwidth",
        "the GPU's device-to-device copy rate, measured in the run: the most a kernel that"
        " reads and writes memory once can reach",
    ),
    (
        "of copy",
        "a kernel's bytes moved per second over the copy bandwidth; a finding only where the"
        " working set is at least 8× the L2 and the figure at most 1 (else in parentheses with †)",
    ),
    (
        "noise",
        "how far the same benchmark's median moves when run again in a new process (a quantile over"
        " the repeat run): a ratio within it is no difference",
    ),
    (
        "not decided",
        "a ratio beyond the noise whose repetitions are too few for the Mann-Whitney U test to"
        " tell the two apart at p < 0.05 (the quick mode's 3 against 3), printed with a ?",
    ),
    (
        "p10–p90",
        "the 10th and 90th percentiles of a figure measured several times: its spread; two routes"
        " whose spreads overlap are not told apart",
    ),
    (
        "new op",
        "an op the program was not built with, given at run time (08's language): what a JIT"
        " compiles and what the interpreter runs with no compiler",
    ),
    (
        "one-time cost",
        "what a route pays once for a new op before its kernel runs: a compile and its load, or, for the"
        " interpreter, the op's text to a first result",
    ),
    (
        "break-even",
        "the number of elements after which a compiled kernel's saving per element has repaid"
        " its compile, against a route that runs the same op with none",
    ),
    ("model", "a predicted rate, not a bound: a kernel can pass it (the semirings' halved (+,×) rate)"),
)


# The sections a reader does not need to reach the answer: on a page of their own (details.md),
# linked from where the report cites them.
DETAILS = "details.md"
DETAIL_SECTIONS = (
    "The articles' own systems",
    "What the hardware did",
    "The articles' claims",
    "Kernel resources",
    "Across devices",
    "Matrix products against cuBLAS",
    "Virtual calls on an object per element",
    "Zip, staging through shared memory",
    "Stencils: box blur",
    "What the L2 flush leaves behind",
    "Run to run",
    "float32 against float64",
)


def headings_of(part, level):
    """The headings of a part of the report: its `##` ones, or (level "#") every one below the title."""
    out = []
    for line in part.splitlines():
        marks = len(line) - len(line.lstrip("#"))
        if marks >= 2 and line[marks : marks + 1] == " " and (level == "#" or marks == len(level)):
            out.append(line[marks:].strip())
    return out


def split_pages(parts):
    """(the report's parts, the details page's): a part goes where the `##` section it is in goes; a
    Detail of a section that stays goes to the details page, under a heading naming that section."""
    main, details = [], []
    here, section, parent = main, None, None
    for part in parts:
        top = headings_of(part, "##")
        if top:
            section = top[0]
            here = details if section.startswith(DETAIL_SECTIONS) else main
        if isinstance(part, Detail) and here is main:
            if parent != section:
                details.append(f"## {section}: the details\n")
                parent = section
            details.append(part)
        else:
            here.append(part)
    return main, details


def relink(part, anchors, page):
    """A part's links to `anchors` (#name) pointed at `page`, where those headings now are."""
    return re.sub(
        r"\]\((#[^)]+)\)", lambda m: f"]({page}{m.group(1)})" if m.group(1) in anchors else m.group(0), part
    )


def glossary(doc):
    doc.add("## Terms\n")
    doc.add("\n".join(f"- **{term}**: {meaning}." for term, meaning in GLOSSARY) + "\n")


def write_report(results, out_dir, readme=None, others=(), figures=True):
    """Writes out_dir/report.md and its plots (not with figures=False) from `results` (a
    results.Results), with a section comparing it with each of `others` (other devices' Results);
    returns (path, found)."""
    doc = Document(out_dir, figures)
    os.makedirs(out_dir, exist_ok=True)
    bench = results.bench
    found, run = findings.compute(results, guarded, others)
    answer_text, contents_at = None, 0
    for section in SECTIONS:
        said = guarded(section.name, section.add, doc, run, found.get(section.key))
        if section.key in ("head", "answer"):  # the contents list goes after the first screen
            contents_at = len(doc.parts)
        if section.key == "answer":
            answer_text = said  # the first screen's answer, which the README carries too
    if bench.not_run:
        doc.add("## Not run\n")
        doc.add(
            f"{len(bench.not_run)} benchmarks of the suite are not in these results: the part of the run that"
            " holds them was interrupted before it reached them (`reports/merge.py` keeps no partial"
            " result), so every section above is computed without them.\n"
        )
        doc.detail(
            "The benchmarks not run", "\n".join(f"- `{n}`" for n in bench.not_run) + "\n", "Their names"
        )
    glossary(doc)
    main, details = split_pages(doc.parts)
    moved = {anchor(h) for part in details for h in headings_of(part, "#")}
    kept = {anchor(h) for part in main for h in headings_of(part, "#")}
    main = [relink(part, moved, DETAILS) for part in main]
    details = [relink(part, kept, "report.md") for part in details]
    contents = lambda parts, page="": " · ".join(
        f"[{h}]({page}{anchor(h)})" for p in parts for h in headings_of(p, "##")
    )
    main.insert(
        contents_at,
        f"**Contents.** {contents(main)}"
        + (
            f" · [the details page]({DETAILS}): tables, breakdowns and the sections beyond the answer"
            if details
            else ""
        )
        + "\n",
    )
    doc.parts = main
    if details:
        doc.text_file(
            DETAILS,
            "# CUDA Dispatch Lab: the details behind the report\n\n"
            "What a reader does not need to reach the answer: each section is linked from"
            " [the report](report.md) where it is cited.\n\n"
            f"**Contents.** {contents(details)}\n\n" + "\n".join(details),
        )
    path = doc.write("report.md")
    if readme:
        readme_table.update(readme, readme_table.text(bench, found))
        if answer_text:
            # The first screen's answer, its links into the report made links to the report's file.
            report = os.path.relpath(path, os.path.dirname(os.path.abspath(readme)))
            dev = bench.env.get("device", {}).get("name", "?")
            readme_table.update(
                readme,
                f"Generated by `reports/report.py --readme` from the reference results ({dev}, revision "
                f"`{bench.context.get('git_revision', '?')}`); [the report]({report}) shows every figure.\n\n"
                + relink(answer_text, moved, DETAILS)
                .replace("](#", f"]({report}#")
                .replace(f"]({DETAILS}#", f"]({os.path.join(os.path.dirname(report), DETAILS)}#"),
                "answer",
            )
    return path, found
