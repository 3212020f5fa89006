"""Triton, the way its tutorials write an elementwise kernel, with the op passed as a function.

  triton.constexpr_fn  the op a @triton.jit function handed to the kernel as a `tl.constexpr`
                       argument (triton_kernels.py): inlined, one compile per function, element
                       type and specialised argument; a block of 1024 elements a program, 4 warps
                       (the tutorial's vector add). Map, zip, and the blur and Sobel filters.
  triton.where_chain   tasks: the op chosen per element by its id, as a chain of tl.where over
                       the 32 ops (a block's elements run together, so each op is computed for
                       every element and the id picks one)

Triton compiles at the first call for each specialisation and keeps the result in memory and on
disk (TRITON_CACHE_DIR, which the peers' runner points at an empty directory so that the first
call is a compile). Timed with torch's CUDA events on torch's current stream, which Triton
launches on.

To see the machine code: the compiled kernel's .asm["ptx"] and .asm["sass"] (kernel.warmup(...)
or the handle a launch returns), or the cubin in TRITON_CACHE_DIR with cuobjdump -sass.
"""
from . import harness, newop, torch_device

NAME = "triton"
CATALOGUE = True  # runs the map over every op of the catalogue at the sweep's k (cdl_peers's problems)
BLOCK = 1024
IMAGE_BLOCK = (32, 8)
kernels = None  # triton_kernels, once connect() has imported it


def connect():
    torch = torch_device.import_torch(" (Triton's tensors are torch's)")
    try:
        import triton

        from . import triton_kernels
    except Exception as e:
        raise harness.Unavailable(harness.import_failure("triton", e))
    global kernels
    kernels = triton_kernels
    return f"{triton.__version__} (torch {torch.__version__})", torch_device.TorchDevice(torch)


def _blocks(n):
    return ((n + BLOCK - 1) // BLOCK,)


def build_constexpr_fn(dev, problem, inputs, out):
    n = problem.size
    if problem.workload == "zip":
        x, y, op = inputs["x"], inputs["y"], kernels.ZIP_OPS[problem.info["op"]]
        return lambda: (kernels.zip_kernel[_blocks(n)](x, y, out, n, OP=op, BLOCK=BLOCK), out)[1]
    if problem.workload == "image":
        w, h, r = problem.info["width"], problem.info["height"], problem.info["r"]
        grid = ((w + IMAGE_BLOCK[0] - 1) // IMAGE_BLOCK[0], (h + IMAGE_BLOCK[1] - 1) // IMAGE_BLOCK[1])
        src, shape = inputs["in"], dict(BX=IMAGE_BLOCK[0], BY=IMAGE_BLOCK[1])
        if problem.info["op"] == "box_blur":
            area = float((2 * r + 1) ** 2)
            return lambda: (kernels.box_blur_kernel[grid](src, out, w, h, r, area, **shape), out)[1]
        return lambda: (kernels.sobel_kernel[grid](src, out, w, h, **shape), out)[1]
    x, k, delta = inputs["x"], problem.info["k"], float(problem.info["map_delta"])
    op = kernels.MAP_OPS[problem.info["op"]]
    return lambda: (kernels.map_kernel[_blocks(n)](x, out, n, k, delta, OP=op, BLOCK=BLOCK), out)[1]


def build_where_chain(dev, problem, inputs, out):
    n, t, count = problem.size, inputs["tasks"], problem.info["task_op_count"]
    x = inputs["x"]
    return lambda: (
        kernels.tasks_kernel[_blocks(n)](x, t["op"], t["p1"], t["p2"], out, n, COUNT=count, BLOCK=BLOCK),
        out,
    )[1]


IMAGE_OPS = ("box_blur", "sobel")


def cases():
    return [
        harness.Case(
            "triton.constexpr_fn/block",
            ("map", "zip", "image"),
            build_constexpr_fn,
            lambda p: p.workload != "image" or p.info["op"] in IMAGE_OPS,
        ),
        harness.Case("triton.where_chain/block", ("tasks",), build_where_chain),
    ]


def new_op_session():
    """newop.py's session: a new constexpr C is a new compile of new_op_kernel."""
    torch = torch_device.import_torch()
    from . import triton_kernels

    x = torch.from_numpy(newop.new_op_input()).to("cuda")
    y = torch.empty_like(x)
    torch.cuda.synchronize()
    n, blocks = x.numel(), _blocks(x.numel())
    return newop.session(
        lambda c: lambda: (triton_kernels.new_op_kernel[blocks](x, y, n, C=c, BLOCK=BLOCK), y)[1],
        lambda _: torch.cuda.synchronize(),
        lambda r: r.cpu().numpy(),
    )


def experiments(dev, quick):
    return [newop.compile_states(NAME, "Triton: a @triton.jit kernel with the constant a tl.constexpr")]
