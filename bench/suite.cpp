// cdl_bench: every registered (strategy, workload) implementation over a sweep of each
// workload's knobs, beside the device-to-device copy of the same bytes (the floor), in one
// Google Benchmark run.
//
//   cdl_bench [--cdl_quick] [--cdl_part=map|suite] [Google Benchmark flags, e.g. --benchmark_filter=tasks/]
//
// --cdl_part runs one of the suite's two parts, each a few minutes: the map workload, or the rest
// (the other workloads, the JIT stages and the tiered streams); scripts/bench.sh runs them as two
// phases and reports/merge.py joins their results. A part whose benchmarks the filter leaves out
// says so and exits 0, writing nothing.
//
// Each benchmark first validates its configuration against the float64 CPU reference; a wrong
// result is reported with SkipWithError and never timed, and the run's exit status is then 3.
// Time is GPU time from CUDA events, with L2 flushed before every iteration. Benchmarks are
// registered problem by problem, so the strategies of one problem share its inputs and reference
// (one fixture alive at a time).
#include "bench_common.hpp"

#include "common/cublas_peer.hpp"
#include "common/device_info.hpp"
#include "common/inputs.hpp"
#include "common/library_peers.hpp"
#include "common/polynomial.hpp"
#include "common/registry.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace cdl::bench {
namespace {

// Every benchmark runs a fixed number of iterations, chosen at registration from its floor (the
// copy of its bytes at the measured bandwidth): about `target_s` of GPU time per repetition,
// within [min_iterations, max_iterations]. Google Benchmark's own search for an iteration count
// (1, 10, 100, ... until a minimum time) would launch a kernel of microseconds thousands of
// times, each with an L2 flush, and make the quick suite minutes long for no better median.
// Where the bytes say nothing of the time, that search is what fits: the map's dispatch sweep at
// k >= 64, where kernels of one problem differ in time by more than an order of magnitude (a
// virtual call against the template), and a count from the bytes would run the slowest many
// times a repetition (`by_time` below: each repetition at least `target_s` of GPU time, a single
// launch where one takes that long).
struct settings {
  bool quick;
  int repetitions;
  double target_s;
  int min_iterations, max_iterations;
  double copy_gbs;

  int iterations_for(double bytes) const {
    const double floor_s = bytes / (copy_gbs * 1e9);
    return int(std::clamp(target_s / floor_s, double(min_iterations), double(max_iterations)));
  }
};

// The one fixture alive, keyed by its problem's description.
template <class Fixture, class Problem>
const Fixture& fixture_for(const Problem& p) {
  static std::unique_ptr<Fixture> current;
  static std::string key;
  if (!current || key != p.describe()) {
    current.reset();
    current = std::make_unique<Fixture>(p, default_seed);
    key = p.describe();
  }
  return *current;
}

inline constexpr int by_time = -1;  // an `iterations` of add(): Google Benchmark's search, to target_s

// Registers one benchmark: validate once, then time. `extra` adds workload-specific counters.

template <class Fixture, class Problem, class Entry, class Extra>
void add(const Entry& entry, const Problem& p, const settings& s, std::vector<std::string>& names,
         Extra extra, int iterations = 0) {  // 0: from the problem's bytes
  const benchmark_id id = identify(entry.name(), p.describe());
  benchmark::internal::Benchmark* b =
      register_benchmark(id, names, [&entry, p, s, extra, name = id.name](benchmark::State& state) {
        static std::map<std::string, validation_result> checked;
        const Fixture& f = fixture_for<Fixture>(p);
        if (!checked.count(name)) checked[name] = f.run_and_validate(entry.launch, entry.form);
        const validation_result& v = checked[name];
        if (!v.passed) return state.SkipWithError(("validation failed: " + v.summary()).c_str());
        const double seconds = timed_loop(
            state, [&](cudaStream_t st) { f.launch(entry.launch, entry.form, st); }, double(p.min_bytes()),
            s.copy_gbs);
        if (state.error_occurred()) return;
        state.counters["max_rel_err"] = v.max_rel_error;
        extra(state, seconds);
      });
  if (iterations == by_time)
    configure_repetitions(b, s.repetitions)->Unit(benchmark::kMicrosecond)->MinTime(s.target_s);
  else
    configure(b, s.repetitions, iterations ? iterations : s.iterations_for(double(p.min_bytes())));
}

// Variants measured where they show their point, not over every sweep: the crowded builds of 04
// and 05 (strategies/suite/one_workload.hpp) on the memory-bound map at its largest n and the quadratic
// op's penalty, 06's `fast_compile` and 07's `preoptimised` (their point is the compile or link, in the
// jit/ stages) on the same, 07's `preoptimised` also on the large tiled GEMM (where its kernel is
// not 07's), and 13's `lto` (the fatbin's kernel again, the op inlined by the link: its point is
// the first launch). 10's tiered dispatch changes kernel during a run: it is measured on streams
// of launches (tiered/, bench/jit_stages.cpp), not here.
bool demonstration(const std::string& variant) {
  return variant == "crowded" || variant == "fast_compile" || variant == "preoptimised" || variant == "lto";
}

template <class Fixture, class Problem, class Entries>
void add_all(const Entries& entries, const Problem& p, const settings& s, std::vector<std::string>& names) {
  for (const auto& e : entries) {
    if constexpr (requires { e.variant; })
      if (demonstration(e.variant)) continue;
    add<Fixture>(e, p, s, names, [](benchmark::State&, double) {});
  }
}

// The floor at each size: cudaMemcpy of the bytes a kernel reads (it then writes as many).
struct copy_problem {
  std::size_t bytes;
  std::string describe() const { return "copy bytes=" + std::to_string(bytes); }
};
struct copy_bench_fixture : copy_fixture {
  copy_bench_fixture(const copy_problem& p, std::uint64_t) : copy_fixture(p.bytes) {}
};

void add_copy(std::size_t bytes, const settings& s, std::vector<std::string>& names) {
  configure(
      register_benchmark(identify("cudaMemcpy", copy_problem{bytes}.describe()), names,
                         [bytes, s](benchmark::State& state) {
                           static std::map<std::size_t, bool> checked;
                           const copy_fixture& copy = fixture_for<copy_bench_fixture>(copy_problem{bytes});
                           if (!checked.count(bytes)) {
                             copy.launch(nullptr);
                             checked[bytes] = copy.verify();
                           }
                           if (!checked[bytes])
                             return state.SkipWithError("validation failed: cudaMemcpy wrote wrong data");
                           timed_loop(
                               state, [&](cudaStream_t st) { copy.launch(st); }, 2.0 * double(copy.bytes()),
                               s.copy_gbs);
                         }),
      s.repetitions, s.iterations_for(2.0 * double(bytes)));
}

// A library peer, named like a registry entry ("cub/DeviceTransform"); the form is not used
// (the library picks its own kernel).
template <class Launch, class Form>
struct peer_entry {
  Form form;
  Launch launch;
  std::string label;
  std::string name() const { return label; }
};
// Benchmarks keep a reference to their entry: these live as long as the program.
const std::array<peer_entry<map_launch_fn, map_form>, 2> map_peers{
    {{map_form::scalar, cub_transform_map, "cub/DeviceTransform"},
     {map_form::scalar, thrust_transform_map, "thrust/transform"}}};
const std::array<peer_entry<zip_launch_fn, map_form>, 2> zip_peers{
    {{map_form::scalar, cub_transform_zip, "cub/DeviceTransform"},
     {map_form::scalar, thrust_transform_zip, "thrust/transform"}}};
const peer_entry<matmul_launch_fn, matmul_form> cublas_sgemm{matmul_form::naive, cublas_matmul,
                                                             "cublas/sgemm"},
    cublas_dgemm{matmul_form::naive, cublas_matmul, "cublas/dgemm"};

std::vector<int> pick(const settings& s, std::vector<int> quick, std::vector<int> full) {
  return s.quick ? quick : full;
}

bool demonstration(const map_entry& e) { return demonstration(e.variant); }
bool streams_only(const map_entry& e) { return e.strategy == "10_tiered_dispatch"; }

void register_map(const settings& s, std::vector<std::string>& names) {
  const auto& entries = get_registry().map;
  std::set<std::string> registered;  // entry and problem: the sweeps meet (2^22 and 2^24 at k = 1)
  auto add_map = [&](const map_problem& p, bool with_demonstrations, auto keep) {
    for (const map_entry& e : entries)
      if (!streams_only(e) && (with_demonstrations || !demonstration(e)) && keep(e) &&
          e.refusal(unlaunched(p.op, p.type, e.form)).empty() &&
          registered.insert(e.name() + " " + p.describe()).second)
        add<map_fixture>(
            e, p, s, names, [](benchmark::State&, double) {}, p.k >= 64 ? by_time : 0);
  };
  const auto all = [](const map_entry&) { return true; };
  // Bandwidth against n, beside the copy of the same bytes.
  const std::vector<int> sizes = pick(s, {14, 18, 22, 26}, {10, 12, 14, 16, 18, 20, 22, 24, 26, 28});
  for (int e : sizes) {
    const std::size_t n = std::size_t(1) << e;
    add_copy(n * sizeof(float), s, names);
    add_map(map_problem{map_op::quadratic, dtype::f32, n, 1}, e == sizes.back(), all);
    add_all<map_fixture>(map_peers, map_problem{map_op::quadratic, dtype::f32, n, 1}, s, names);
  }
  add_map(map_problem{map_op::quadratic, dtype::f64, std::size_t(1) << (s.quick ? 24 : 27), 1}, false, all);
  // The dispatch penalty: k evaluations per element at 2^24 elements, 64 MiB in and 64 MiB out
  // in float32: the output does not fit in the L2 (flushed before each launch), though the last of
  // it written can still be written back after the kernel ends: the sweep's figures are time ratios,
  // not bandwidths. The quadratic op is measured again at 2^22 (16 MiB each way), where the output
  // stays in the L2 after the kernel ends: the report sets the two sizes' penalties side by side,
  // with the waves of blocks each kernel runs, because a size where a kernel runs few waves changes
  // its ratio to the template.
  const std::size_t sweep_n = std::size_t(1) << 24;
  for (std::size_t op = 0; op < map_op_catalogue.size(); ++op) {
    if (s.quick && op != std::size_t(map_op::quadratic) && op != std::size_t(map_op::exp_sin_cos)) continue;
    for (int k : pick(s, {1, 8, 64}, {1, 4, 16, 64, 256}))
      add_map(map_problem{map_op(op), dtype::f32, sweep_n, k}, op == std::size_t(map_op::quadratic), all);
  }
  const auto vec_forms = [](const map_entry& e) { return e.form == map_form::vec; };
  for (int k : pick(s, {1, 64}, {1, 16, 256}))
    add_map(map_problem{map_op::quadratic, dtype::f32, std::size_t(1) << 22, k}, true, vec_forms);
  // float64 where arithmetic, not memory, sets the time (against the same problems in float32).
  for (map_op op : {map_op::quadratic, map_op::exp_sin_cos})
    add_map(map_problem{op, dtype::f64, sweep_n, s.quick ? 8 : 16}, false, all);
}

// The op-length sweep: polynomials of 1 to 64 steps (common/polynomial.hpp) through each strategy
// that runs an op of any length (the registry's op_length), at k = 1, 3 and 64, float: what a step
// costs compiled (08, 03's switch over the lengths built in), interpreted (16) and patched (17).
// n = 2^24 at k = 1
// and 3 (memory past the L2, as the dispatch sweep); 2^22 at k = 64, where arithmetic sets the time,
// so that the float64 reference (the polynomial's own definition, in double) takes seconds.
struct length_problem {
  int steps;
  map_problem map;
  std::string describe() const {
    return "oplength steps=" + std::to_string(steps) + " type=f32 n=" + std::to_string(map.n) +
           " k=" + std::to_string(map.k);
  }
  std::size_t min_bytes() const { return map.min_bytes(); }
};
struct length_fixture : map_fixture {
  length_fixture(const length_problem& p, std::uint64_t seed)
      : map_fixture(
            p.map, seed,
            custom_map_op{[steps = p.steps](double x) { return polynomial_value(steps, x); }, p.steps + 2}) {}
};

void register_op_length(const settings& s, std::vector<std::string>& names) {
  for (int steps : op_lengths)
    for (int k : {1, 3, 64}) {
      const length_problem p{steps,
                             {map_op::quadratic, dtype::f32, std::size_t(1) << (k >= 64 ? 22 : 24), k}};
      for (const length_entry& e : get_registry().op_length) {
        const benchmark_id id = identify(e.name(), p.describe());
        benchmark::internal::Benchmark* b =
            register_benchmark(id, names, [&e, p, s, name = id.name](benchmark::State& state) {
              static std::map<std::string, validation_result> checked;
              const length_fixture& f = fixture_for<length_fixture>(p);
              const map_launcher launch = [&](const map_launch& a) { e.launch(a, p.steps); };
              if (!checked.count(name)) checked[name] = f.run_and_validate(launch, e.form);
              const validation_result& v = checked[name];
              if (!v.passed) return state.SkipWithError(("validation failed: " + v.summary()).c_str());
              timed_loop(
                  state, [&](cudaStream_t st) { f.launch(launch, e.form, st); }, double(p.min_bytes()),
                  s.copy_gbs);
              if (!state.error_occurred()) state.counters["max_rel_err"] = v.max_rel_error;
            });
        if (k >= 64)
          configure_repetitions(b, s.repetitions)->Unit(benchmark::kMicrosecond)->MinTime(s.target_s);
        else
          configure(b, s.repetitions, s.iterations_for(double(p.min_bytes())));
      }
    }
}

// What a flush leaves behind: the same launch timed with no flush before it, with none but the
// GPU held by a kernel that touches no memory (so that the events time the GPU's work alone, as
// after a flush: with nothing before them they also time the host queuing the launch), after the
// suite's read-only flush, and after a cudaMemset flush (the usual idiom, which leaves the L2
// dirty). An empty kernel shows the launch and event floor; a copy of 2^22 floats (16 MiB each
// way, in L2) shows the write-back of dirty lines that a memset flush leaves to the timed launch.
void register_flush_residue(const settings& s, std::vector<std::string>& names) {
  const std::size_t bytes = (std::size_t(1) << 22) * sizeof(float);
  const std::pair<const char*, std::optional<flush_kind>> flushes[] = {{"none", std::nullopt},
                                                                       {"held", flush_kind::hold},
                                                                       {"read", flush_kind::read},
                                                                       {"memset", flush_kind::memset}};
  for (const auto& [flush_name, flush] : flushes) {
    configure(register_benchmark(identify(std::string("empty_kernel/") + flush_name, "flush"), names,
                                 [s, flush](benchmark::State& state) {
                                   timed_loop(
                                       state, [](cudaStream_t st) { launch_empty_kernel(st); }, 0, s.copy_gbs,
                                       flush);
                                 }),
              s.repetitions, 100);
    configure(register_benchmark(
                  identify(std::string("copy/") + flush_name, "flush bytes=" + std::to_string(bytes)), names,
                  [s, flush, bytes](benchmark::State& state) {
                    static const copy_fixture copy = [&] {
                      copy_fixture c(bytes);
                      c.launch(nullptr);
                      if (!c.verify()) throw error("cudaMemcpy wrote wrong data");
                      return c;
                    }();
                    timed_loop(
                        state, [](cudaStream_t st) { copy.launch(st); }, 2.0 * double(bytes), s.copy_gbs,
                        flush);
                  }),
              s.repetitions, 100);
  }
}

void register_zip(const settings& s, std::vector<std::string>& names) {
  for (int e : pick(s, {24}, {20, 24, 28}))
    for (zip_op op : {zip_op::add, zip_op::multiply}) {
      const zip_problem p{op, dtype::f32, std::size_t(1) << e};
      add_all<zip_fixture>(get_registry().zip, p, s, names);
      add_all<zip_fixture>(zip_peers, p, s, names);
    }
}

void register_points(const settings& s, std::vector<std::string>& names) {
  for (int e : pick(s, {24}, {22, 26}))
    add_all<points_fixture>(get_registry().points,
                            points_problem{point_op::scale_shift, dtype::f32, std::size_t(1) << e}, s, names);
}

void register_image(const settings& s, std::vector<std::string>& names) {
  std::vector<image_problem> problems;
  for (int r : pick(s, {1, 4, 8}, {1, 2, 4, 8, 16})) problems.push_back({image_op::box_blur, 3840, 2160, r});
  for (image_op op : {image_op::sharpen, image_op::invert, image_op::sobel})
    problems.push_back({op, 3840, 2160, 1});
  for (const image_problem& p : problems) add_all<image_fixture>(get_registry().image, p, s, names);
}

// What grouping by op costs, in parts (tasks_workload.hpp): 01's `grouped` launch is the sort
// (group_tasks) and then the op kernels through the grouping's index; `grouped_reused` is those
// kernels alone, the grouping made once for the problem; `in_op_order` moves x and the records into
// op order once, and each launch runs the op kernels over contiguous ranges, then scatters y back.
// tasks/parts/ times the sort, the contiguous kernels and the scatter each alone, after the form
// they belong to was validated on the same problem. The launches are function pointers (the
// fixture's), so the state made once per problem is a static, rebuilt when the problem changes.
struct kept_grouping {
  std::string problem, wanted;                 // the problem it was made for, the problem being measured
  std::unique_ptr<tasks_in_op_order> ordered;  // its grouping is grouped_reused's
};
kept_grouping& kept() {
  static kept_grouping k;
  return k;
}
void prepare(const tasks_launch& a) {
  kept_grouping& k = kept();
  if (k.problem == k.wanted) return;
  k.ordered.reset();  // the old state's buffers first
  k.ordered = std::make_unique<tasks_in_op_order>(a);
  k.problem = k.wanted;
}
void launch_grouped_reused(const tasks_launch& a) {
  prepare(a);
  run_task_groups(a, kept().ordered->groups());
}
void launch_in_op_order(const tasks_launch& a) {
  prepare(a);
  kept().ordered->run(a);
}
void launch_sort(const tasks_launch& a) { group_tasks(a); }
void launch_ordered_kernels(const tasks_launch& a) { kept().ordered->run_kernels(a.stream); }
void launch_scatter(const tasks_launch& a) { kept().ordered->scatter(a); }

// name: the benchmark's, before the problem's fields; validated by the launch `checked` on the
// problem (the form the part belongs to), then `launch` timed.
void add_kept(const std::string& name, tasks_launch_fn checked, tasks_launch_fn launch,
              const tasks_problem& p, const settings& s, std::vector<std::string>& names) {
  configure(register_benchmark(identify(name, p.describe()), names,
                               [p, s, checked, launch](benchmark::State& state) {
                                 const tasks_fixture& f = fixture_for<tasks_fixture>(p);
                                 kept().wanted = p.describe();
                                 const validation_result v = f.run_and_validate(checked, tasks_form::grouped);
                                 if (!v.passed)
                                   return state.SkipWithError(("validation failed: " + v.summary()).c_str());
                                 timed_loop(
                                     state,
                                     [&](cudaStream_t st) { f.launch(launch, tasks_form::grouped, st); },
                                     double(p.min_bytes()), s.copy_gbs);
                               }),
            s.repetitions, s.iterations_for(double(p.min_bytes())));
}

void add_grouping_parts(const tasks_problem& p, const settings& s, std::vector<std::string>& names) {
  add_kept("01_template_functor/grouped_reused", launch_grouped_reused, launch_grouped_reused, p, s, names);
  add_kept("01_template_functor/in_op_order", launch_in_op_order, launch_in_op_order, p, s, names);
  add_kept("parts/sort", launch_in_op_order, launch_sort, p, s, names);
  add_kept("parts/kernels_in_op_order", launch_in_op_order, launch_ordered_kernels, p, s, names);
  add_kept("parts/scatter", launch_in_op_order, launch_scatter, p, s, names);
}

// Divergence: distinct ops per warp from 1 (uniform) to 32, in each layout.
void register_tasks(const settings& s, std::vector<std::string>& names) {
  const std::size_t n = std::size_t(1) << 24;
  std::vector<tasks_problem> problems{{task_layout::uniform, 1, n}};
  for (task_layout l : {task_layout::sorted, task_layout::warp, task_layout::random})
    for (int d : pick(s, {4, 32}, {2, 4, 8, 16, 32})) problems.push_back({l, d, n});
  for (const tasks_problem& p : problems) {
    add_all<tasks_fixture>(get_registry().tasks, p, s, names);
    add_grouping_parts(p, s, names);
  }
}

// Virtual calls on an object per element (11, COAL): the layouts that change which classes a warp
// meets, at 2^24 objects (384 MiB of them, twice: in element order and by class).
void register_objects(const settings& s, std::vector<std::string>& names) {
  const std::size_t n = std::size_t(1) << 24;
  add_all<objects_fixture>(get_registry().objects, objects_problem{{task_layout::uniform, 1, n}}, s, names);
  for (task_layout l : {task_layout::sorted, task_layout::random})
    for (int d : pick(s, {32}, {4, 32}))
      add_all<objects_fixture>(get_registry().objects, objects_problem{{l, d, n}}, s, names);
}

// The step forms of the tiled GEMM (01_template_functor only): measured at the progression's size.
bool progression_step(const matmul_entry& e) { return e.form >= matmul_form::tiled_step0; }

void register_matmul(const settings& s, std::vector<std::string>& names) {
  // The GEMMs run a fixed number of iterations chosen from their arithmetic's floor (every SM
  // retiring a fused multiply-add on each of its 128 FP32 lanes every cycle), as the others are
  // from their bytes'. `slowdown` is how far from that floor a kernel is expected to be, for the
  // kernels that call the op through the ABI (tens of times the template's time, the report's GEMM
  // tables): they run as few as 2 iterations a repetition, where a launch takes a tenth of a second.
  const device_info& d = query_device();
  const double lane_ops_per_s = 2.0 * 128 * d.sm_count * d.sm_clock_khz * 1e3;
  auto add_matmul = [&](const auto& entry, const matmul_problem& p, double slowdown = 1) {
    const double floor_s = p.ops() * slowdown / lane_ops_per_s;
    const int fewest = slowdown > 1 ? 2 : s.min_iterations;
    const int iterations =
        std::min(s.iterations_for(double(p.min_bytes())), std::max(fewest, int(s.target_s / floor_s)));
    add<matmul_fixture>(
        entry, p, s, names,
        [p](benchmark::State& state, double seconds) {
          state.counters["TOP/s"] =
              p.ops() * double(state.iterations()) / seconds / 1e12;  // combine + reduce
        },
        iterations);
  };
  const auto& entries = get_registry().matmul;
  const auto abi_tiled = [](const matmul_entry& e) {
    return e.form == matmul_form::tiled && (e.strategy.starts_with("04_") || e.strategy.starts_with("05_"));
  };
  const auto slowdown = [&](const matmul_entry& e) { return abi_tiled(e) ? 64.0 : 1.0; };
  const auto measured = [](const matmul_entry& e) {
    return !demonstration(e.variant) && !progression_step(e);
  };
  auto cublas_for = [](dtype t) -> const auto& { return t == dtype::f32 ? cublas_sgemm : cublas_dgemm; };

  // Every semiring, every implementation.
  for (int size : pick(s, {1024}, {1024, 2048}))
    for (std::size_t op = 0; op < semiring_catalogue.size(); ++op) {
      const matmul_problem p{semiring(op), dtype::f32, size, size, size};
      for (const matmul_entry& e : entries)
        if (measured(e)) add_matmul(e, p, slowdown(e));
      if (semiring(op) == semiring::plus_times) add_matmul(cublas_sgemm, p);
    }
  // The plain product where cuBLAS is at its best (4096^3; 2048^3 in the quick suite): in float32
  // every tiled kernel (the dispatch table), the tiled kernel's steps (the progression) and the
  // naive template kernel; in float64 the same but the steps and the ABI calls. Then, in the full
  // suite, 8192^3 and a shape that no tile divides, float32, the tiled kernels that inline the op.
  const int big = s.quick ? 2048 : 4096;
  for (dtype t : {dtype::f32, dtype::f64}) {
    const matmul_problem p{semiring::plus_times, t, big, big, big};
    for (const matmul_entry& e : entries)
      if ((!demonstration(e.variant) || e.variant == "preoptimised") &&
          (e.form != matmul_form::naive || e.strategy == "01_template_functor") &&
          (t == dtype::f32 || (!progression_step(e) && !abi_tiled(e))))
        add_matmul(e, p, slowdown(e));
    add_matmul(cublas_for(t), p);
  }
  if (s.quick) return;
  for (const matmul_problem& p : {matmul_problem{semiring::plus_times, dtype::f32, 8192, 8192, 8192},
                                  matmul_problem{semiring::plus_times, dtype::f32, 3000, 5000, 2000}}) {
    for (const matmul_entry& e : entries)
      if (e.form == matmul_form::tiled && !abi_tiled(e) && !demonstration(e.variant)) add_matmul(e, p);
    add_matmul(cublas_sgemm, p);
  }
}

}  // namespace
}  // namespace cdl::bench

int main(int argc, char** argv) {
  using namespace cdl;
  using namespace cdl::bench;
  if (int status = 0; run_jit_probe(argc, argv, status)) return status;
  bool quick = false;
  std::string part;  // "": the whole suite
  for (int i = 1; i < argc;) {
    const std::string a = argv[i];
    if (a == "--cdl_quick")
      quick = true;
    else if (a.starts_with("--cdl_part="))
      part = a.substr(std::strlen("--cdl_part="));
    else {
      ++i;
      continue;
    }
    std::memmove(argv + i, argv + i + 1, sizeof(char*) * std::size_t(argc - i));
    --argc;
  }
  if (part != "" && part != "map" && part != "suite") {
    std::fprintf(stderr, "cdl_bench: --cdl_part=%s: the parts are map and suite\n", part.c_str());
    return 2;
  }
  results_file results(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  try {
    require_gpu("cdl_bench");
    const settings s = quick ? settings{true, 3, 0.002, 3, 10, publish_environment()}
                             : settings{false, 5, 0.01, 5, 100, publish_environment()};
    benchmark::AddCustomContext("cdl_mode", quick ? "quick" : "full");
    if (!part.empty()) benchmark::AddCustomContext("cdl_part", part);
    std::vector<std::string> names;
    if (part != "map") register_flush_residue(s, names);
    if (part != "suite") {
      register_map(s, names);
      register_op_length(s, names);
    }
    if (part != "map") {
      register_zip(s, names);
      register_points(s, names);
      register_image(s, names);
      register_tasks(s, names);
      register_objects(s, names);
      register_matmul(s, names);
      register_jit_stages(s.repetitions, s.quick, names);
    }

    const int selected = count_selected(names);
    if (selected == 0 && !part.empty()) {
      std::fprintf(
          stderr, "cdl_bench: --benchmark_filter=%s selects none of the %s part's %zu benchmarks: none run\n",
          benchmark::GetBenchmarkFilter().c_str(), part.c_str(), names.size());
      return 0;
    }
    if (selected == 0) {
      std::fprintf(stderr,
                   "cdl_bench: --benchmark_filter=%s selects none of the %zu benchmarks "
                   "(--benchmark_list_tests lists them)\n",
                   benchmark::GetBenchmarkFilter().c_str(), names.size());
      return 2;
    }
    stop_on_signals();
    progress_reporter reporter(selected);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    const std::string written = results.settle(interrupted() != 0, reporter.clocks_at_end());
    if (interrupted()) {
      const std::string kept =
          "; the finished ones are in " + written + ", the earlier results file is untouched";
      std::fprintf(stderr, "cdl_bench: interrupted (signal %d) after %d of %d benchmarks%s\n", interrupted(),
                   reporter.finished(), selected, written.empty() ? "" : kept.c_str());
      return 128 + interrupted();
    }
    if (failures()) {
      std::fprintf(stderr, "cdl_bench: %d benchmarks FAILED (their errors are in the output%s)\n", failures(),
                   written.empty() ? "" : (" and in " + written).c_str());
      return 3;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
