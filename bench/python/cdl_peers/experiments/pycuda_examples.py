"""Articles 002 and 004's PyCUDA examples (pycuda.py's "example" records), run as the
articles write them: their kernels, their host code (mem_alloc, memcpy_htod, the launch,
memcpy_dtoh) and their arguments; an example that fails is recorded with its error, as it would
meet a reader who copies it. The kernels here serve the claims too (C2, E2)."""
import numpy as np

from cdl_peers.experiment import attempt, close_to

BLOCK = 256

VECTOR_ADD = """
__global__ void add(float *x, float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = x[i] + y[i];
  }
}
"""

# Article 002's shared-memory form: both operands staged through shared memory, then added.
VECTOR_ADD_SHARED = """
__global__ void add_shared(float *x, float *y, float *out, int n) {
  __shared__ float sx[256];
  __shared__ float sy[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    sx[threadIdx.x] = x[i];
    sy[threadIdx.x] = y[i];
  }
  __syncthreads();
  if (i < n) {
    out[i] = sx[threadIdx.x] + sy[threadIdx.x];
  }
}
"""

MATRIX_MULTIPLY = """
__global__ void multiply(float *A, float *B, float *C, int widthA, int widthB) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < widthA && col < widthB) {
    float sum = 0;
    for (int k = 0; k < widthA; ++k) sum += A[row * widthA + k] * B[k * widthB + col];
    C[row * widthB + col] = sum;
  }
}
"""

POINTS = """
struct Point {
  float x;
  float y;
};
__global__ void processPoints(Point *points, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) {
    points[i].x *= 2.0f;
    points[i].y += 1.0f;
  }
}
"""


def examples(dev):
    """Each example of articles 002 and 004 as the article writes it, run and validated; where one
    fails, its error."""
    drv, SourceModule = dev.drv, dev.SourceModule
    n_small = 1024
    rng = np.random.default_rng(5)
    x, y = rng.random(n_small, dtype=np.float32), rng.random(n_small, dtype=np.float32)

    def two_inputs_one_output(f, a, b, *scalars, out=None, **launch):
        """The articles' host code around a kernel f(a, b, c, scalars...): mem_alloc, memcpy_htod
        of a and b, the launch, memcpy_dtoh of c into `out` (default: an array like a)."""
        a_d, b_d, c_d = drv.mem_alloc(a.nbytes), drv.mem_alloc(b.nbytes), drv.mem_alloc(a.nbytes)
        drv.memcpy_htod(a_d, a)
        drv.memcpy_htod(b_d, b)
        f(a_d, b_d, c_d, *scalars, **launch)
        out = np.empty_like(a) if out is None else out
        drv.memcpy_dtoh(out, c_d)
        return out

    vector_grid = {"block": (BLOCK, 1, 1), "grid": ((n_small + BLOCK - 1) // BLOCK, 1)}

    def vector_add(source, name):
        def run():
            f = SourceModule(source).get_function(name)
            out = two_inputs_one_output(f, x, y, np.int32(n_small), **vector_grid)
            return close_to(out, x.astype(np.float64) + y), {}

        return run

    def matrix_multiply(width, width_argument):
        def run():
            a, b = rng.random((width, width), dtype=np.float32), rng.random((width, width), dtype=np.float32)
            f = SourceModule(MATRIX_MULTIPLY).get_function("multiply")
            blocks = (width + 15) // 16
            c = two_inputs_one_output(
                f,
                a,
                b,
                width_argument(width),
                width_argument(width),
                block=(16, 16, 1),
                grid=(blocks, blocks, 1),
            )
            return close_to(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3), {}

        return run

    def add_with_in_argument():  # article 004's example 1: the size passed as cuda.In(n), n an int
        f = SourceModule(VECTOR_ADD).get_function("add")
        c = two_inputs_one_output(
            f, x, y, drv.In(n_small), out=drv.pagelocked_empty(n_small, dtype=np.float32), **vector_grid
        )
        return close_to(c, x.astype(np.float64) + y), {}

    def points_as_written():  # article 004's example 3, its statements in the order they run
        kernel = SourceModule(POINTS).get_function("processPoints")
        points_h = np.zeros(1024, dtype=[("x", np.float32), ("y", np.float32)])
        points_h["x"], points_h["y"] = rng.random(1024), rng.random(1024)
        data = points_h.astype(np.uint8).tobytes()  # the call's argument, evaluated first
        n = 1024
        points_d = drv.mem_alloc(n * 8)  # struct.Struct("ff").size
        points_d_aligned = points_d.get_ptr()
        drv.memcpy_htod(points_d_aligned, data)
        kernel(points_d, drv.In(n), block=(256, 1, 1), grid=((n + 255) // 256, 1))
        result = drv.pagelocked_empty(n, dtype="V2f")
        drv.memcpy_dtoh(result, points_d_aligned)
        # Were it to run: the bytes it sent, as points, against what came back.
        sent = np.frombuffer(data, dtype=points_h.dtype)
        got = np.frombuffer(result.tobytes(), dtype=points_h.dtype)
        return close_to(got["x"], sent["x"] * 2) and close_to(got["y"], sent["y"] + 1), {}

    return [
        attempt(
            "example",
            "002 example 1: vector add (mem_alloc, memcpy_htod, np.int32(n))",
            vector_add(VECTOR_ADD, "add"),
            article="002",
        ),
        attempt(
            "example",
            "002 example 2: matrix multiply, 1024 x 1024",
            matrix_multiply(1024, np.int32),
            article="002",
        ),
        attempt(
            "example",
            "002 example 3: shared-memory vector add (with example 1's host code, which it elides)",
            vector_add(VECTOR_ADD_SHARED, "add_shared"),
            article="002",
        ),
        attempt(
            "example",
            "004 example 1: vector add with the size passed as cuda.In(n)",
            add_with_in_argument,
            article="004",
        ),
        attempt(
            "example",
            "004 example 2: matrix multiply (64 x 64) with the widths passed as cuda.In(width)",
            matrix_multiply(64, drv.In),
            article="004",
        ),
        attempt(
            "example",
            "004 example 3: Point structs (astype(uint8), get_ptr(), dtype 'V2f')",
            points_as_written,
            article="004",
        ),
    ]
