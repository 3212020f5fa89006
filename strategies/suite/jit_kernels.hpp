// What the run-time strategies 06 (NVRTC JIT) and 07 (JIT LTO) share: the programs they
// generate for each workload from an op's source text, and the launches of the kernels they
// load. The two differ only in how source becomes a CUBIN (their own files say how).
//
// A generated program is small: it includes the workload's skeleton header (the one nvcc
// compiled, embedded in the executable), defines `cdl::ops::jit_op` from the op's text in the
// shape the skeleton calls, and names the skeleton's kernel templates instantiated with it. The
// op's text is preceded by `#line 1 "<op name>"`, so compiler errors name the op's own lines.
#pragma once

#include "common/expression.hpp"
#include "common/jit.hpp"
#include "common/op_text.hpp"
#include "common/registry.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cdl::jit {

enum class workload { map, zip, points, image, tasks, matmul };
std::string_view to_string(workload w);

// Rejects text that must not be pasted into a program, with the reason: empty, longer than
// max_op_source_bytes, a NUL or a preprocessor directive, or brackets that close more than they
// opened (text that could end the function it is pasted into and add code after it) or do
// not close. Everything else is left to the compiler, whose log the user then sees.
inline constexpr std::size_t max_op_source_bytes = 16 * 1024;
void check_op_source(std::string_view source);

// The op alone: `struct <type>` in namespace cdl::ops, made from the op's text in the shape the
// workload's skeleton calls, as every program below contains it. Its members are __device__;
// with that macro defined empty it compiles for the host too (strategies/suite/user_op.cpp).
std::string op_definition(workload w, const op_text& op, std::string_view type);

// The NVRTC option of 06's variant `fast_compile`: fewer optimisations, a shorter compile.
inline constexpr const char* fast_compile_option = "--Ofast-compile=mid";
// The NVRTC option of 07's variant `preoptimised`, for the skeleton's program: the optimiser runs
// on the kernels before their LTO-IR is written (once per process), so that each new op's link
// has less left to do.
inline constexpr const char* preoptimise_option = "--gen-opt-lto";

// The options of every program 06 and 07 generate. NVRTC's -minimal leaves out of its built-in
// header what no skeleton uses (textures and surfaces, the device runtime's functions, launches
// from device code, the runtime API's types): the front end has less to read, and the machine
// code is the same (the map's vec kernel's CUBIN text section compared byte for byte with and
// without it). The report's JIT section times the one-line kernel (NVRTC's floor) both with and
// without them.
extern const std::vector<std::string> generated_program_options;

// The kernels a program instantiates: all of the workload's skeleton's, or the one of a form (its
// index in the form's enum: map_form, layout, image_form, matmul_form; 0 for tasks).
inline constexpr int all_kernels = -1;

// 06: one program holding the op and the workload's kernels for element type t.
program whole_program(workload w, dtype t, const op_text& op, int kernel = all_kernels);
// 07: the kernels, calling an op declared but not defined (the same for every op), and the
// op alone, defining that declaration. Compiled to LTO-IR, they are linked with nvJitLink.
program lto_skeleton_program(workload w, dtype t, int kernel = all_kernels);
program lto_op_program(workload w, dtype t, const op_text& op);

// Everything that determines what compile() makes of p: the cache key.
std::string cache_key(const program& p, int arch, code_kind kind);

// How a run-time strategy makes a module holding one kernel (as above) of (workload, type, op).
using build_fn = module_image (*)(workload w, dtype t, const op_text& op, int arch, int kernel);

// The built-in ops' text, from the catalogue in common/ops.cuh (any op enum with an info()).
template <class Op>
op_text builtin_op(Op op) {
  return {std::string(info(op).name), std::string(info(op).source)};
}
op_text builtin_task_ops();
// The op-length family's polynomial of `steps` steps (common/polynomial.hpp) as an op's text, made
// once; cdl::error for a length not in op_lengths.
const op_text& polynomial_op(int steps);

// An op no compile cache has seen: the quadratic op plus two constants that are new in every
// call (48 bits drawn from a count, the clock and this process's id), so its text, its machine
// code and every cache key made from them are new, in this process and in any earlier one. The
// new-op timings (cdl_bench's jit/.../new_op) compile these: NVRTC's and nvJitLink's caches (kept
// through the driver) and this project's cannot answer them.
op_text never_seen_op();

// The same op in a text no cache has seen: its expression returned from a body that first
// declares a constant new in every call (as never_seen_op's), so the kernel computes exactly
// what `op` does while its text and cache keys are new. For an op written as an expression.
op_text fresh_text(const op_text& op);

// The smallest useful program, for the floor of an NVRTC compile: one line of one kernel, with
// the constants taken from never_seen_op() so that no cache answers it either.
program one_line_program(const op_text& unique);

// The smallest LTO link, for the floor of any nvJitLink route (07's link pays it before its
// kernel's share): a one-line kernel calling an op it only declares, compiled once, and the op,
// one line with the constants taken from never_seen_op() (a text no cache has seen).
program one_line_lto_kernel();
program one_line_lto_op(const op_text& unique);

// Launches with the kernel `build` makes for the launch's op and form, building and loading it
// at its first launch (then kept, with its library, until exit): a new op compiles only the
// kernels it runs.
void launch_map(build_fn build, const map_launch& a, const op_text& op);
// Launches a map kernel found at run time with the skeleton's parameters (x, y, n, k), followed by
// the (empty) op object where the kernel takes one: the skeleton's own kernels, which 06 and 07
// compile, do; 08's kernels in IR and 13's plugin entry points do not.
void launch_map_kernel(cudaKernel_t kernel, unsigned grid, const map_launch& a, bool takes_op_object);
void launch_map(build_fn build, const map_launch& a);
// Builds and loads the kernel launch_map(build, a, op) will run, without launching it: what
// strategy 10 does on a host thread while the switch kernel serves the launches.
void prepare_map(build_fn build, const map_launch& a, const op_text& op);
// Constructs every function-local static prepare_map uses (the caches, the kernel table, the
// compiler's header table) and loads NVRTC, without compiling. Strategy 10 calls it before it makes
// the static that owns its tiered_maps: at exit that static is then destroyed first, and a
// tiered_map's destructor waits for a compile still running (a process may end before its compile
// does) while everything the compile uses is still there.
void construct_prepare_statics();
void launch_zip(build_fn build, const zip_launch& a);
void launch_points(build_fn build, const points_launch& a);
void launch_image(build_fn build, const image_launch& a);
void launch_tasks(build_fn build, const tasks_launch& a);
void launch_matmul(build_fn build, const matmul_launch& a);

// Registers a run-time strategy for every workload: its launches are the ones above, with Build.
template <build_fn Build>
void register_strategy(registry& r, const std::string& strategy, const std::string& variant = "") {
  registry::launches l;
  l.map = [](const map_launch& a) { launch_map(Build, a); };
  l.zip = [](const zip_launch& a) { launch_zip(Build, a); };
  l.points = [](const points_launch& a) { launch_points(Build, a); };
  l.image = [](const image_launch& a) { launch_image(Build, a); };
  l.matmul = [](const matmul_launch& a) { launch_matmul(Build, a); };
  l.tasks = registry::per_element_tasks([](const tasks_launch& a) { launch_tasks(Build, a); });
  r.add_all(strategy, l, variant);
}

// A route for a user's op (registry.hpp's op_route) through Build: it takes C++ text (a program of
// 08's language as the C++ it prints: as_cpp), compiled at its first launch or by prepare.
template <build_fn Build>
void register_route(registry& r, const std::string& strategy, const std::string& variant = "") {
  r.routes.push_back({strategy, variant, false,
                      [](const map_launch& a, const op_text& op) { launch_map(Build, a, op); }, nullptr,
                      [](const op_text& op, dtype t, map_form f) {
                        prepare_map(Build, unlaunched(map_op::quadratic, t, f), op);
                        return true;
                      }});
}

}  // namespace cdl::jit

namespace cdl {
// The build functions of strategies 06 (and its variant `fast_compile`) and 07, for the tests, the timing
// benchmarks and user ops.
extern const jit::build_fn nvrtc_jit_build;
extern const jit::build_fn nvrtc_jit_fast_compile_build;
extern const jit::build_fn jit_lto_build;
}  // namespace cdl
