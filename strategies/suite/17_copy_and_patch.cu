// 17 - Copy-and-patch: a user's op written into machine code nvcc compiled ahead of time, and
// loaded with no compiler in the process.
//
// Idea.    The lesson (strategies/17_copy_and_patch.cu) on every op of 08's language the engine
//          holds (strategies/suite/copy_and_patch/, read in this order): stencils.cu, the device
//          code the build compiles into plugins/cdl_stencils.cubin (a chain of each operation and
//          through each pair), cdl_images.cubin (the map with a region of marked steps, scalar and
//          four elements a thread) and cdl_calls_N.cubin (slots of nvcc's own sinf, cosf, expf and
//          sqrtf between windows of steps), and each image kernel alone in plugins/cdl_alone/
//          (ptxas --entry: the cubin an op's image loads); cubin.cpp, the ELF reader and an
//          instruction's fields;
//          learn.cpp, what the program takes from those cubins once a process (each operation's
//          instruction and register fields, the latencies between operations, each image's places
//          and registers); lower.cpp, the op's text to steps of those operations; write.cpp and
//          calls.cpp, the steps given the region's registers, put in its places with stalls from
//          the learnt latencies (a call's function set in its slot's word); decode.cpp, the same
//          images decoded and run on the host, the tests' check. This file loads the patched image
//          with cudaLibraryLoadData and registers the route.
// Cost.    Per new op: the patch (microseconds) and the load of its kernel's own cubin, each form's
//          when it first runs (the driver loads slower the more code it loads and the context
//          holds: a cubin of one kernel, and the last 16 ops' images kept loaded); then
//          nvcc's own instructions (a multiply and the add after it fused, as nvcc does; so is
//          the value of an op that calls nothing where it is a product: the sum computes it) in
//          a k loop that is not unrolled: four elements a thread in the vec form, whose four
//          regions the compiler interleaved, an element a thread in the scalar form, which runs where x
//          or y is not 16-byte aligned or the op's values do not fit a lane's registers
//          (cdl_run --expr says so). Once a process: reading the stencils (the call images' at
//          the first op that calls a function). The report's op-length sweep sets it beside 08's
//          compiled kernel and 16's interpreter; its first result is in the JIT stages'
//          interleaved table.
// Use it   for a user's op that must run as machine code within a millisecond of its text, where
//          it is float, its operations one instruction each (+ - * min max, the multiply-adds nvcc
//          contracts, comparisons and ?:), a division by a constant (its reciprocal's product
//          corrected once, as nvcc's division), or up to twelve calls of sin, cos, exp, sqrt
//          and a division by a value, nvcc's own in a slot (the vec form alone: the catalogue's
//          sine and exp_sin_cos; the same call on the same values made once), and its live
//          values no more than the images' registers. Anything else (float64, a 13th call, an
//          op whose values or steps outgrow every image) is refused with cdl::error naming the
//          reason and the routes that run it (08, 16); so is a GPU whose architecture the
//          stencils were not built for.
// See it.  The lesson's See it. line: its --dump writes a patched image for cuobjdump -sass.
// Run it.  `cdl_bench --benchmark_filter=^oplength/17_copy_and_patch/vec/steps:30/`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line); a typed op:
//          cdl_run --expr 'x * x + 2 * x + 1' (its row 17_copy_and_patch/vec [--expr]).
// Check it. tests/cpu_copy_and_patch_engine_test.cpp decodes random ops' images on the host (no GPU);
//          tests/gpu_copy_and_patch_test.cpp runs them on the GPU against their steps and the
//          language's meaning.
#include "strategies/suite/copy_and_patch.hpp"
#include "strategies/suite/copy_and_patch/decode.hpp"
#include "strategies/suite/jit_kernels.hpp"

#include "common/check.hpp"
#include "common/registry.hpp"
#include "common/skeletons/elementwise.cuh"
#include "common/skeletons/map.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>

namespace cdl::copy_and_patch {

std::string stencils_prefix() {
  const char* from_environment = std::getenv("CDL_PLUGIN_DIR");
  return std::string(from_environment && *from_environment ? from_environment : CDL_PLUGIN_DIR) + "/cdl_";
}

const patch::stencils& host_stencils();

namespace {

static_assert(stencil::delta == float(map_delta), "the images step x as the map does");

// Refuses stencils that are not this GPU's architecture's.
void require_this_gpu(const patch::stencils& st) {
  int device = 0, major = 0, minor = 0;
  CDL_CUDA_CHECK(cudaGetDevice(&device));
  CDL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CDL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major * 10 + minor != st.arch)
    throw error("the stencils are sm_" + std::to_string(st.arch) + "'s and this GPU is sm_" +
                std::to_string(major * 10 + minor) + "'s: build them for it");
}

// A patched image loaded (cudaLibraryLoadData: no compiler, no PTX) and its kernels: the vec kernel
// runs where the op has one and x and y are 16-byte aligned; else the scalar one. Each form's kernel
// is loaded the first time it runs, from the kernel's own cubin with the patch copied in
// (patch::loadable): the driver's load takes longer the more code it loads and the context holds.
struct loaded {
  struct form {
    std::once_flag once;
    cudaLibrary_t library{};
    cudaKernel_t kernel{};
  };
  const patch::stencils& st;
  const patch::compiled c;
  const bool has_scalar = !c.kernel.empty(), has_vec = !c.vec_kernel.empty();
  mutable form forms[2];  // the scalar form's, the vec form's
  loaded(const patch::stencils& s, patch::compiled patched) : st(s), c(std::move(patched)) {
    kernel_of(has_vec);  // the form the route runs first, loaded with the op
  }
  loaded(const loaded&) = delete;  // one unload per load
  loaded& operator=(const loaded&) = delete;
  ~loaded() {  // a kernel of it may still be queued: the device finishes its work before the unload
    cudaDeviceSynchronize();
    for (const form& f : forms)
      if (f.library) cudaLibraryUnload(f.library);
  }
  cudaKernel_t kernel_of(bool vec) const {
    form& f = forms[vec];
    std::call_once(f.once, [&] {
      const std::string& name = vec ? c.vec_kernel : c.kernel;
      const patch::bytes image = patch::loadable(st, c, name);
      CDL_CUDA_CHECK(cudaLibraryLoadData(&f.library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      CDL_CUDA_CHECK(cudaLibraryGetKernel(&f.kernel, f.library, name.c_str()));
    });
    return f.kernel;
  }
  bool runs_vec(const float* x, const float* y) const {
    return has_vec && (reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16 == 0;
  }
  void launch(const float* x, float* y, std::size_t n, int k, cudaStream_t stream, bool vec) const {
    void* args[] = {&x, &y, &n, &k};
    const bool four = vec && runs_vec(x, y);
    const std::size_t threads = four ? (n + stencil::lanes - 1) / stencil::lanes : n;
    constexpr unsigned block = skeleton::elementwise_block;
    CDL_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_of(four)),
                                    unsigned((threads + block - 1) / block), block, args, 0, stream));
  }
};

constexpr const char* other_routes = "run it with 08_expression_jit or 16_interpreter";

// The stencils read for the host (host_stencils(), once a process: the registry's refusals read
// them too), checked against this GPU's architecture the first time an op is patched; a refusal (no
// file, another architecture, a cubin that does not read as expected) is kept and given again to
// every later op.
const patch::stencils& stencils() {
  static std::once_flag once;
  static const patch::stencils* learnt = nullptr;
  static std::string why;
  std::call_once(once, [] {
    try {
      const patch::stencils& st = host_stencils();
      require_this_gpu(st);
      learnt = &st;
    } catch (const std::exception& e) {
      why = e.what();
    }
  });
  if (!learnt) throw error("17_copy_and_patch cannot run on this GPU: " + why + "; " + other_routes);
  return *learnt;
}

// op's image, patched and loaded the first time its text is seen (a lookup after that, while it is
// among the last kept_images texts used). The driver's load of a library takes longer the more code
// the context holds (docs/measurements.md gives the figures), so a process that patches op after op
// keeps only the last few loaded: an op used again after that is patched and loaded again.
constexpr std::size_t kept_images = 16;
std::shared_ptr<const loaded> prepare(const jit::op_text& op) {
  static std::list<std::pair<std::string, std::shared_ptr<const loaded>>> images;  // the last used first
  static std::mutex mutex;
  const patch::stencils& st = stencils();
  const std::lock_guard lock(mutex);
  const auto found =
      std::find_if(images.begin(), images.end(), [&](const auto& i) { return i.first == op.source; });
  if (found != images.end()) {
    images.splice(images.begin(), images, found);
    return found->second;
  }
  patch::compiled c;
  try {
    c = patch::compile(st, jit::program_of(op));
  } catch (const patch::refused& e) {
    throw error(std::string("17_copy_and_patch refuses it: ") + e.what() + "; " + other_routes);
  }
  if (images.size() == kept_images) images.pop_back();  // unloaded once no launch holds it
  images.emplace_front(op.source, std::make_shared<const loaded>(st, std::move(c)));
  return images.front().second;
}

}  // namespace

bool load(const jit::op_text& op, dtype t, map_form form) {
  if (t != dtype::f32) return false;
  try {
    return form == map_form::vec || prepare(op)->has_scalar;  // a call image: the vec form alone
  } catch (const error&) {                                    // refused: the op, or this GPU
    return false;
  }
}

std::string refusal(const std::string& text, dtype t) {
  try {
    if (t != dtype::f32) return refusal_on_host(text, t);
    patch::compile(stencils(), text);
    return "";
  } catch (const patch::refused& e) {
    return std::string("17_copy_and_patch refuses it: ") + e.what() + "; " + other_routes;
  } catch (const error& e) {
    return e.what();
  }
}

void launch_map(const map_launch& a, const jit::op_text& op) {
  const std::string& text = op.source;
  if (const std::string why = a.type == dtype::f32 ? "" : refusal(text, a.type); !why.empty())
    throw error(why);
  const std::shared_ptr<const loaded> held = prepare(op);  // refused: at every size, n = 0 too
  const loaded& image = *held;
  if (!image.has_scalar && a.form != map_form::vec)
    throw error(vec_alone(text));  // as the registry refuses it
  if (!image.has_scalar && !image.runs_vec(static_cast<const float*>(a.x), static_cast<float*>(a.y)))
    throw error(
        "17_copy_and_patch's call images read x and write y four floats at a time: both must be 16-byte "
        "aligned; " +
        std::string(other_routes));
  if (a.n == 0) return;
  image.launch(static_cast<const float*>(a.x), static_cast<float*>(a.y), a.n, a.k, a.stream,
               a.form == map_form::vec);
}

// The stencils read for the host alone (no GPU, whatever architecture they are for).
const patch::stencils& host_stencils() {
  static const patch::stencils st = patch::learn(stencils_prefix());
  return st;
}

std::string refusal_on_host(const std::string& text, dtype t) {
  if (t != dtype::f32)
    return std::string("17_copy_and_patch runs float alone (its stencils are float's), not ") +
           std::string(to_string(t)) + "; " + other_routes;
  try {
    patch::compile(host_stencils(), text);
    return "";
  } catch (const patch::refused& e) {
    return std::string("17_copy_and_patch refuses it: ") + e.what() + "; " + other_routes;
  } catch (const std::exception& e) {
    return std::string("17_copy_and_patch cannot read its stencils: ") + e.what();
  }
}

std::string vec_alone(const std::string& text) {
  try {
    if (!patch::compile(host_stencils(), text).kernel.empty()) return "";
    return std::string(
               "17_copy_and_patch runs an op that calls a function in its vec form alone (the slots "
               "are in the vec images); ") +
           other_routes;
  } catch (const std::exception&) {
    return "";  // refused altogether: refusal() says why
  }
}

std::string scalar_only(const std::string& text) {
  try {
    return patch::compile(host_stencils(), text).vec_refused;
  } catch (const std::exception&) {
    return "";  // refused altogether: refusal() says why
  }
}

std::string check_on_host(const std::string& text, int samples) {
  const patch::stencils& st = host_stencils();
  patch::compiled c;
  try {
    c = patch::compile(st, text);
  } catch (const patch::refused& e) {
    return std::string("refused: ") + e.what();
  }
  const bool calls = c.kernel.empty();  // a call image: the vec form alone
  for (int i = 0; i < samples; ++i) {
    const float x = -4.0f + 8.0f * float(i) / float(samples);
    const float want = patch::emulate(c, x, 3), got = calls ? want : patch::simulate(st, c, x, 3);
    if (!patch::same_result(want, got))
      return "at x = " + std::to_string(x) + " the machine code computes " + std::to_string(got) +
             ", the steps " + std::to_string(want);
    if (c.vec_kernel.empty()) continue;
    const std::array<float, stencil::lanes> xs = {x, -x, x / 2, 1 - x};
    const std::array<float, stencil::lanes> lanes = patch::simulate_vec(st, c, xs, 3);
    for (std::size_t l = 0; l < xs.size(); ++l)
      if (!patch::same_result(lanes[l], patch::emulate(c, xs[l], 3)))
        return "at x = " + std::to_string(xs[l]) + " the vec image's lane " + std::to_string(l) +
               " computes " + std::to_string(lanes[l]) + ", the steps " +
               std::to_string(patch::emulate(c, xs[l], 3));
  }
  return "";
}

std::vector<float> machine_on_host(const std::string& text, const std::vector<float>& xs, int k, bool vec) {
  const patch::stencils& st = host_stencils();
  const patch::compiled c = patch::compile(st, text);
  if (vec ? c.vec_kernel.empty() : c.kernel.empty()) return {};
  std::vector<float> out;
  for (std::size_t i = 0; i < xs.size(); i += vec ? stencil::lanes : 1) {
    if (!vec) {
      out.push_back(patch::simulate(st, c, xs[i], k));
      continue;
    }
    std::array<float, stencil::lanes> four{};
    for (std::size_t l = 0; l < four.size(); ++l) four[l] = xs[std::min(i + l, xs.size() - 1)];
    const std::array<float, stencil::lanes> got = patch::simulate_vec(st, c, four, k);
    for (std::size_t l = 0; l < four.size() && i + l < xs.size(); ++l) out.push_back(got[l]);
  }
  return out;
}

std::string schedule_on_host(const std::string& text, int shorten) {
  const patch::stencils& st = host_stencils();
  patch::compiled c = patch::compile(st, text);
  const int calls = patch::calls_in(c.code);
  for (const std::string& kernel : {c.kernel, c.vec_kernel}) {
    if (kernel.empty() || shorten <= 0) continue;
    const patch::section code =
        patch::text_of((calls ? patch::calls_of(st, calls).kernels : st.kernels).at(kernel));
    for (std::size_t offset = code.offset; offset < code.offset + code.size; offset += 16)
      patch::set_stall(&c.image[offset], std::max(patch::stall(&c.image[offset]) - shorten, 0));
  }
  return patch::check_schedule(st, c);
}

std::vector<std::string> steps_on_host(const std::string& text) {
  std::vector<std::string> names;
  for (const patch::step& s : patch::compile(host_stencils(), text).code)
    names.push_back(s.call ? "call" : stencil::names[s.op]);
  return names;
}

float value_on_host(const std::string& text, float x) {
  return patch::emulate(patch::compile(host_stencils(), text), x, 1);
}

route_explanation explain_on_host(const std::string& text, dtype t) {
  std::string out = "17_copy_and_patch, with no GPU (its stencils: " + stencils_prefix() + "*.cubin";
  if (const std::string why = refusal_on_host(text, t); !why.empty())
    return {false, out + ")\n  refused: " + why + "\n"};
  const patch::stencils& st = host_stencils();
  const patch::compiled c = patch::compile(st, text);
#define CDL_FUNCTION_NAME(name, fn) #name,
  static const char* const functions[] = {"", CDL_SLOT_FUNCTIONS(CDL_FUNCTION_NAME) "div", "pass"};
#undef CDL_FUNCTION_NAME
  static_assert(std::size(functions) == stencil::fn_pass + 1, "a name for each slot's function");
  out += ", built for sm_" + std::to_string(st.arch) + ")\n  its steps (" + std::to_string(c.code.size()) +
         ", each one instruction or a call in a slot):";
  std::vector<std::string> calls;
  for (const patch::step& s : c.code) {
    out += std::string(" ") + (s.call ? functions[s.call] : stencil::names[s.op]);
    if (s.call) calls.push_back(functions[s.call]);
  }
  if (c.product_in_sum)
    out += " (the last, a product, computed by the sum after the region: sum = a * b + sum, one instruction)";
  const std::string check = check_on_host(text);
  const std::string checked = check.empty() ? " (decoded and run on the host: the steps' values at 64 points)"
                                            : " (on the host: " + check + ")";
  out += "\n  scalar form: " + (c.kernel.empty() ? vec_alone(text) : "image " + c.kernel + checked);
  std::string vec =
      c.vec_kernel.empty() ? "none: runs the scalar image: " + c.vec_refused : "image " + c.vec_kernel;
  if (!calls.empty()) {
    vec += ", a slot a call (";
    for (std::size_t g = 0; g < calls.size(); ++g) vec += (g ? ", " : "") + calls[g];
    vec += std::count(calls.begin(), calls.end(), "pass") ? "; pass: a slot the op does not call)" : ")";
  }
  out += "\n  vec form: " + vec + (c.vec_kernel.empty() ? "" : checked) + "\n";
  return {check.empty(), out};
}

}  // namespace cdl::copy_and_patch

namespace cdl {

void register_17_copy_and_patch(registry& r) {
  // The dispatch sweep: the catalogue's text (08's language) patched, where the stencils hold it.
  r.add_map(
      "17_copy_and_patch", "",
      [](const map_launch& a) { copy_and_patch::launch_map(a, jit::builtin_op(a.op)); },
      [](const map_launch& a) {
        const std::string text(jit::builtin_op(a.op).source),
            why = copy_and_patch::refusal_on_host(text, a.type);
        return why.empty() && a.form != map_form::vec ? copy_and_patch::vec_alone(text) : why;
      });
  r.op_length.push_back(
      {"17_copy_and_patch",
       [](const map_launch& a, int steps) { copy_and_patch::launch_map(a, jit::polynomial_op(steps)); },
       map_form::vec, false});
  // A user's op in the language: patched and loaded at its first launch (or by prepare), no
  // compiler; refused where the stencils do not hold it, or on a GPU they were not built for.
  r.routes.push_back(
      {"17_copy_and_patch", "", true,
       [](const map_launch& a, const jit::op_text& op) { copy_and_patch::launch_map(a, op); },
       [](const jit::op_text& op, dtype t, map_form f) {
         const std::string why = copy_and_patch::refusal(op.source, t);
         return why.empty() && f != map_form::vec ? copy_and_patch::vec_alone(op.source) : why;
       },
       [](const jit::op_text& op, dtype t, map_form f) { return copy_and_patch::load(op, t, f); },
       [](const jit::op_text& op, dtype, map_form f) {
         const std::string why = f == map_form::vec ? copy_and_patch::scalar_only(op.source) : "";
         return why.empty() ? why : "runs the scalar image, an element a thread: " + why;
       },
       [](const jit::op_text& op, dtype t) { return copy_and_patch::explain_on_host(op.source, t); }});
}

}  // namespace cdl
