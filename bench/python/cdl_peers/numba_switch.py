"""Article 001's op-id switch in numba.cuda (numba_peers.py's numba.op_switch forms): one kernel, the
op chosen by an integer id through if/elif, inside the k loop or hoisted out of it, and the tasks
workload's chain over 32 ops chosen per element. Numba has no switch statement and no table of
functions, so an if/elif chain is the form; each kernel takes numba.cuda (imported by
numba_peers.connect) and the ops as plain Python functions."""
import numpy as np


def device_functions(cuda, ops):
    """The catalogue's ops (name -> plain function, in OP_IDS' order) as Numba device functions, in
    that order: the kernels below call them by the op's id."""
    return [cuda.jit(device=True)(f) for f in ops.values()]


def make_switch_kernel(cuda, ops, T):
    """if/elif over the catalogue's ops inside the k loop, the branch where article 001's kernel
    evaluates it per call."""
    quadratic, square, sine, exp_sin_cos, threshold = device_functions(cuda, ops)
    zero = T(0)

    @cuda.jit
    def kernel(xs, ys, op, k, delta):
        i = cuda.grid(1)
        if i < xs.size:
            acc = zero
            for j in range(k):
                x = xs[i] + T(j) * delta
                if op == 0:
                    acc += quadratic(x)
                elif op == 1:
                    acc += square(x)
                elif op == 2:
                    acc += sine(x)
                elif op == 3:
                    acc += exp_sin_cos(x)
                else:
                    acc += threshold(x)
            ys[i] = acc

    return kernel


def make_hoisted_switch_kernel(cuda, ops, T):
    """The branch in article 001's place: once per thread, each arm with its own loop (C++'s
    03_switch.hoisted), against make_switch_kernel's branch inside the loop."""
    quadratic, square, sine, exp_sin_cos, threshold = device_functions(cuda, ops)
    zero = T(0)

    @cuda.jit
    def kernel(xs, ys, op, k, delta):
        i = cuda.grid(1)
        if i >= xs.size:
            return
        x0, acc = xs[i], zero
        if op == 0:
            for j in range(k):
                acc += quadratic(x0 + T(j) * delta)
        elif op == 1:
            for j in range(k):
                acc += square(x0 + T(j) * delta)
        elif op == 2:
            for j in range(k):
                acc += sine(x0 + T(j) * delta)
        elif op == 3:
            for j in range(k):
                acc += exp_sin_cos(x0 + T(j) * delta)
        else:
            for j in range(k):
                acc += threshold(x0 + T(j) * delta)
        ys[i] = acc

    return kernel


def make_task_op(cuda, i):
    """Task op i of the catalogue (CDL_TASK_OP_BODY): i % 4 + 1 multiply-adds, plus i / 8."""
    steps, constant = i % 4 + 1, np.float32(i) * np.float32(0.125)

    def op(x, p1, p2):
        acc = x
        for _ in range(steps):
            acc = acc * p1 + p2
        return acc + constant

    return cuda.jit(device=True)(op)


def make_tasks_switch_kernel(cuda, count):
    """if/elif over `count` ops, chosen per element from its task record. Numba has no switch and
    no table of functions, so the chain is generated as source text and compiled."""
    names = {f"op{i}": make_task_op(cuda, i) for i in range(count)}
    lines = [
        "def kernel(x, tasks, y):",
        "    i = cuda.grid(1)",
        "    if i < x.size:",
        "        t = tasks[i]",
        "        o = t.op",
        "        v = x[i]",
    ]
    for i in range(count):
        lines.append(f"        {'if' if i == 0 else 'elif'} o == {i}:")
        lines.append(f"            v = op{i}(x[i], t.p1, t.p2)")
    lines.append("        y[i] = v")
    scope = dict(names, cuda=cuda)
    exec("\n".join(lines), scope)
    return cuda.jit(scope["kernel"])
