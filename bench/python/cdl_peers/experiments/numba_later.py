"""Articles 001 and 003 (Numba) from B2 on, answered in Numba as numba.py answers the rest
(its experiments() calls these), and a new function's compile in each cache state:

  B2      a dictionary of functions in a kernel (the article's dismissed alternative)
  B3      article 001's kernel_with_func_select, which calls two @cuda.jit kernels as functions
  B4      article 001's generic_compute_kernel over a NumPy structured task array
  D1      article 003's Numba example against NumPy on the host, transfers in and out
  compile a new function's first call against the same kernel's next one (the cache states)
"""
import time

import numpy as np

from cdl_peers import harness
from .numba import BIG, BLOCK, grid
from cdl_peers.experiment import attempt, close_to, fresh_constant, gpu_median_ms, host_median_ms


# --- B2, B3: kernels that choose, and kernels calling kernels -----------------------------------


def kernels_calling_kernels(dev):
    cuda = dev.cuda

    @cuda.jit
    def add_arrays(x, y, out):
        idx = cuda.grid(1)
        if idx < x.size:
            out[idx] = x[idx] + y[idx]

    @cuda.jit
    def multiply_arrays(x, y, out):
        idx = cuda.grid(1)
        if idx < x.size:
            out[idx] = x[idx] * y[idx]

    @cuda.jit
    def kernel_with_func_select(x, y, out, func_id):
        if func_id == 0:
            add_arrays(x, y, out)
        elif func_id == 1:
            multiply_arrays(x, y, out)

    @cuda.jit
    def add_launched(x, y, out):  # add_arrays's body, a kernel only ever launched from the host
        idx = cuda.grid(1)
        if idx < x.size:
            out[idx] = x[idx] + y[idx]

    n = 1 << 24
    rng = np.random.default_rng(1)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    d_x, d_y, out = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, dtype=np.float32)

    def run():
        valid = True
        for func_id, expected in ((0, x.astype(np.float64) + y), (1, x.astype(np.float64) * y)):
            dev.poison(out)
            kernel_with_func_select[grid(n), BLOCK](d_x, d_y, out, func_id)
            valid = valid and close_to(out.copy_to_host(), expected)
        figures = {
            "select_ms": gpu_median_ms(
                dev, lambda: kernel_with_func_select[grid(n), BLOCK](d_x, d_y, out, 0)
            ),
            "direct_ms": gpu_median_ms(dev, lambda: add_launched[grid(n), BLOCK](d_x, d_y, out)),
        }
        figures["select_over_direct"] = figures["select_ms"] / figures["direct_ms"]
        # What Numba made of the call: a kernel called from a kernel is compiled as a device
        # function; the PTX says whether it stayed a call or was inlined.
        try:
            ptx = "\n".join(kernel_with_func_select.inspect_asm().values())
            figures.update(
                ptx_call_instructions=ptx.count("call.uni") + ptx.count("\tcall "),
                ptx_functions=ptx.count(".func "),
                ptx_kernels=ptx.count(".entry "),
            )
        except Exception as e:
            figures["ptx"] = "not inspected: " + harness.error_text(e, 1)
        return valid, figures

    called = attempt(
        "B3",
        "article 001's kernel_with_func_select: two @cuda.jit kernels called from a kernel",
        run,
        article="001",
    )

    def launch_after():  # the same arguments' types: Numba finds the device-function compile of add_arrays
        add_arrays[grid(n), BLOCK](d_x, d_y, out)
        return close_to(out.copy_to_host(), x.astype(np.float64) + y), {}

    relaunched = attempt("B3", "add_arrays launched from the host after a kernel has called it", launch_after)

    def dictionary():
        ops = {0: cuda.jit(device=True)(lambda a, b: a + b), 1: cuda.jit(device=True)(lambda a, b: a * b)}

        @cuda.jit
        def kernel_with_dict(x, y, out, func_id):
            idx = cuda.grid(1)
            if idx < x.size:
                out[idx] = ops[func_id](x[idx], y[idx])

        kernel_with_dict[grid(n), BLOCK](d_x, d_y, out, 0)
        return close_to(out.copy_to_host(), x.astype(np.float64) + y), {}

    return [
        called,
        relaunched,
        attempt(
            "B2",
            "a dictionary of device functions indexed in a kernel (article 001's dismissed alternative)",
            dictionary,
            article="001",
        ),
        image_pipeline(dev),
    ]


def image_pipeline(dev):
    """Article 001's second example: image_processing_kernel calls three 2D kernels as functions
    with one parameter of three meanings; run on a small image for each operation id."""
    cuda = dev.cuda

    @cuda.jit
    def blur_image(img, out, blur_radius):
        x, y = cuda.grid(2)
        if x < img.shape[0] and y < img.shape[1]:
            avg = 0.0
            for i in range(-blur_radius, blur_radius + 1):
                for j in range(-blur_radius, blur_radius + 1):
                    nx, ny = x + i, y + j
                    if nx >= 0 and nx < img.shape[0] and ny >= 0 and ny < img.shape[1]:
                        avg += img[nx, ny]
            count = (2 * blur_radius + 1) ** 2
            out[x, y] = avg / count

    @cuda.jit
    def sharpen_image(img, out, sharpen_factor):
        x, y = cuda.grid(2)
        if x < img.shape[0] and y < img.shape[1]:
            out[x, y] = img[x, y] * sharpen_factor

    @cuda.jit
    def invert_colors(img, out):
        x, y = cuda.grid(2)
        if x < img.shape[0] and y < img.shape[1]:
            out[x, y] = 255 - img[x, y]

    @cuda.jit
    def image_processing_kernel(img, out, operation_id, param1):
        if operation_id == 0:
            blur_image(img, out, param1)
        elif operation_id == 1:
            sharpen_image(img, out, param1)
        elif operation_id == 2:
            invert_colors(img, out)

    def run():
        img = (np.arange(64 * 48, dtype=np.float32).reshape(64, 48) % 251).astype(np.float32)
        padded = np.pad(img.astype(np.float64), 1)
        blur = sum(padded[1 + i : 65 + i, 1 + j : 49 + j] for i in (-1, 0, 1) for j in (-1, 0, 1)) / 9
        valid = True
        for op, param, expected in ((0, 1, blur), (1, 3, img * 3.0), (2, 0, 255.0 - img)):
            out = cuda.device_array_like(img)
            image_processing_kernel[(8, 6), (8, 8)](cuda.to_device(img), out, op, param)
            valid = valid and close_to(out.copy_to_host(), expected, rtol=1e-5, atol=1e-3)
        return valid, {}

    return attempt(
        "example",
        "001 example 2: image_processing_kernel calling blur_image, sharpen_image, invert_colors",
        run,
        article="001",
    )


# --- B4: the structured task array --------------------------------------------------------------


def task_records(dev):
    cuda = dev.cuda
    task_dtype = np.dtype([("operation_id", np.int32), ("param1", np.float32), ("param2", np.float32)])

    @cuda.jit
    def generic_compute_kernel(data, tasks, out):
        idx = cuda.grid(1)
        if idx < data.size:
            task = tasks[idx % tasks.size]
            if task.operation_id == 0:
                out[idx] = data[idx] + task.param1 + task.param2
            elif task.operation_id == 1:
                out[idx] = data[idx] * task.param1 * task.param2
            else:
                out[idx] = data[idx]

    def run():
        n, rng = 1 << 24, np.random.default_rng(2)
        data = rng.random(n, dtype=np.float32)
        tasks = np.zeros(1000, dtype=task_dtype)
        tasks["operation_id"] = rng.integers(0, 3, tasks.size)
        tasks["param1"], tasks["param2"] = rng.random(tasks.size), rng.random(tasks.size)
        t = tasks[np.arange(n) % tasks.size]
        d = data.astype(np.float64)
        p1, p2 = t["param1"].astype(np.float64), t["param2"].astype(np.float64)
        expected = np.where(
            t["operation_id"] == 0, d + p1 + p2, np.where(t["operation_id"] == 1, d * p1 * p2, d)
        )
        d_data, d_tasks, out = (
            cuda.to_device(data),
            cuda.to_device(tasks),
            cuda.device_array(n, dtype=np.float32),
        )
        ms = gpu_median_ms(dev, lambda: generic_compute_kernel[grid(n), BLOCK](d_data, d_tasks, out))
        return close_to(out.copy_to_host(), expected), {"n": n, "ms": ms, "GB/s": 8 * n / (ms * 1e-3) / 1e9}

    return [
        attempt(
            "B4",
            (
                "article 001's generic_compute_kernel: the op and its parameters read per element from a "
                "NumPy structured array"
            ),
            run,
            article="001",
        )
    ]


# --- D1: NumPy on the host against the GPU, transfers included ----------------------------------


def numpy_against_gpu(dev):
    """Article 003's Numba example (square 2^20 float32 elements, to_device, kernel, copy_to_host)
    and the same at 2^26, against NumPy's x * x on the host."""
    cuda = dev.cuda

    @cuda.jit
    def my_kernel(x, y):
        idx = cuda.grid(1)
        if idx < x.size:
            y[idx] = x[idx] * x[idx]

    def run():
        figures, valid = {}, True
        for n in (1024 * 1024, BIG):
            x_cpu = np.random.default_rng(3).random(n).astype(np.float32)

            def with_transfers():
                x_gpu = cuda.to_device(x_cpu)
                y_gpu = cuda.device_array_like(x_gpu)
                my_kernel[grid(n), BLOCK](x_gpu, y_gpu)
                return y_gpu.copy_to_host()

            valid = valid and close_to(with_transfers(), x_cpu.astype(np.float64) ** 2)
            x_gpu, y_gpu = cuda.to_device(x_cpu), cuda.device_array(n, dtype=np.float32)
            figures[str(n)] = {
                "numpy_ms": host_median_ms(lambda: x_cpu * x_cpu, repetitions=7),
                "gpu_with_transfers_ms": host_median_ms(with_transfers, cuda.synchronize, repetitions=7),
                "gpu_kernel_ms": gpu_median_ms(dev, lambda: my_kernel[grid(n), BLOCK](x_gpu, y_gpu)),
            }
        return valid, figures

    return [
        attempt(
            "D1",
            (
                "article 003's Numba example (y = x * x, to_device, kernel, copy_to_host) against NumPy on"
                " the host"
            ),
            run,
            article="003",
        )
    ]


# --- compile cost in each cache state ------------------------------------------------------------


def compile_states(dev):
    """A new function's kernel (what a user's new op costs), then the same kernel again (Numba's
    in-memory dispatcher cache). Numba keeps no disk cache unless cache=True is asked for."""
    cuda = dev.cuda
    x = cuda.to_device(np.arange(1 << 16, dtype=np.float32))
    out = cuda.device_array_like(x)

    def run():
        new, hit = [], []
        for _ in range(3):
            c = np.float32(fresh_constant())  # in the machine code: no cache has seen this kernel
            f = cuda.jit(device=True)(lambda v: v * v + c)

            @cuda.jit
            def kernel(xs, ys):
                j = cuda.grid(1)
                if j < xs.size:
                    ys[j] = f(xs[j])

            for times in (new, hit):
                t0 = time.perf_counter()
                kernel[grid(x.size), BLOCK](x, out)
                cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
        xs = x.copy_to_host().astype(np.float64)
        return close_to(out.copy_to_host(), xs * xs + float(c)), {
            "new_source_ms": new,
            "memory_hit_ms": hit,
            "constant": float(c),
        }

    return attempt(
        "compile", "Numba: a kernel calling a new device function, first call and the call after", run
    )
