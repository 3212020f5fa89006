"""The report's sections, in the order a reader meets them: the one list that the findings compute in
(findings.py) and the page is rendered in (build.py). Each section has a find, which computes its
figures and verdicts from the results (and from sections found before it), and an add, which writes
them; a section marked `last` is found after every other, because it reads their findings (the first
screen's answer and the claims), though it may be rendered first."""
from dataclasses import dataclass
from typing import Callable, Optional

from .claims import verdicts as claims
from .sections import answer, devices, dispatch, elementwise, flush, header, image, jit, map, matmul
from .sections import objects, oplength, precision, profile, python_peers, repeat, resources, tasks, tiered


@dataclass(frozen=True)
class Section:
    key: Optional[str]  # where its figures are kept (found[key]); None for a section that finds nothing
    name: str  # how an error in a results file names the part it broke
    find: Optional[Callable] = None  # find(run) -> its figures; run: results, bench, noise, found, others
    add: Optional[Callable] = None  # add(doc, run, figures)
    last: bool = False  # found after every other section: it reads their findings


SECTIONS = (
    Section(
        "head",
        "head",
        lambda r: header.find(r.bench, r.results.resources, r.results.set_aside),
        lambda doc, r, f: header.top(doc, f),
    ),
    Section(
        "answer",
        "answer",
        lambda r: answer.find(r.bench, r.noise, r.found, r.results.resources),
        lambda doc, r, f: answer.add(doc, r.bench, r.noise, f),
        last=True,
    ),
    Section(
        "map",
        "map",
        lambda r: map.find(r.bench, r.results.resources),
        lambda doc, r, f: map.add(doc, r.bench, f, r.results.resources, r.results.profile),
    ),
    Section(
        "dispatch",
        "dispatch",
        lambda r: dispatch.find(r.bench, r.noise, r.results.resources),
        lambda doc, r, f: dispatch.add(doc, r.bench, r.noise, f),
    ),
    Section(
        "oplength",
        "op length",
        lambda r: oplength.find(r.bench, r.noise),
        lambda doc, r, f: oplength.add(doc, f),
    ),
    Section(
        "precision",
        "precision",
        lambda r: precision.find(r.bench, r.found["dispatch"]),
        lambda doc, r, f: precision.add(doc, f),
    ),
    Section("tasks", "tasks", lambda r: tasks.find(r.bench), lambda doc, r, f: tasks.add(doc, f)),
    Section(
        "objects",
        "objects",
        lambda r: objects.find(r.bench, r.noise),
        lambda doc, r, f: objects.add(doc, f, r.results.profile),
    ),
    Section(
        "jit",
        "run-time compilation",
        lambda r: jit.find(r.bench, r.found["dispatch"], r.noise, r.results.resources)
        if r.bench.stages
        else {},
        lambda doc, r, f: jit.add(doc, r.bench, f, r.found["dispatch"], r.noise, r.results.jit_uncached),
    ),
    Section(
        "tiered",
        "tiered",
        lambda r: tiered.find(r.results.tiered or r.bench, r.noise),
        lambda doc, r, f: tiered.add(doc, f, r.noise),
    ),
    Section("image", "image", lambda r: image.find(r.bench), lambda doc, r, f: image.add(doc, f, r.noise)),
    Section(
        "matmul",
        "matmul",
        lambda r: matmul.find(r.bench),
        lambda doc, r, f: matmul.add(doc, r.bench, r.noise, f),
    ),
    Section(
        "other",
        "elementwise",
        lambda r: elementwise.find(r.bench),
        lambda doc, r, f: elementwise.add(doc, r.bench, f),
    ),
    Section(
        "python",
        "Python peers",
        lambda r: python_peers.find(r.bench, r.results.python, r.noise),
        lambda doc, r, f: python_peers.add(
            doc,
            r.bench,
            r.results.python,
            r.found["jit"].get("costs"),
            r.found["jit"].get("interleaved"),
            r.found["jit"].get("first_in_process"),
        ),
    ),
    Section(
        "resources",
        "kernel resources",
        lambda r: resources.find(r.results.resources),
        lambda doc, r, f: resources.add(doc, f),
    ),
    Section(
        "profile",
        "profile",
        lambda r: profile.find(r.bench, r.results.profile),
        lambda doc, r, f: profile.add(doc, r.bench, f),
    ),
    Section(
        "claims",
        "claims",
        lambda r: claims.answer_all(r.bench, r.results.facts, r.found, r.results.python),
        lambda doc, r, f: claims.add(
            doc, f, r.noise, r.results.python.experiments_left_out if r.results.python else None
        ),
        last=True,
    ),
    Section(
        "devices",
        "devices",
        lambda r: devices.find(r.results, r.others),
        lambda doc, r, f: devices.add(doc, f),
    ),
    Section(
        None,
        "method",
        add=lambda doc, r, f: header.method(
            doc,
            r.bench,
            r.noise,
            r.found["noise_how"],
            header.left_out(r.bench, r.results.python, r.results.jit_uncached),
        ),
    ),
    Section("flush", "flush", lambda r: flush.find(r.bench, r.noise), lambda doc, r, f: flush.add(doc, f)),
    Section(
        "repeat",
        "run to run",
        lambda r: repeat.find(r.bench, r.results.repeat),
        lambda doc, r, f: repeat.add(doc, f, r.noise),
    ),
)
