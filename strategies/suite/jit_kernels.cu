// jit_kernels.hpp's programs (the C++ text 06 and 07 generate for each workload from an op's
// text) and launches (each form's kernel built and loaded at its first launch, then found by a
// map lookup). Read the header first, then 06_nvrtc_jit.cu and 07_jit_lto.cu.
#include "jit_kernels.hpp"

#include "common/jit_cache.hpp"
#include "common/polynomial.hpp"
#include "common/skeletons/elementwise.cuh"
#include "common/skeletons/image.cuh"
#include "common/skeletons/matmul.cuh"
#include "common/skeletons/tasks.cuh"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <regex>
#include <tuple>

namespace cdl::jit {

std::string_view to_string(workload w) {
  static constexpr std::string_view names[] = {"map", "zip", "points", "image", "tasks", "matmul"};
  return names[int(w)];
}

namespace {

// How each workload's skeleton calls its op, as text. $T is the element type.
struct workload_shape {
  std::string_view call;                  // the op's call operator, generic in T (image: in the view type V)
  std::string_view prologue;              // names the op's text may use besides the parameters
  std::string_view open, close;           // around an expression: return ( ... ); or return { ... };
  std::string_view result, params, args;  // the same call with concrete types (07's link-time entry)
  std::vector<std::string_view> kernels;  // the skeleton's kernels, one per form in enum order, $F the op
};

// The table keeps one workload to a few lines (the formatter would give each field its own).
// clang-format off
const workload_shape& shape(workload w) {
  static const workload_shape shapes[] = {
      {"template <class T> __device__ T operator()(T x) const", "", "return (", ");",  //
       "$T", "$T x", "x",
       {"&cdl::skeleton::map_scalar_kernel<$T, $F>", "&cdl::skeleton::map_vec_kernel<$T, $F>",
        "&cdl::skeleton::map_staged_kernel<$T, $F>"}},
      {"template <class T> __device__ T operator()(T x, T y) const", "", "return (", ");",  //
       "$T", "$T x, $T y", "x, y",
       {"&cdl::skeleton::zip_scalar_kernel<$T, $F>", "&cdl::skeleton::zip_vec_kernel<$T, $F>",
        "&cdl::skeleton::zip_staged_kernel<$T, $F>"}},
      {"template <class T> __device__ point<T> operator()(point<T> p) const",
       "const T x = p.x, y = p.y; (void)x; (void)y;", "return {", "};",  //
       "point<$T>", "point<$T> p", "p",
       {"&cdl::skeleton::points_aos_kernel<$T, $F>", "&cdl::skeleton::points_soa_kernel<$T, $F>"}},
      {"template <class V> __device__ typename V::value_type "
       "operator()(const V& img, int x, int y, int r) const",
       "using T = typename V::value_type; (void)r;", "return (", ");",  //
       "float", "const image_view<float>& img, int x, int y, int r", "img, x, y, r",
       {"&cdl::skeleton::image_kernel<$F>", "&cdl::skeleton::image_tiled_kernel<$F>"}},
      {"__device__ float operator()(int id, float x, float p1, float p2) const", "", "", "",  //
       "float", "int id, float x, float p1, float p2", "id, x, p1, p2",
       {"&cdl::skeleton::tasks_kernel<$F>"}},
      {"template <class T> __device__ T operator()(T acc, T a, T b) const", "", "return (", ");",  //
       "$T", "$T acc, $T a, $T b", "acc, a, b",
       {"&cdl::skeleton::matmul_naive_kernel<$T, $F>", "&cdl::skeleton::matmul_tiled_kernel<$T, $F>"}},
  };
  return shapes[int(w)];
}
// clang-format on

// Every program's kernels take the op as this type (06: the op itself; 07: a forwarder to it).
constexpr std::string_view invoker = "cdl::ops::jit_op";

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string with_type(std::string_view text, dtype t) {
  return replace_all(std::string(text), "$T", t == dtype::f32 ? "float" : "double");
}

// Builds a program's text; the op's lines are numbered as the op's own (#line).
class source_builder {
 public:
  explicit source_builder(std::string file) : file_(std::move(file)) {}
  source_builder& operator<<(std::string_view text) {
    text_ += text;
    return *this;
  }
  void op_lines(const op_text& op) {
    text_ += "\n#line 1 \"" + op.name + "\"\n" + op.source + "\n";
    text_ += "#line " + std::to_string(line() + 1) + " \"" + file_ + "\"\n";
  }
  std::string str() const { return text_; }

 private:
  int line() const { return int(std::count(text_.begin(), text_.end(), '\n')) + 1; }
  std::string file_, text_;
};

bool is_body(std::string_view source) {
  static const std::regex return_statement(R"(\breturn\b)");
  return std::regex_search(source.begin(), source.end(), return_statement);
}

// `struct <type>`, the op, in namespace cdl::ops (where the op math overloads live).
void define_op(source_builder& b, workload w, const op_text& op, std::string_view type) {
  check_op_source(op.source);
  const workload_shape& s = shape(w);
  b << "namespace cdl::ops {\n";
  if (w == workload::tasks) {
    // Per-element dispatch needs every op in one kernel: the op text is a template over the op
    // id I, and jit_op switches on the id (as strategy 03 does).
    b << "template <int I>\nstruct jit_task_op {\n  template <class T>\n  __device__ T operator()(T x, T p1, "
         "T p2) const {";
    b.op_lines(op);
    b << "  }\n};\nusing jit_task_ops = op_list<";
    for (int i = 0; i < task_op_count; ++i)
      b << (i ? ", " : "") << "jit_task_op<" << std::to_string(i) << ">";
    b << ">;\nstruct " << type << " {\n  struct apply {\n    float x, p1, p2;\n"
      << "    template <class Op>\n    __device__ float operator()(Op op) const { return op(x, p1, p2); }\n  "
         "};\n  "
      << s.call << " {\n    return visit<jit_task_ops>(id, apply{x, p1, p2});\n  }\n};\n";
  } else {
    b << "struct " << type << " {\n  " << s.call << " {\n";
    if (!s.prologue.empty()) b << "    " << s.prologue << "\n";
    if (is_body(op.source)) {
      b << "    {";
      b.op_lines(op);
      b << "    }\n";
    } else {
      b << "    " << s.open;
      b.op_lines(op);
      b << "    " << s.close << "\n";
    }
    b << "  }\n};\n";
  }
  b << "}  // namespace cdl::ops\n";
}

// The skeleton's kernels for type t: all of them, or the one a launch needs (kernel >= 0).
std::vector<std::string> kernel_expressions(workload w, dtype t, int kernel = all_kernels) {
  const auto& kernels = shape(w).kernels;
  if (kernel != all_kernels && (kernel < 0 || std::size_t(kernel) >= kernels.size()))
    throw error("the " + std::string(to_string(w)) + " skeleton has no kernel " + std::to_string(kernel));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kernels.size(); ++i)
    if (kernel == all_kernels || int(i) == kernel)
      out.push_back(replace_all(with_type(kernels[i], t), "$F", invoker));
  return out;
}

std::string file_name(std::string_view strategy, workload w, dtype t, std::string_view op) {
  return std::string(strategy) + "_" + std::string(to_string(w)) + "_" + std::string(op) + "_" +
         std::string(cdl::to_string(t)) + ".cu";
}

std::string include_line(workload w) {
  return "#include \"common/skeletons/" + std::string(to_string(w)) + ".cuh\"\n";
}

}  // namespace

void check_op_source(std::string_view source) {
  if (source.find_first_not_of(" \t\r\n") == std::string_view::npos) throw error("op source is empty");
  if (source.size() > max_op_source_bytes)
    throw error("op source is " + std::to_string(source.size()) + " bytes; the limit is " +
                std::to_string(max_op_source_bytes));
  std::string open;  // brackets not yet closed
  for (std::size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    auto at = [&] { return " at offset " + std::to_string(i) + " of the op source"; };
    if (c == '\0') throw error("op source contains a NUL byte" + at());
    if (c == '"' || c == '\'') {  // skip a literal, escapes included
      std::size_t j = i + 1;
      while (j < source.size() && source[j] != c && source[j] != '\n') j += source[j] == '\\' ? 2 : 1;
      if (j >= source.size() || source[j] != c) throw error("unterminated literal" + at());
      i = j;
    } else if (source.substr(i, 2) == "//") {
      i = std::min(source.find('\n', i), source.size());
    } else if (source.substr(i, 2) == "/*") {
      const std::size_t end = source.find("*/", i + 2);
      if (end == std::string_view::npos) throw error("unterminated comment" + at());
      i = end + 1;
    } else if (c == '#') {
      throw error("preprocessor directives are not allowed in an op ('#'" + at() + ")");
    } else if (c == '(' || c == '{' || c == '[') {
      open += c;
    } else if (c == ')' || c == '}' || c == ']') {
      const char want = c == ')' ? '(' : c == '}' ? '{' : '[';
      if (open.empty() || open.back() != want)
        throw error(std::string("unbalanced '") + c + "'" + at() +
                    (open.empty() ? ": it closes nothing (an op cannot close the function it is pasted into)"
                                  : ": it does not match the open '" + std::string(1, open.back()) + "'"));
      open.pop_back();
    }
  }
  if (!open.empty())
    throw error(std::string("unbalanced '") + open.back() + "': never closed in the op source");
}

std::string op_definition(workload w, const op_text& op, std::string_view type) {
  source_builder b(op.name + "_definition.cu");
  define_op(b, w, op, type);
  return b.str();
}

const std::vector<std::string> generated_program_options = {"-minimal"};

program whole_program(workload w, dtype t, const op_text& op, int kernel) {
  const std::string name = file_name("06", w, t, op.name);
  source_builder b(name);
  b << "// " << name << ": strategy 06, generated at run time\n" << include_line(w);
  define_op(b, w, op, "jit_op");
  return {name, b.str(), kernel_expressions(w, t, kernel), generated_program_options};
}

// 07's two programs meet in one function, lto_entry: declared by the kernels, defined with the
// op. Their op types have different names: one program's inline functions must not be taken
// for the other's when the linker merges them.
static std::string lto_entry(workload w, dtype t, std::string_view name) {
  const workload_shape& s = shape(w);
  return "__device__ " + with_type(s.result, t) + " " + std::string(name) + "(" + with_type(s.params, t) +
         ")";
}

program lto_skeleton_program(workload w, dtype t, int kernel) {
  const std::string name = file_name("07", w, t, "skeleton");
  source_builder b(name);
  b << "// " << name << ": strategy 07's kernels, generated at run time; the op comes at link time\n"
    << include_line(w) << "namespace cdl::ops {\n"
    << lto_entry(w, t, "lto_entry") << ";  // defined in the op's LTO-IR\n"
    << "struct jit_op {\n  " << lto_entry(w, t, "operator()") << " const { return lto_entry(" << shape(w).args
    << "); }\n};\n}  // namespace cdl::ops\n";
  return {name, b.str(), kernel_expressions(w, t, kernel), generated_program_options};
}

program lto_op_program(workload w, dtype t, const op_text& op) {
  const std::string name = file_name("07", w, t, op.name);
  source_builder b(name);
  b << "// " << name << ": strategy 07's op, generated at run time\n" << include_line(w);
  define_op(b, w, op, "lto_op");
  b << "namespace cdl::ops {\n"
    << lto_entry(w, t, "lto_entry") << " { return lto_op{}(" << shape(w).args
    << "); }\n}  // namespace cdl::ops\n";
  return {name, b.str(), {}, generated_program_options};
}

std::string cache_key(const program& p, int arch, code_kind kind) {
  std::string key = "cuda-dispatch-lab jit 1\n" + nvrtc_version() + "\nsm_" + std::to_string(arch) + " " +
                    std::string(to_string(kind)) + "\noptions";
  for (const std::string& o : compile_options(arch, kind)) key += " " + o;
  for (const std::string& o : p.options) key += " " + o;
  key += "\nheaders " + headers_digest() + "\nkernels";
  for (const std::string& e : p.name_expressions) key += " " + e;
  return key + "\nsource " + p.name + "\n" + p.source;
}

op_text builtin_task_ops() { return {"task_ops", std::string(task_op_source)}; }

namespace {
// 48 bits new in every call: a count from a start drawn from the clock and the process id. It is
// spent as two constants below 2^24, which float holds exactly: a single larger constant would
// round to the same float for neighbouring counts, and the machine code (PTX, LTO-IR) of two
// "new" ops would be the same, which a cache keyed by it would answer.
std::pair<std::string, std::string> unique_constants() {
  static const unsigned long long start =
      (unsigned long long)std::chrono::system_clock::now().time_since_epoch().count() *
          0x9e3779b97f4a7c15ull ^
      ((unsigned long long)::getpid() << 24);
  static std::atomic<unsigned long long> count{0};
  const unsigned long long u = (start + count++) & ((1ull << 48) - 1);
  return {std::to_string(u >> 24), std::to_string(u & ((1ull << 24) - 1))};
}
// never_seen_op's two constants, from its name.
std::pair<std::string, std::string> constants_of(const op_text& unique) {
  const std::size_t low = unique.name.rfind('_'), high = unique.name.rfind('_', low - 1);
  return {unique.name.substr(high + 1, low - high - 1), unique.name.substr(low + 1)};
}
}  // namespace

op_text fresh_text(const op_text& op) {
  const auto [high, low] = unique_constants();
  const std::string fresh = "fresh_" + high + "_" + low;
  const std::string declared = "const unsigned long long " + fresh + " = 0; (void)" + fresh + "; ";
  return {op.name + "_" + fresh, declared + (is_body(op.source) ? op.source : "return " + op.source + ";")};
}

const op_text& polynomial_op(int steps) {
  static const std::map<int, op_text> made = [] {
    std::map<int, op_text> m;
    for (int s : op_lengths) m[s] = {"polynomial_" + std::to_string(s), polynomial_text(s)};
    return m;
  }();
  const auto found = made.find(steps);
  if (found == made.end()) throw error("no polynomial of " + std::to_string(steps) + " steps in op_lengths");
  return found->second;
}

op_text never_seen_op() {
  const auto [high, low] = unique_constants();
  return {"new_op_" + high + "_" + low, "x * x + T(2) * x + T(" + high + ") + T(" + low + ")"};
}

program one_line_program(const op_text& unique) {
  const auto [h, l] = constants_of(unique);
  return {"one_line_" + h + "_" + l + ".cu",
          "extern \"C\" __global__ void one_line(float* y) { y[threadIdx.x] = y[threadIdx.x] * " + h +
              ".0f + " + l + ".0f; }\n",
          {},
          {}};
}

program one_line_lto_kernel() {
  return {"one_line_lto_kernel.cu",
          "extern __device__ float op(float);\n"
          "extern \"C\" __global__ void one_line(float* y) { y[threadIdx.x] = op(y[threadIdx.x]); }\n",
          {},
          {}};
}

program one_line_lto_op(const op_text& unique) {
  const auto [h, l] = constants_of(unique);
  return {"one_line_op_" + h + "_" + l + ".cu",
          "__device__ float op(float v) { return v * " + h + ".0f + " + l + ".0f; }\n",
          {},
          {}};
}

namespace {

// A loaded kernel of one (strategy, workload, type, op): each form's is compiled and loaded by
// its first launch, so a new op compiles the one kernel it runs, not every form's.
struct loaded_kernel {
  std::shared_ptr<const loaded> library;
  cudaKernel_t kernel = nullptr;
};

struct kernel_table {
  using key = std::tuple<build_fn, workload, dtype, std::string, std::string, int>;
  std::map<key, loaded_kernel> found;
  std::mutex mutex;
};
kernel_table& kernels() {
  static kernel_table table;
  return table;
}

// Found by the launch on every call, so kept cheap: a map lookup, no compile, no file access.
cudaKernel_t kernel(build_fn build, workload w, dtype t, const op_text& op, int form) {
  kernel_table& table = kernels();
  auto& found_kernels = table.found;
  const std::lock_guard lock(table.mutex);
  kernel_table::key k{build, w, t, op.name, op.source, form};
  if (const auto found = found_kernels.find(k); found != found_kernels.end()) return found->second.kernel;

  const module_image image = build(w, t, op, device_arch(), form);
  loaded_kernel s{std::make_shared<const loaded>(image), nullptr};
  s.kernel = s.library->kernel(kernel_expressions(w, t, form).front());
  if (w == workload::image && form == int(image_form::tiled)) {  // it may take more than the default 48 KiB
    int device = 0;
    CDL_CUDA_CHECK(cudaGetDevice(&device));
    CDL_CUDA_CHECK(cudaKernelSetAttributeForDevice(s.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   int(skeleton::image_tile_bytes(image_max_radius)),
                                                   device));
  }
  return found_kernels.emplace(std::move(k), std::move(s)).first->second.kernel;
}

char no_state = 0;  // the value of the empty op object each kernel takes by value

}  // namespace

void launch_map_kernel(cudaKernel_t kernel, unsigned grid, const map_launch& a, bool takes_op_object) {
  std::size_t n = a.n;
  int k = a.k;
  const void* x = a.x;
  void* y = a.y;
  void* args[] = {&x, &y, &n, &k, &no_state};
  if (!takes_op_object) args[4] = nullptr;  // the runtime reads as many as the kernel has parameters
  launch(kernel, grid, skeleton::elementwise_block, args, a.stream);
}

void launch_map(build_fn build, const map_launch& a, const op_text& op) {
  if (a.n == 0) return;
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y});
  launch_map_kernel(kernel(build, workload::map, a.type, op, int(g.form)), g.grid, a, true);
}
void launch_map(build_fn build, const map_launch& a) { launch_map(build, a, builtin_op(a.op)); }

void prepare_map(build_fn build, const map_launch& a, const op_text& op) {
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y});
  kernel(build, workload::map, a.type, op, int(g.form));
}

void construct_prepare_statics() {
  kernels();
  process_cache();
  headers_digest();
  construct_compile_statics();
  is_body("");
  shape(workload::map);  // the table of every workload's shape
}

void launch_zip(build_fn build, const zip_launch& a) {
  if (a.n == 0) return;
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y, a.z});
  std::size_t n = a.n;
  const void *x = a.x, *y = a.y;
  void* z = a.z;
  void* args[] = {&x, &y, &z, &n, &no_state};
  launch(kernel(build, workload::zip, a.type, builtin_op(a.op), int(g.form)), g.grid,
         skeleton::elementwise_block, args, a.stream);
}

void launch_points(build_fn build, const points_launch& a) {
  if (a.n == 0) return;
  const cudaKernel_t layout_kernel = kernel(build, workload::points, a.type, builtin_op(a.op), a.soa ? 1 : 0);
  const unsigned grid =
      skeleton::elementwise_launch_geometry(map_form::scalar, a.n, size_of(a.type), {}).grid;
  std::size_t n = a.n;
  const std::size_t coordinate = size_of(a.type);
  const void* in = a.in;
  void* out = a.out;
  if (a.soa) {  // xs then ys, in and out
    const void* in_y = static_cast<const char*>(a.in) + n * coordinate;
    void* out_y = static_cast<char*>(a.out) + n * coordinate;
    void* args[] = {&in, &in_y, &out, &out_y, &n, &no_state};
    launch(layout_kernel, grid, skeleton::elementwise_block, args, a.stream);
  } else {
    void* args[] = {&in, &out, &n, &no_state};
    launch(layout_kernel, grid, skeleton::elementwise_block, args, a.stream);
  }
}

void launch_image(build_fn build, const image_launch& a) {
  if (a.width == 0 || a.height == 0) return;
  skeleton::check_image_radius(a.form, a.r);
  image_view<float> in{a.in, a.width, a.height};
  float* out = a.out;
  int r = a.r;
  void* args[] = {&in, &out, &r, &no_state};
  const std::size_t shared = a.form == image_form::tiled ? skeleton::image_tile_bytes(a.r) : 0;
  launch(kernel(build, workload::image, dtype::f32, builtin_op(a.op), int(a.form)),
         skeleton::image_grid(a.form, a.width, a.height),
         dim3(skeleton::image_block_x, skeleton::image_block_y), args, a.stream, shared);
}

void launch_tasks(build_fn build, const tasks_launch& a) {
  if (a.n == 0) return;
  const float* x = a.x;
  const task* t = a.tasks;
  float* y = a.y;
  std::size_t n = a.n;
  void* args[] = {&x, &t, &y, &n, &no_state};
  launch(kernel(build, workload::tasks, dtype::f32, builtin_task_ops(), 0), skeleton::tasks_grid(a.n),
         skeleton::tasks_block, args, a.stream);
}

void launch_matmul(build_fn build, const matmul_launch& a) {
  if (a.m == 0 || a.n == 0) return;
  const cudaKernel_t product = kernel(build, workload::matmul, a.type, builtin_op(a.op), int(a.form));
  visit_dtype(a.type, [&](auto type) {
    using T = decltype(type);
    T init = visit_op(a.op, [](auto ring) { return decltype(ring)::template identity<T>(); });
    const void *A = a.a, *B = a.b;
    void* C = a.c;
    int m = a.m, n = a.n, k = a.k;
    void* args[] = {&A, &B, &C, &m, &n, &k, &init, &no_state};
    if (a.form == matmul_form::tiled)
      launch(product, skeleton::matmul_tiled_grid(a.m, a.n), skeleton::tiled_threads, args, a.stream);
    else
      launch(product, skeleton::matmul_grid(a.m, a.n), dim3(skeleton::matmul_tile, skeleton::matmul_tile),
             args, a.stream);
  });
}

}  // namespace cdl::jit
