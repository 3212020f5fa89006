"""The findings stage: every section's figures and verdicts, computed from the results before a
line is written, each by its section's find() in the outline's order (outline.py), the sections that
read the others' findings last (the first screen's answer, then the claims, which read the findings,
never a rendered section). A section's add() renders what its find() found."""
from types import SimpleNamespace

from .outline import SECTIONS
from .stats import noise_threshold


def compute(results, guarded, others=()):
    """{"noise", "noise_how", and each section's key (outline.SECTIONS): its figures} of `results`,
    with `others` (other devices' Results) for the devices section; guarded(name, f, *args) runs each
    step, naming the part a malformed results file broke. Returns (found, run): run is what every
    section's find and add read."""
    noise, how = noise_threshold(results.bench, results.repeat)
    found = {"noise": noise, "noise_how": how}
    run = SimpleNamespace(results=results, bench=results.bench, noise=noise, found=found, others=others)
    finders = [s for s in SECTIONS if s.find]
    for section in [s for s in finders if not s.last] + [s for s in finders if s.last]:
        found[section.key] = guarded(section.name, section.find, run)
    return found, run
