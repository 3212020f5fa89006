"""PyTorch: the op as a plain Python function of tensors, run eagerly or through torch.compile.

  torch.eager      the expression run op by op (map k = 1, zip): every operator its own kernel
                   and its own temporary, like CuPy's ufunc chain
  torch.compile    the same function through torch.compile (default mode): Dynamo traces it,
                   Inductor fuses the whole expression into one Triton kernel. The op's loop over
                   k is a dimension of its own, summed: one kernel that reduces over it.
                   Tasks: the op per element as a chain of torch.where over the 32 ops (each op
                   computed for every element, fused into one kernel); the blur and Sobel filters
                   on a replicate-padded image (avg_pool2d; shifted slices)

Each function is made from its own text (exec), so that each is a code object of its own: Dynamo
keeps its compiled graphs per code object, guarded on the values the code reads. torch.compile
wraps every function in one code object of its own as well, and after `recompile_limit` (8)
compiles of one code object Dynamo runs the function eagerly with only a warning: the limit is
raised here, so that every function this run compiles is compiled.

Inductor compiles at the first call and keeps what it made in memory and on disk
(TORCHINDUCTOR_CACHE_DIR, and Triton's TRITON_CACHE_DIR beneath it, which the peers' runner points
at empty directories so that the first call is a compile). A compiled function returns a new
tensor from PyTorch's caching allocator; the harness keeps every earlier result of a problem
alive, so a new result can never sit in memory an earlier case already filled with the answer.

To see the machine code: TORCH_LOGS=output_code prints the Triton kernel Inductor writes; its
cubin is in the cache directories (cuobjdump -sass).
"""
from . import harness, newop, torch_device

NAME = "torch"
CATALOGUE = True  # runs the map over every op of the catalogue at the sweep's k (cdl_peers's problems)
torch = None  # once connect() has imported it


def import_compiler():
    global torch
    torch = torch_device.import_torch()
    try:
        import torch._dynamo
    except Exception as e:
        raise harness.Unavailable(
            f"torch {torch.__version__} has no torch.compile ({harness.error_text(e, 1)})"
        )
    for limit in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 1 << 16)


def connect():
    import_compiler()
    return torch.__version__, torch_device.TorchDevice(torch)


# The catalogue's ops (common/ops.cuh) as a PyTorch user writes them: Python scalars are weak, so
# float32 stays float32.
OPS = {
    "quadratic": "x * x + 2 * x + 1",
    "square": "x * x",
    "sine": "torch.sin(x)",
    "exp_sin_cos": "torch.exp(torch.sin(x) * torch.cos(x))",
    "threshold": "torch.where(x > 0.5, 2 * x, x / 2)",
}
ZIP_OPS = {"add": "x + y", "multiply": "x * y"}


def function(text, **scope):
    """`def f(...)` made from its text: a code object of its own (the module's docstring says why)."""
    names = dict(scope, torch=torch, F=getattr(getattr(torch, "nn", None), "functional", None))
    exec(compile(text, "<cdl_peers.torch_peers>", "exec"), names)
    return names["f"]


def map_text(problem):
    """y = sum over j < k of op(x + j * delta), the loop a dimension of its own: Inductor makes one
    kernel that reduces over it. (A Python loop would be unrolled by the trace into k terms, which
    Inductor splits into several kernels past its fusion limit, each writing its part to memory.)"""
    op, k = OPS[problem.info["op"]], problem.info["k"]
    body = (
        "    return op(x0)\n"
        if k == 1
        else (
            f"    j = torch.arange({k}, device=x0.device, dtype=x0.dtype) * {problem.info['map_delta']!r}\n"
            "    return op(x0[:, None] + j).sum(dim=1)\n"
        )
    )
    return f"def op(x):\n    return {op}\ndef f(x0):\n{body}"


def tasks_text(count):
    return (
        "def f(x, op, p1, p2):\n"
        "    v = x\n"
        f"    for i in range({count}):\n"
        "        acc = x\n"
        "        for _ in range(i % 4 + 1):\n"
        "            acc = acc * p1 + p2\n"
        "        v = torch.where(op == i, acc + i * 0.125, v)\n"
        "    return v\n"
    )


IMAGE_TEXT = {
    "box_blur": (
        "def f(img):\n"
        "    padded = F.pad(img[None, None], (r, r, r, r), mode='replicate')\n"
        "    return F.avg_pool2d(padded, 2 * r + 1, stride=1)[0, 0]\n"
    ),
    "sobel": (
        "def f(img):\n"
        "    h, w = img.shape\n"
        "    p = F.pad(img[None, None], (1, 1, 1, 1), mode='replicate')[0, 0]\n"
        "    def at(dy, dx):\n"
        "        return p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]\n"
        "    gx = at(-1, 1) + 2 * at(0, 1) + at(1, 1) - (at(-1, -1) + 2 * at(0, -1) + at(1, -1))\n"
        "    gy = at(1, -1) + 2 * at(1, 0) + at(1, 1) - (at(-1, -1) + 2 * at(-1, 0) + at(-1, 1))\n"
        "    return torch.sqrt(gx * gx + gy * gy)\n"
    ),
}


def the_function(problem):
    """(f, its arguments' names in `inputs`) for a problem."""
    w = problem.workload
    if w == "map":
        return function(map_text(problem)), ("x",)
    if w == "zip":
        return function(f"def f(x, y):\n    return {ZIP_OPS[problem.info['op']]}\n"), ("x", "y")
    if w == "tasks":
        return function(tasks_text(problem.info["task_op_count"])), ("x", "tasks")
    return function(IMAGE_TEXT[problem.info["op"]], r=problem.info["r"]), ("in",)


def arguments(problem, inputs, names):
    args = []
    for name in names:
        a = inputs[name]
        if name == "tasks":
            args += [a["op"], a["p1"], a["p2"]]
        elif name == "in":
            args.append(a.view(problem.info["height"], problem.info["width"]))
        else:
            args.append(a)
    return args


def build(dev, problem, inputs, out, compiled):
    f, names = the_function(problem)
    f = torch.compile(f) if compiled else f
    args = arguments(problem, inputs, names)
    return lambda: f(*args)


def eager_applies(problem):
    return problem.workload == "zip" or (problem.info.get("op") == "quadratic" and problem.info.get("k") == 1)


def compile_applies(problem):
    return problem.workload != "image" or problem.info["op"] in IMAGE_TEXT


def cases():
    return [
        harness.Case(
            "torch.eager/tensor",
            ("map", "zip"),
            lambda dev, problem, inputs, out: build(dev, problem, inputs, out, False),
            eager_applies,
        ),
        harness.Case(
            "torch.compile/tensor",
            ("map", "zip", "tasks", "image"),
            lambda dev, problem, inputs, out: build(dev, problem, inputs, out, True),
            compile_applies,
        ),
    ]


def new_op_session():
    """newop.py's session: a new function with the constant written in it, compiled."""
    import_compiler()
    x = torch.from_numpy(newop.new_op_input()).to("cuda")
    torch.cuda.synchronize()

    def make(constant):
        f = torch.compile(function(f"def f(x):\n    return x * x + {constant}.0\n"))
        return lambda: f(x)

    return newop.session(make, lambda _: torch.cuda.synchronize(), lambda r: r.cpu().numpy())


def experiments(dev, quick):
    return [newop.compile_states(NAME, "torch.compile: a new Python function with the constant in it")]
