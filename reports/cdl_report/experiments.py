"""The Python peers' experiment records (cdl_peers/experiments/, in python.json): how
the report names their systems, how one went, and what it shows of the feature it tries; read by the
claims and by the Python peers' section alike."""

# How the report names each system of bench/python.
NAMES = {
    "cupy": "CuPy",
    "numba": "Numba",
    "pycuda": "PyCUDA",
    "cuda_python": "cuda-python",
    "triton": "Triton",
    "torch": "PyTorch",
    "jax": "JAX",
}


def outcome(e):
    """How one experiment went, in a few words: validated, a wrong result, or its error and where."""
    if e["runs"]:
        return "runs, validated" if e.get("valid") else "runs, WRONG RESULT"
    where = f" (raised in `{short_path(e['raised_at'])}`)" if e.get("raised_at") else ""
    return f"fails: `{(e.get('error') or '?').splitlines()[0][:160]}`{where}"


def short_path(where):
    """An absolute path of the machine that ran the experiment cut to its last three parts."""
    return "/".join(where.split("/")[-3:]) if where.startswith("/") else where


# The frames where a system refuses the code an experiment tries (its typing, its dispatcher, its
# lowering's checks, its compiler). A failure raised anywhere else (a clash of installed versions,
# a missing compiler, a driver error) shows nothing about the feature, so it is not counted.
REFUSED_IN = (
    "numba/cuda/typing/",
    "numba/core/typing/",
    "numba/cuda/core/typeinfer.py",
    "numba/core/typeinfer.py",
    "numba/cuda/dispatcher.py",
    "numba/cuda/core/base.py",
    "pycuda/compiler.py",
)
WORKS, REFUSED = "works", "refused"


def tried(e):
    """What an experiment shows of the feature it tries: WORKS (it runs and validates), REFUSED (it
    fails where its system refuses such code, REFUSED_IN), or None (a wrong result, or a failure
    raised elsewhere)."""
    if e["runs"]:
        return WORKS if e.get("valid") else None
    where = e.get("raised_at") or ""
    return REFUSED if any(frame in where for frame in REFUSED_IN) else None


def not_counted(e):
    """The words after a failure that tried() does not count."""
    if e["runs"] or tried(e):
        return ""
    return (
        ": not the feature refused (that frame is outside the system's typing, dispatch and compiler), "
        "not counted"
    )


def median_of(values):
    values = sorted(values)
    return values[len(values) // 2] if values else float("nan")


def state_ms(e, state):
    """A compile record's milliseconds in a cache state: the median of its repetitions, or None where
    it has no number (absent, or a sentence saying why)."""
    v = e["figures"].get(state)
    return median_of(v) if isinstance(v, list) else v if isinstance(v, (int, float)) else None
