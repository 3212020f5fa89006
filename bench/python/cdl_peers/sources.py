"""CUDA C source for the peers that compile source text at run time: CuPy's RawKernel, NVRTC
through cuda-python, PyCUDA's SourceModule. One source per workload, so that the three differ
only in how they compile, load and launch it.

The op itself is not written here: it is the text of the C++ catalogue (common/ops.cuh), which
cdl_problem puts in problem.json. This is the articles' SourceModule pattern with the op chosen
by Python at run time, and the reason it works: the source is just a string.

The kernels are the articles' form: one element per thread, `if (i < n)`, no vector loads, the
way the C++ strategies' `scalar` form is written. Each kernel is `extern "C"` so that every
loader finds it by its plain name.
"""

BLOCK = 256  # threads per block of the 1D kernels, as in the C++ skeletons
IMAGE_BLOCK = (32, 8)  # threads per block of the image kernel

# The L2 flush before each timed call, as the C++ suite's (common/timing.cu): it reads a zeroed
# scratch of twice the L2 and writes nothing that stays (the XOR is stored only when it equals
# `never`, which it cannot), so the L2 is left full of clean lines and no write-back of the flush
# lands in the timed call. A memset flush leaves dirty lines whose write-back is timed.
FLUSH_NAME = "cdl_read_flush"
FLUSH_SOURCE = """
extern "C" __global__ void cdl_read_flush(const uint4* __restrict__ scratch, unsigned long long n,
                                          unsigned never, unsigned* sink, unsigned long long hold_ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  unsigned acc = 0;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const uint4 v = scratch[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == never) *sink = acc;
  if (blockIdx.x == 0 && threadIdx.x == 0) {  // the hold: the GPU stays busy while the host queues the call
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < hold_ns);
  }
}
"""
FLUSH_NEVER = 0xFFFFFFFF


def flush_shape(l2_bytes, sm_count):
    """(scratch bytes, 16-byte words, blocks): twice the L2, read by as many blocks as the GPU holds."""
    words = 2 * l2_bytes // 16
    return words * 16, words, min((words + BLOCK - 1) // BLOCK, 8 * sm_count)


def _ctype(problem):
    return "float" if problem.info["type"] == "f32" else "double"


def map_source(problem):
    """y[i] = sum_{j<k} f(x[i] + j * delta): skeletons/map.cuh written out, f from the catalogue."""
    return f"""
typedef {_ctype(problem)} T;
extern "C" __global__ void cdl_map(const T* __restrict__ in, T* __restrict__ out, unsigned long long n,
                                   int k) {{
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T x0 = in[i];
  T acc = T(0);
  for (int j = 0; j < k; ++j) {{
    const T x = x0 + T(j) * T({problem.info["map_delta"]!r});
    acc += {problem.info["source"]};
  }}
  out[i] = acc;
}}
"""


def zip_source(problem):
    return f"""
typedef {_ctype(problem)} T;
extern "C" __global__ void cdl_zip(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                   unsigned long long n) {{
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T x = a[i], y = b[i];
  out[i] = {problem.info["source"]};
}}
"""


def tasks_source(problem):
    """The per-element switch of article 001, over the catalogue's 32 task ops."""
    cases = "\n".join(
        f"    case {i}: v = task_op<{i}>(x[i], t.p1, t.p2); break;"
        for i in range(problem.info["task_op_count"])
    )
    return f"""
struct task {{ int op; float p1, p2; }};
template <int I> __device__ float task_op(float x, float p1, float p2) {{
  typedef float T;
  {problem.info["source"]}
}}
extern "C" __global__ void cdl_tasks(const float* __restrict__ x, const task* __restrict__ tasks,
                                     float* __restrict__ y, unsigned long long n) {{
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const task t = tasks[i];
  float v = 0.0f;
  switch (t.op) {{
{cases}
  }}
  y[i] = v;
}}
"""


def image_source(problem):
    """One thread per pixel; reads clamp to the border, as the C++ image_view does."""
    return f"""
typedef float T;
struct image_view {{
  const T* data;
  int width, height;
  __device__ T at(int x, int y) const {{
    x = x < 0 ? 0 : (x >= width ? width - 1 : x);
    y = y < 0 ? 0 : (y >= height ? height - 1 : y);
    return data[(unsigned long long)y * width + x];
  }}
}};
__device__ T filter(const image_view& img, int x, int y, int r) {{
  (void)r;
  {problem.info["source"]}
}}
extern "C" __global__ void cdl_image(const T* __restrict__ in, T* __restrict__ out, int width, int height,
                                     int r) {{
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height)
    out[(unsigned long long)y * width + x] = filter(image_view{{in, width, height}}, x, y, r);
}}
"""


SOURCES = {
    "map": (map_source, "cdl_map"),
    "zip": (zip_source, "cdl_zip"),
    "tasks": (tasks_source, "cdl_tasks"),
    "image": (image_source, "cdl_image"),
}


def kernel_of(problem):
    """(source, kernel name, grid, block, buffers, scalars) for a problem. buffers(inputs, out)
    lists the kernel's pointer arguments in order; the scalars follow them, as (value, C type),
    for loaders that pack arguments by hand."""
    make, name = SOURCES[problem.workload]
    n = problem.size
    if problem.workload == "image":
        w, h = problem.info["width"], problem.info["height"]
        grid = ((w + IMAGE_BLOCK[0] - 1) // IMAGE_BLOCK[0], (h + IMAGE_BLOCK[1] - 1) // IMAGE_BLOCK[1], 1)
        block = (IMAGE_BLOCK[0], IMAGE_BLOCK[1], 1)
        scalars = [(w, "int"), (h, "int"), (problem.info["r"], "int")]
    else:
        grid, block = ((n + BLOCK - 1) // BLOCK, 1, 1), (BLOCK, 1, 1)
        scalars = [(n, "unsigned long long")] + (
            [(problem.info["k"], "int")] if problem.workload == "map" else []
        )
    order = problem.info["inputs"]

    def buffers(inputs, out):
        return [inputs[k] for k in order] + [out]

    return make(problem), name, grid, block, buffers, scalars
