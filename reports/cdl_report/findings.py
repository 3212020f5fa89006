"""The findings stage: every section's figures and verdicts, computed from the results before a
line is written, each by its section's find(): the first screen's answer, the map, the dispatch
sweep, op length, precision, tasks, objects, the compiles' costs, the tiered streams, the stencils,
the GEMMs, the elementwise section, the Python peers' ratios, the counters, the flush, run to run,
the other devices' runs, and last the claims' verdicts, which read the findings above them, never a
rendered section. A section's add() renders what its find() found, the head's warnings and the
kernels' resources among them."""
from .claims import verdicts as claims

from .sections import answer, devices, dispatch, elementwise, flush, header, image, jit, map, matmul
from .sections import objects, oplength, precision, profile, python_peers, repeat, resources, tasks, tiered
from .stats import noise_threshold


def compute(results, guarded, others=()):
    """{"noise", "noise_how", "head", "resources", "map", "dispatch", "precision", "tasks", "other",
    "python", "jit", "image", "matmul", "flush", "oplength", "repeat", "tiered", "objects", "profile",
    "devices", "answer", "claims"} of `results`;
    guarded(name, f, *args) runs each step, naming the part a malformed results file broke."""
    bench = results.bench
    noise, how = noise_threshold(bench, results.repeat)
    found = {"noise": noise, "noise_how": how}
    found["head"] = guarded("head", header.find, bench, results.resources, results.set_aside)
    found["resources"] = guarded("kernel resources", resources.find, results.resources)
    found["map"] = guarded("map", map.find, bench, results.resources)
    found["dispatch"] = guarded("dispatch", dispatch.find, bench, noise, results.resources)
    found["precision"] = guarded("precision", precision.find, bench, found["dispatch"])
    found["tasks"] = guarded("tasks", tasks.find, bench)
    found["other"] = guarded("elementwise", elementwise.find, bench)
    found["python"] = guarded("Python peers", python_peers.find, bench, results.python)
    found["jit"] = (
        guarded("run-time compilation", jit.find, bench, found["dispatch"], noise, results.resources)
        if bench.stages
        else {}
    )
    found["image"] = guarded("image", image.find, bench)
    found["matmul"] = guarded("matmul", matmul.find, bench)
    found["flush"] = guarded("flush", flush.find, bench, noise)
    found["oplength"] = guarded("op length", oplength.find, bench, noise)
    found["repeat"] = guarded("run to run", repeat.find, bench, results.repeat)
    found["objects"] = guarded("objects", objects.find, bench, noise)
    found["tiered"] = guarded("tiered", tiered.find, results.tiered or bench, noise)
    found["profile"] = guarded("profile", profile.find, bench, results.profile)
    found["devices"] = guarded("devices", devices.find, results, others)
    found["answer"] = guarded("answer", answer.find, bench, noise, results.python, results.resources)
    # Last: the claims' verdicts read the figures above (the findings, never a rendered section).
    found["claims"] = guarded("claims", claims.answer_all, bench, results.facts, found, results.python)
    return found
