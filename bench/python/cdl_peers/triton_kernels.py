"""The Triton kernels of triton_peers.py, in a module of their own: Triton reads each @triton.jit
function's source from its file, and this file is imported only where Triton is installed.

A Triton kernel takes the op as a `tl.constexpr` argument holding a @triton.jit function: the
kernel is compiled once per function (and per element type and per specialised argument, such as
an integer equal to 1), with the op inlined, so the call costs nothing at run time. The op cannot
be chosen per element that way: a block's elements run together, so per-element dispatch is a
chain of tl.where over every op, which computes every op for every element (tasks_kernel).

Math is libdevice's (the C++ suite's sinf, cosf, expf, sqrtf: the correctly rounded or
few-ulp versions), and a division by 2 is a multiplication by 0.5 (the same value), because
Triton's `/` on float32 is an approximate division.
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice

# The catalogue's ops (common/ops.cuh), as a Triton user writes them.


@triton.jit
def quadratic(x):
    return x * x + 2 * x + 1


@triton.jit
def square(x):
    return x * x


@triton.jit
def sine(x):
    return libdevice.sin(x)


@triton.jit
def exp_sin_cos(x):
    return libdevice.exp(libdevice.sin(x) * libdevice.cos(x))


@triton.jit
def threshold(x):
    return tl.where(x > 0.5, 2 * x, x * 0.5)


MAP_OPS = {
    "quadratic": quadratic,
    "square": square,
    "sine": sine,
    "exp_sin_cos": exp_sin_cos,
    "threshold": threshold,
}


@triton.jit
def add(x, y):
    return x + y


@triton.jit
def multiply(x, y):
    return x * y


ZIP_OPS = {"add": add, "multiply": multiply}


@triton.jit
def map_kernel(x_ptr, y_ptr, n, k, delta, OP: tl.constexpr, BLOCK: tl.constexpr):
    """y[i] = sum over j < k of OP(x[i] + j * delta): the C++ map skeleton, a block of elements a program."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x0 = tl.load(x_ptr + offsets, mask=mask)
    acc = tl.zeros_like(x0)
    for j in range(k):
        acc += OP(x0 + j * delta)
    tl.store(y_ptr + offsets, acc, mask=mask)


@triton.jit
def zip_kernel(x_ptr, y_ptr, z_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(z_ptr + offsets, OP(x, y), mask=mask)


@triton.jit
def task_op(x, p1, p2, I: tl.constexpr):
    """Task op I of the catalogue (CDL_TASK_OP_BODY): I % 4 + 1 multiply-adds, plus I / 8."""
    acc = x
    for _ in tl.static_range(I % 4 + 1):
        acc = acc * p1 + p2
    return acc + I * 0.125


@triton.jit
def tasks_kernel(x_ptr, op_ptr, p1_ptr, p2_ptr, y_ptr, n, COUNT: tl.constexpr, BLOCK: tl.constexpr):
    """An op per element, by its id: a tl.where per op, each op computed for every element."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    op = tl.load(op_ptr + offsets, mask=mask)
    p1 = tl.load(p1_ptr + offsets, mask=mask)
    p2 = tl.load(p2_ptr + offsets, mask=mask)
    v = x
    for i in tl.static_range(COUNT):
        v = tl.where(op == i, task_op(x, p1, p2, i), v)
    tl.store(y_ptr + offsets, v, mask=mask)


@triton.jit
def clamp(v, hi):
    return tl.minimum(tl.maximum(v, 0), hi)


@triton.jit
def box_blur_kernel(src, dst, w, h, r, area, BX: tl.constexpr, BY: tl.constexpr):
    """The mean of the (2r+1)^2 pixels around each pixel, reads clamped to the border: a 2D block of
    pixels a program, each neighbour a gathered load (the L1 and L2 serve the overlap); `area` is
    (2r+1)^2 as a float, from the host."""
    xs = tl.program_id(0) * BX + tl.arange(0, BX)
    ys = tl.program_id(1) * BY + tl.arange(0, BY)
    acc = tl.zeros((BY, BX), dtype=tl.float32)
    for dy in range(-r, r + 1):
        row = clamp(ys + dy, h - 1) * w
        for dx in range(-r, r + 1):
            acc += tl.load(src + row[:, None] + clamp(xs + dx, w - 1)[None, :])
    mask = (ys < h)[:, None] & (xs < w)[None, :]
    tl.store(dst + ys[:, None] * w + xs[None, :], tl.div_rn(acc, area), mask=mask)


@triton.jit
def sobel_kernel(src, dst, w, h, BX: tl.constexpr, BY: tl.constexpr):
    xs = tl.program_id(0) * BX + tl.arange(0, BX)
    ys = tl.program_id(1) * BY + tl.arange(0, BY)
    left, right = clamp(xs - 1, w - 1)[None, :], clamp(xs + 1, w - 1)[None, :]
    centre = clamp(xs, w - 1)[None, :]
    up, down = (clamp(ys - 1, h - 1) * w)[:, None], (clamp(ys + 1, h - 1) * w)[:, None]
    mid = (clamp(ys, h - 1) * w)[:, None]
    gx = (
        tl.load(src + up + right)
        + 2 * tl.load(src + mid + right)
        + tl.load(src + down + right)
        - (tl.load(src + up + left) + 2 * tl.load(src + mid + left) + tl.load(src + down + left))
    )
    gy = (
        tl.load(src + down + left)
        + 2 * tl.load(src + down + centre)
        + tl.load(src + down + right)
        - (tl.load(src + up + left) + 2 * tl.load(src + up + centre) + tl.load(src + up + right))
    )
    mask = (ys < h)[:, None] & (xs < w)[None, :]
    tl.store(dst + ys[:, None] * w + xs[None, :], libdevice.sqrt(gx * gx + gy * gy), mask=mask)


@triton.jit
def new_op_kernel(x_ptr, y_ptr, n, C: tl.constexpr, BLOCK: tl.constexpr):
    """A user's new op: y = x * x + C, C a constexpr, so each new C is a new compile."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, x * x + C, mask=mask)
