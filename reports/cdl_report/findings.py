"""The findings stage: the figures and verdicts that more than one part of the report reads (the
sections that state them, the first screen, the claims, the README's table), computed from the
results before a line is written. A section's add() renders what its find() found; the claims read
these, never a rendered section."""
from . import claims
from .sections import (
    dispatch,
    elementwise,
    flush,
    image,
    jit,
    map,
    matmul,
    objects,
    oplength,
    precision,
    python_peers,
    repeat,
    tasks,
    tiered,
)
from .stats import noise_threshold


def compute(results, guarded):
    """{"noise", "noise_how", "map", "dispatch", "precision", "tasks", "other", "python", "jit", "image",
    "matmul", "flush",
    "oplength", "repeat", "tiered", "objects", "claims"} of `results`;
    guarded(name, f, *args) runs each step, naming the part a malformed results file broke."""
    bench = results.bench
    noise, how = noise_threshold(bench, results.repeat)
    found = {"noise": noise, "noise_how": how}
    found["map"] = guarded("map", map.find, bench, results.resources)
    found["dispatch"] = guarded("dispatch", dispatch.find, bench, noise, results.resources)
    found["precision"] = guarded("precision", precision.find, bench, found["dispatch"])
    found["tasks"] = guarded("tasks", tasks.find, bench)
    found["other"] = guarded("elementwise", elementwise.find, bench)
    found["python"] = guarded("Python peers", python_peers.find, bench, results.python)
    found["jit"] = guarded("run-time compilation", jit.find, bench) if bench.stages else {}
    found["image"] = guarded("image", image.find, bench)
    found["matmul"] = guarded("matmul", matmul.find, bench)
    found["flush"] = guarded("flush", flush.find, bench, noise)
    found["oplength"] = guarded("op length", oplength.find, bench, noise)
    found["repeat"] = guarded("run to run", repeat.find, bench, results.repeat)
    found["objects"] = guarded("objects", objects.find, bench, noise)
    found["tiered"] = guarded("tiered", tiered.find, results.tiered or bench, noise)
    # Last: the claims' verdicts read the figures above (the findings, never a rendered section).
    found["claims"] = guarded("claims", claims.answer_all, bench, results.facts, found, results.python)
    return found
