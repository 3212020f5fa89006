// 16 - An interpreter: the op as data, run by a kernel compiled with the program.
//
// Idea.    A user's op in 08's language (common/expression.hpp) is encoded on the host, in
//          microseconds and with no compiler, into steps of a small machine (common/bytecode.hpp:
//          encode, then lower), which a kernel built ahead of time takes as an argument and runs.
//          A kernel cannot index registers with a number it reads (they would live in local
//          memory), so each step writes one accumulator and is one case of a switch whose code
//          names what it reads: the accumulator, x, one of four slots, or a number (run_steps,
//          the lesson's loop: strategies/16_interpreter.cu). A step is fetched and decoded once
//          for all of a thread's lanes: its elements (one, or 16-byte vectors) times several steps
//          of the map's k loop, and a long program that saves nothing gets twice the vectors where
//          k is small. A run of Horner's steps (acc = acc * x + a number: a polynomial, the
//          commonest long op) runs in a loop of its own, a test a step, with no dispatch tree: what
//          a step costs against a compiled kernel is the op-length sweep (`oplength/` benchmarks,
//          the report's section).
// Cost.    No compile: a new op's first result costs its encoding and one launch. Per call, what a
//          compiler folds away is paid at run time: a step's fetch, the branches to its case, a
//          value saved to a slot where it must wait, numbers read from the argument instead of
//          written into the instructions, and the registers the lanes take. The report's dispatch
//          figure (16 beside 03's switch, 04's pointer and 08's compiled kernel) and its first screen.
// Use it   for an op a user types, while a compiled kernel for it is not ready (10's tiered
//          dispatch starts here), or where no compiler can run at all.
// See it.  `cuobjdump -res-usage`: interpreter_vec and interpreter_scalar (float's under C names,
//          in interpreter_f32.cu) use no local memory but sin's reduction's stack; in their SASS,
//          the k loop holds the step loop, and each step branches to one case whose lanes are
//          straight-line code.
// Run it.  `cdl_run --strategy 16_interpreter/vec --op quadratic --n 2^24 --k 16`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
// Read it. strategies/16_interpreter.cu is the lesson: the same kernel for one type, with its main.
#include "strategies/suite/interpreter.hpp"
#include "strategies/suite/interpreter_kernels.cuh"

#include "common/registry.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

namespace cdl::interpreter {
namespace {

namespace bc = bytecode;

// The map skeleton's two forms (an element a thread; 16-byte vectors, whole vectors only), with
// the interpreter in place of the op: the bodies in strategies/suite/interpreter_kernels.cuh.
template <class T, int S, int Slots>
__global__ void __launch_bounds__(skeleton::elementwise_block)
    interpreter_scalar(const T* __restrict__ x, T* __restrict__ y, std::size_t n, int k,
                       const __grid_constant__ kernel_program<T> p) {
  interpreter_scalar_body<S, Slots>(x, y, n, k, p);
}
template <class T, int V, int S, int Slots>
__global__ void __launch_bounds__(skeleton::elementwise_block)
    interpreter_vec(const T* __restrict__ x, T* __restrict__ y, std::size_t n, int k,
                    const __grid_constant__ kernel_program<T> p) {
  interpreter_vec_body<V, S, Slots>(x, y, n, k, p);
}
// The kernel of each form: the template's, or for float the same body under its C name
// (interpreter_f32.cu, which the Python peers' file is made of), so that each is compiled once.
template <class T, int S, int Slots>
constexpr auto scalar_kernel = &interpreter_scalar<T, S, Slots>;
template <class T, int V, int S, int Slots>
constexpr auto vec_kernel = &interpreter_vec<T, V, S, Slots>;
#define CDL_FLOAT_SCALAR_NAMED(S, SLOTS) \
  template <>                            \
  constexpr auto scalar_kernel<float, S, SLOTS> = &::cdl_interpreter_scalar_f32_##S##_##SLOTS;
#define CDL_FLOAT_VEC_NAMED(V, S, SLOTS) \
  template <>                            \
  constexpr auto vec_kernel<float, V, S, SLOTS> = &::cdl_interpreter_vec_f32_##V##_##S##_##SLOTS;
CDL_INTERPRETER_F32_FORMS(CDL_FLOAT_SCALAR_NAMED, CDL_FLOAT_VEC_NAMED)

// The kernels for Slots slots, and the launch of the one for a's form and k.
// A program of this many steps or more, that saves nothing, runs where k is small on twice the
// vectors a thread: its steps' dispatch, paid once for all of a thread's lanes, is then paid once for
// twice the elements (batching across elements as well as across k). Shorter programs keep fewer
// registers and more threads, which the memory-bound map needs more (the op-length sweep shows both).
constexpr int long_program = 8;

template <class T, int Slots>
void launch_with(const map_launch& a, const kernel_program<T>& p) {
  constexpr int vec_lanes = int(sizeof(typename skeleton::vec16<T>::type) / sizeof(T));
  constexpr int block = skeleton::elementwise_block;
  const auto* x = static_cast<const T*>(a.x);
  auto* y = static_cast<T*>(a.y);
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, sizeof(T), {a.x, a.y});
  if (g.form == map_form::vec) {
    const std::size_t nvec = a.n / vec_lanes;
    const auto grid = [&](int vectors) { return unsigned((nvec + vectors * block - 1) / (vectors * block)); };
    if (a.k >= most_lanes<T> / vec_lanes)
      vec_kernel<T, 1, most_lanes<T> / vec_lanes, Slots><<<grid(1), block, 0, a.stream>>>(x, y, a.n, a.k, p);
    else if (Slots == 0 && p.length >= long_program)
      vec_kernel<T, 4, 1, 0><<<grid(4), block, 0, a.stream>>>(x, y, a.n, a.k, p);
    else
      vec_kernel<T, 2, 1, Slots><<<grid(2), block, 0, a.stream>>>(x, y, a.n, a.k, p);
  } else if (a.k >= most_lanes<T>) {
    scalar_kernel<T, most_lanes<T>, Slots><<<g.grid, block, 0, a.stream>>>(x, y, a.n, a.k, p);
  } else {
    scalar_kernel<T, 1, Slots><<<g.grid, block, 0, a.stream>>>(x, y, a.n, a.k, p);
  }
  CDL_CHECK_LAUNCH();
}

template <class T>
void launch(const map_launch& a, const bc::steps& program) {
  kernel_program<T> p{};
  const std::size_t length = std::min(program.code.size(), std::size_t(bc::max_steps));
  std::copy_n(program.code.begin(), length, p.code);
  const std::size_t numbers = std::min(program.constants.size(), std::size_t(bc::max_constants));
  std::transform(program.constants.begin(), program.constants.begin() + numbers, p.constants,
                 [](double c) { return T(c); });
  p.length = int(length);
  // Each slot is a register per lane: a program runs on the kernels with the fewest slots that hold
  // it (none, two, or all four), since a kernel with slots it never uses still keeps their registers
  // (and where they run out, spills).
  static_assert(bc::max_slots == 4, "the kernels below are built for 0, 2 and 4 slots");
  if (program.slots == 0)
    launch_with<T, 0>(a, p);
  else if (program.slots <= 2)
    launch_with<T, 2>(a, p);
  else
    launch_with<T, bc::max_slots>(a, p);
}

std::atomic<bool> launched{false};  // a kernel of the interpreter has launched in this process

}  // namespace

void launch_map(const map_launch& a, const bc::steps& p) {
  if (a.n == 0) return;
  visit_dtype(a.type, [&](auto t) { launch<decltype(t)>(a, p); });
  launched.store(true, std::memory_order_relaxed);
}

bool kernels_loaded() {
  static const bool eager = [] {
    const char* loading = std::getenv("CUDA_MODULE_LOADING");
    return loading && std::string_view(loading) == "EAGER";
  }();
  return eager || launched.load(std::memory_order_relaxed);
}

const bc::steps& prepare(const jit::op_text& op) {
  // Encoded the first time a text is seen, found by it after that (a map lookup, as 08's).
  static std::map<std::string, bc::steps> encoded;
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  auto found = encoded.find(op.source);
  if (found == encoded.end())
    found = encoded.emplace(op.source, bc::lower(bc::encode(jit::program_of(op)))).first;
  return found->second;  // std::map's elements stay where they are
}

void launch_map(const map_launch& a, const jit::op_text& op) { launch_map(a, prepare(op)); }

}  // namespace cdl::interpreter

namespace cdl {

void register_16_interpreter(registry& r) {
  r.add_map("16_interpreter", "", [](const map_launch& a) {
    interpreter::launch_map(a, jit::builtin_op(a.op));  // ops.cuh's text is in the language
  });
  r.op_length.push_back({"16_interpreter", [](const map_launch& a, int steps) {
                           interpreter::launch_map(a, jit::polynomial_op(steps));
                         }});
  // A user's op in the language: encoded at its first launch (or by prepare), no compiler.
  r.routes.push_back({"16_interpreter", "", true,
                      [](const map_launch& a, const jit::op_text& op) { interpreter::launch_map(a, op); },
                      [](const jit::op_text& op, dtype, map_form) -> std::string {
                        try {
                          interpreter::prepare(op);
                          return "";
                        } catch (const error& e) {
                          return std::string("16_interpreter refuses it: ") + e.what();
                        }
                      },
                      [](const jit::op_text& op, dtype, map_form) {
                        interpreter::prepare(op);
                        return true;
                      }});
}

}  // namespace cdl
