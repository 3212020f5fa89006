// 16 - An interpreter: the op as data, run by a kernel compiled with the program.
//
// Idea.    A user's op in 08's language (common/expression.hpp) is encoded on the host, in
//          microseconds and with no compiler, into a few instructions of a small register machine
//          (common/bytecode.hpp), which a kernel built ahead of time takes as an argument and runs.
//          Each instruction is fetched and decoded once for all of a thread's lanes: its elements
//          (one, or a 16-byte vector's) times several steps of the map's k loop at once. The
//          machine's registers are arrays with a lane each, and an operand's number picks one
//          through a switch whose every case names its register with a constant, so the file stays
//          in the SM's registers: indexed by a number read at run time, it would live in local memory.
// Cost.    No compile: a new op's first result costs its encoding and one launch. Per call, what a
//          compiler folds away is paid at run time: an instruction's fetch and decode, a branch for
//          each operand and for the op, a copy of each operand's lanes, and numbers read from the
//          argument instead of written into the instructions. The report's dispatch figure (16
//          beside 03's switch, 04's pointer and 08's compiled kernel) and its first-result line.
// Use it   for an op a user types, while a compiled kernel for it is not ready (10's tiered
//          dispatch starts here), or where no compiler can run at all.
// See it.  `cuobjdump -res-usage`: interpreter_vec and interpreter_scalar use no local memory; in
//          their SASS, an op's lanes are straight-line code behind one branch, and the k loop holds
//          the instruction loop.
// Run it.  `cdl_run --strategy 16_interpreter/vec --op quadratic --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. strategies/16_interpreter.cu is the lesson: the same kernel for one type, with its main.
#include "strategies/interpreter.hpp"

#include "common/registry.hpp"
#include "common/skeletons/map.cuh"

#include <algorithm>
#include <map>
#include <mutex>

namespace cdl::interpreter {
namespace {

namespace bc = bytecode;
static_assert(bc::max_registers == 8, "the register switch below names eight registers");
static_assert((bc::max_constants & (bc::max_constants - 1)) == 0, "a number's index is masked");

// The program as the kernel's argument: in the constant bank, where a warp reads each instruction
// once for all of its threads, and sent with the launch (no copy of its own). __grid_constant__
// lets the kernel index it without a copy in local memory.
template <class T>
struct kernel_program {
  bc::instruction code[bc::max_instructions];
  T constants[bc::max_constants];  // in the element type, converted once on the host
  int length;
  std::uint8_t result;
};

// Operand o on every lane. Each case names its register with a constant; a number is one value
// for every lane. Whatever the byte says, the read stays inside the file and the numbers.
template <class T, int L>
__device__ __forceinline__ void fetch(const kernel_program<T>& p, const T (&r)[8][L], std::uint8_t o,
                                      T (&out)[L]) {
  if (o & bc::constant_bit) {
    const T c = p.constants[o & (bc::max_constants - 1)];
#pragma unroll
    for (int l = 0; l < L; ++l) out[l] = c;
    return;
  }
#define CDL_REGISTER(i) \
  case i: _Pragma("unroll") for (int l = 0; l < L; ++l) out[l] = r[i][l]; return;
  switch (o) {
    CDL_REGISTER(0)
    CDL_REGISTER(1)
    CDL_REGISTER(2)
    CDL_REGISTER(3)
    CDL_REGISTER(4)
    CDL_REGISTER(5)
    CDL_REGISTER(6)
    CDL_REGISTER(7)
  }
#undef CDL_REGISTER
#pragma unroll
  for (int l = 0; l < L; ++l) out[l] = T(0);
}

// The result into register d; a byte past the file writes nothing.
template <class T, int L>
__device__ __forceinline__ void store(T (&r)[8][L], std::uint8_t d, const T (&v)[L]) {
#define CDL_REGISTER(i) \
  case i: _Pragma("unroll") for (int l = 0; l < L; ++l) r[i][l] = v[l]; return;
  switch (d) {
    CDL_REGISTER(0)
    CDL_REGISTER(1)
    CDL_REGISTER(2)
    CDL_REGISTER(3)
    CDL_REGISTER(4)
    CDL_REGISTER(5)
    CDL_REGISTER(6)
    CDL_REGISTER(7)
  }
#undef CDL_REGISTER
}

// Operand b's value on lane l: its own, or the one number.
template <class T, int L>
__device__ __forceinline__ T lane(const T (&b)[L], int l) {
  return b[l];
}
template <class T>
__device__ __forceinline__ T lane(const T& b, int) {
  return b;
}

// An op of two or three operands on every lane; b is the lanes of a register or one number (the
// encoder puts a number in b where the op commutes). c is fetched by the ops that read it.
#define CDL_LANES(expression)                                        \
  _Pragma("unroll") for (int l = 0; l < L; ++l) v[l] = (expression); \
  return;
template <int L, class T, class B>
__device__ __forceinline__ void binary(const kernel_program<T>& p, const T (&r)[8][L], bc::instruction in,
                                       const T (&a)[L], const B& b, T (&v)[L]) {
  T c[L];
  switch (in.code) {
    case bc::op::add: CDL_LANES(a[l] + lane(b, l))
    case bc::op::subtract: CDL_LANES(a[l] - lane(b, l))
    case bc::op::multiply: CDL_LANES(a[l] * lane(b, l))
    case bc::op::divide: CDL_LANES(a[l] / lane(b, l))
    case bc::op::fma: fetch(p, r, in.c, c); CDL_LANES(a[l] * lane(b, l) + c[l])
    case bc::op::less: CDL_LANES(T(a[l] < lane(b, l)))
    case bc::op::less_equal: CDL_LANES(T(a[l] <= lane(b, l)))
    case bc::op::greater: CDL_LANES(T(a[l] > lane(b, l)))
    case bc::op::greater_equal: CDL_LANES(T(a[l] >= lane(b, l)))
    case bc::op::equal: CDL_LANES(T(a[l] == lane(b, l)))
    case bc::op::not_equal: CDL_LANES(T(a[l] != lane(b, l)))
    case bc::op::select: fetch(p, r, in.c, c); CDL_LANES(a[l] != T(0) ? lane(b, l) : c[l])
    case bc::op::min: CDL_LANES(lane(b, l) < a[l] ? lane(b, l) : a[l])
    case bc::op::max: CDL_LANES(a[l] < lane(b, l) ? lane(b, l) : a[l])
    default: CDL_LANES(a[l])
  }
}

// One instruction on every lane. The ops of one operand are apart, so that their code (sin's is
// long) is not compiled twice.
template <class T, int L>
__device__ __forceinline__ void execute(const kernel_program<T>& p, T (&r)[8][L], bc::instruction in) {
  T a[L], v[L];
  fetch(p, r, in.a, a);
  switch (in.code) {
    case bc::op::negate: _Pragma("unroll") for (int l = 0; l < L; ++l) v[l] = -a[l]; break;
    case bc::op::sin: _Pragma("unroll") for (int l = 0; l < L; ++l) v[l] = sin(a[l]); break;
    case bc::op::cos: _Pragma("unroll") for (int l = 0; l < L; ++l) v[l] = cos(a[l]); break;
    case bc::op::exp: _Pragma("unroll") for (int l = 0; l < L; ++l) v[l] = exp(a[l]); break;
    case bc::op::sqrt: _Pragma("unroll") for (int l = 0; l < L; ++l) v[l] = sqrt(a[l]); break;
    default:
      if (in.b & bc::constant_bit) {
        binary<L>(p, r, in, a, p.constants[in.b & (bc::max_constants - 1)], v);
      } else {
        T b[L];
        fetch(p, r, in.b, b);
        binary<L>(p, r, in, a, b, v);
      }
  }
  store(r, in.dst, v);
}
#undef CDL_LANES

// map_apply (skeletons/map.cuh) for E values, S steps of the k loop at a time: lane s * E + e is
// element e at step j + s. The sums are added in map_apply's order, so the result is what it
// computes with the op compiled.
template <int E, int S, class T>
__device__ __forceinline__ void map_apply_interpreted(const kernel_program<T>& p, const T (&x)[E],
                                                      T (&acc)[E], int k) {
  constexpr int L = E * S;
  T r[8][L] = {};
  const int length = p.length < 0 ? 0 : p.length > bc::max_instructions ? bc::max_instructions : p.length;
#pragma unroll
  for (int e = 0; e < E; ++e) acc[e] = T(0);
#pragma unroll 1
  for (int j = 0; j < k; j += S) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const T offset = T(j + s) * T(map_delta);
#pragma unroll
      for (int e = 0; e < E; ++e) r[0][s * E + e] = x[e] + offset;
    }
#pragma unroll 1
    for (int i = 0; i < length; ++i) execute(p, r, p.code[i]);
    T out[L];
    fetch(p, r, p.result, out);
#pragma unroll
    for (int s = 0; s < S; ++s)
      if (j + s < k)
#pragma unroll
        for (int e = 0; e < E; ++e) acc[e] += out[s * E + e];
  }
}

// The map skeleton's two forms (an element a thread; a 16-byte vector a thread, whole vectors
// only), with the interpreter in place of the op.
template <class T, int S>
__global__ void __launch_bounds__(skeleton::elementwise_block)
    interpreter_scalar(const T* __restrict__ x, T* __restrict__ y, std::size_t n, int k,
                       const __grid_constant__ kernel_program<T> p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T e[1] = {x[i]};
  T acc[1];
  map_apply_interpreted<1, S>(p, e, acc, k);
  y[i] = acc[0];
}
template <class T, int S>
__global__ void __launch_bounds__(skeleton::elementwise_block)
    interpreter_vec(const T* __restrict__ x, T* __restrict__ y, std::size_t n, int k,
                    const __grid_constant__ kernel_program<T> p) {
  using V = typename skeleton::vec16<T>::type;
  constexpr int lanes = sizeof(V) / sizeof(T);
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n / lanes) return;
  T e[lanes], acc[lanes];
  skeleton::to_lanes(reinterpret_cast<const V*>(x)[i], e);
  map_apply_interpreted<lanes, S>(p, e, acc, k);
  reinterpret_cast<V*>(y)[i] = skeleton::from_lanes(acc);
}

// Lanes a thread computes at once when k allows: eight floats or four doubles (the register file
// is eight registers of that many lanes). Fewer steps a pass when k is smaller.
template <class T>
constexpr int most_lanes = sizeof(T) == 4 ? 8 : 4;

template <class T>
void launch(const map_launch& a, const bc::program& program, bool guarded) {
  if (guarded && !bc::valid(program))
    throw error("16_interpreter: the program is not one the interpreter runs:\n" + bc::to_string(program));
  kernel_program<T> p{};
  const std::size_t length = std::min(program.code.size(), std::size_t(bc::max_instructions));
  std::copy_n(program.code.begin(), length, p.code);
  std::transform(
      program.constants.begin(),
      program.constants.begin() + std::min(program.constants.size(), std::size_t(bc::max_constants)),
      p.constants, [](double c) { return T(c); });
  p.length = int(length);
  p.result = program.result;
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, sizeof(T), {a.x, a.y});
  constexpr int vec_lanes = int(sizeof(typename skeleton::vec16<T>::type) / sizeof(T));
  const bool vec = g.form == map_form::vec;
  const int steps = (vec ? most_lanes<T> / vec_lanes : most_lanes<T>);
  const bool many = a.k >= steps;
  auto kernel = vec ? (many ? interpreter_vec<T, most_lanes<T> / vec_lanes> : interpreter_vec<T, 1>)
                    : (many ? interpreter_scalar<T, most_lanes<T>> : interpreter_scalar<T, 1>);
  kernel<<<g.grid, skeleton::elementwise_block, 0, a.stream>>>(static_cast<const T*>(a.x),
                                                               static_cast<T*>(a.y), a.n, a.k, p);
  CDL_CHECK_LAUNCH();
}

}  // namespace

void launch_map(const map_launch& a, const bc::program& p) {
  if (a.n == 0) return;
  visit_dtype(a.type, [&](auto t) { launch<decltype(t)>(a, p, true); });
}

void launch_map_unguarded(const map_launch& a, const bc::program& p) {
  if (a.n == 0) return;
  visit_dtype(a.type, [&](auto t) { launch<decltype(t)>(a, p, false); });
}

void launch_map(const map_launch& a, const jit::op_text& op) {
  // Encoded on the first launch of a text, found by it on every later one (a map lookup, as 08's).
  static std::map<std::string, bc::program> encoded;
  static std::mutex mutex;
  const bc::program* p = nullptr;
  {
    const std::lock_guard lock(mutex);
    auto found = encoded.find(op.source);
    if (found == encoded.end()) found = encoded.emplace(op.source, bc::encode(expr::parse(op.source))).first;
    p = &found->second;  // std::map's elements stay where they are
  }
  launch_map(a, *p);
}

}  // namespace cdl::interpreter

namespace cdl {

void register_16_interpreter(registry& r) {
  r.add_map("16_interpreter", "", [](const map_launch& a) {
    interpreter::launch_map(a, jit::builtin_op(a.op));  // ops.cuh's text is in the language
  });
}

}  // namespace cdl
