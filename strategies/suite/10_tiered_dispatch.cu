// 10 - Tiered dispatch: start at once on a kernel that needs no compile, move to the op's own
//      kernel when its compile, on a host thread, has finished.
//
// Idea.    A JIT (06, 07, 08) makes the fastest kernel for an op but makes the first launch wait
//          for a compiler; a switch (03) runs any op of a fixed set at once, slower per call.
//          Language runtimes (the JVM's HotSpot, JavaScript's V8) do both: a cheap tier
//          serves the first calls while the optimising tier compiles in the background, and
//          later calls move up. Here the first launch of an op runs 03's switch kernel and
//          starts 06's compile of it on a host thread kept from one op to the next; each launch
//          after that asks the compile's future, without waiting, whether it is done, and
//          launches the op's own kernel from the first launch that finds it done. Both kernels
//          write the same result (the op is the catalogue's, in both), so the move is invisible
//          but for the time. One thing a CPU runtime does not meet: a launch returns when it is
//          queued, so a host that launches in a loop runs far ahead of the GPU, and the launches
//          queued before the compile ends all run on the switch. While on the switch, the
//          dispatcher keeps the host a few launches ahead (an event after each launch; it waits
//          for the one `ahead` back).
// Cost.    Until the compile finishes: the switch kernel's time per launch (its per-call
//          penalty: the report's dispatch table) and a CPU core busy compiling; after it: the
//          JIT kernel's time, plus a future's status check per launch. Against the JIT alone it
//          saves the compile's wait; against the switch alone it saves the penalty once enough
//          launches follow. The report's tiered section draws the three totals against the
//          number of launches of a new op, memory-bound and at k = 256: where the curves cross
//          is the break-even the JIT alone would have.
// Use it   when ops arrive at run time, a cheaper way to run them exists at once (a switch over a
//          fixed set, an interpreter), and neither the first launch's latency nor the steady
//          speed may be given up: query engines, interactive tools. Not when every op is known
//          when the program is built (01), nor when one launch is all there will be (03 alone).
// See it.  The SASS of each tier is its own strategy's (03's switch, 06's kernel). What is new
//          here is on the host: `tiered_map::launch` below, and the compile thread.
// Run it.  `cdl_run --strategy 10_tiered_dispatch/vec --op quadratic --n 2^24 --k 256`
//          (in build/release/bench; tests/docs/test_run_lines.py runs this line)
//          A user's op (no switch knows it) has three tiers, tiered_expression: 16's interpreter
//          at once (no compiler), then 17's patched kernel (no compiler, within a millisecond),
//          then 08's optimised tier; 08's baseline tier in 17's place where 17 refuses the op. In
//          a process where the interpreter has not run yet, 17's kernel serves the first launch:
//          the interpreter's first launch would load its kernels, for longer.
// Read it. The mechanism alone is the lesson, strategies/10_tiered_dispatch.cu (a loop of launches of a new
//          op: 03's kernel until 06's compile is done). This is the general form: tiered_map, which launches
//          the skeleton's kernels of both tiers, so that the two differ only in how the op is called; then
//          tiered_expression.
//
// Registered for the map workload only (the other workloads' tiers would be the same two files
// again). The registry entry keeps one tiered_map per (op, type, form) for the process, made at its
// first launch, so the tests validate every launch, before and after the move; the `tiered/`
// benchmarks make one per stream of launches, from a text no cache has seen.
#include "strategies/suite/tiered_dispatch.hpp"

#include "common/skeletons/elementwise.cuh"
#include "strategies/suite/expression_jit.hpp"
#include "strategies/suite/interpreter.hpp"

#include "common/check.hpp"
#include "common/warm_threads.hpp"

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>
#include <vector>

namespace cdl {

tiered_map::tiered_map(jit::op_text text, jit::build_fn build)
    : text_(std::move(text)), build_(build), switch_launch_(find_map_entry("03_switch/vec").launch) {}

namespace {

// The compile threads and the events are kept from one op to the next (common/warm_threads.hpp):
// making a thread or an event is host work that would come with a new op's first launch, and a
// short stream's kernel may take less time than that work.
warm_threads& compile_threads() {
  static warm_threads threads;
  return threads;
}

std::mutex events_mutex;
std::vector<cudaEvent_t> events_kept;  // never destroyed (at exit the context may be gone first)

void take_events(std::span<cudaEvent_t> events) {
  std::size_t taken = 0;
  {
    const std::lock_guard lock(events_mutex);
    for (; taken < events.size() && !events_kept.empty(); ++taken) {
      events[taken] = events_kept.back();
      events_kept.pop_back();
    }
  }
  for (; taken < events.size(); ++taken)
    CDL_CUDA_CHECK(cudaEventCreateWithFlags(&events[taken], cudaEventDisableTiming));
}

void keep_events(std::span<const cudaEvent_t> events) {
  const std::lock_guard lock(events_mutex);
  for (cudaEvent_t e : events)
    if (e) events_kept.push_back(e);
}

}  // namespace

// Made after the first launch is queued, while the GPU runs it, so that what little host work is
// left of a compile's start overlaps the kernel.
void tiered_map::start(const map_launch& a) {
  take_events(done_);
  // The job owns what it uses: a kept thread outlives this object.
  auto compile = std::make_shared<std::packaged_task<void()>>(
      [a, build = build_, text = text_] { jit::prepare_map(build, a, text); });
  compile_ = compile->get_future();
  compile_threads().run([compile] { (*compile)(); });
}

tiered_map::~tiered_map() {
  if (compile_.valid()) compile_.wait();
  keep_events(done_);
}

bool tiered_map::launch(const map_launch& a) {
  cudaEvent_t& slot = done_[launched_ % ahead];  // recorded `ahead` switch launches ago, if any
  if (!ready_ && launched_ >= ahead) CDL_CUDA_CHECK(cudaEventSynchronize(slot));
  if (!ready_ && compile_.valid() &&
      compile_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    compile_.get();  // rethrows the compile's error, if it had one
    ready_ = true;
  }
  if (ready_)
    jit::launch_map(build_, a, text_);  // the kernel prepare_map loaded: a lookup, then the launch
  else
    switch_launch_(a);
  if (launched_ == 0) start(a);
  if (!ready_) CDL_CUDA_CHECK(cudaEventRecord(slot, a.stream));
  ++launched_;
  return ready_;
}

tiered_expression::tiered_expression(jit::op_text text)
    : text_(std::move(text)),
      patched_(std::make_shared<std::promise<bool>>()),
      compiled_(std::make_shared<std::array<std::promise<cudaKernel_t>, 2>>()) {
  find_route("16_interpreter")
      .prepare(text_, dtype::f32, map_form::vec);  // encoded now: the first launch runs at once
  patched_ready_ = patched_->get_future();
  for (std::size_t i = 0; i < 2; ++i) ready_[i] = (*compiled_)[i].get_future();
}

// At the first launch, before it is queued.
void tiered_expression::start(const map_launch& a) {
  take_events(done_);
  const map_form form = skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y}).form;
  // The job owns what it uses: a kept thread outlives this object.
  compile_threads().run([type = a.type, form, text = text_, patched = patched_, compiled = compiled_,
                         times = times_] {
    times->began = times->since_made();
    // 17's image, patched and loaded; where 17 refuses the op, its type or the form (an op that
    // calls a function has 17's vec form alone), 08's baseline instead.
    const bool patch = find_route("17_copy_and_patch").prepare(text, type, form);
    if (patch) times->ready[0] = times->since_made();
    patched->set_value(patch);
    for (std::size_t i = 0; i < 2; ++i) {
      try {
        using level = expression_jit::tier;
        const cudaKernel_t kernel =
            i == 0 && patch
                ? nullptr
                : expression_jit::map_kernel(type, form, text, i == 0 ? level::baseline : level::optimised);
        if (kernel) times->ready[i + 1] = times->since_made();
        (*compiled)[i].set_value(kernel);
      } catch (...) {  // each tier not compiled fails at the launch that finds it
        for (std::size_t j = i; j < 2; ++j) (*compiled)[j].set_exception(std::current_exception());
        return;
      }
    }
  });
}

tiered_expression::~tiered_expression() {
  // The optimised tier is compiled last (or failed with the first): once it is ready, the job is done.
  if (launched_ > 0 && ready_[1].valid()) ready_[1].wait();
  keep_events(done_);
}

tiered_expression::tier tiered_expression::launch(const map_launch& a) {
  // The compile thread starts first. Where the interpreter's kernels are not loaded yet (its first
  // launch in the process loads them, inside the launch: longer than 17's kernel takes to be made),
  // the first launch waits for 17's kernel instead, and runs on the interpreter only where 17
  // refuses the op.
  if (launched_ == 0) {
    start(a);
    if (!interpreter::kernels_loaded()) patched_ready_.wait();
  }
  // The host stays `ahead` launches in front of the GPU, one while 17's kernel is being made: it
  // is ready within a millisecond, and every interpreter launch queued by then runs before it.
  const int limit = best_ == tier::interpreter && patched_ready_.valid() ? 1 : ahead;
  if (best_ != tier::optimised && launched_ >= std::uint64_t(limit))
    CDL_CUDA_CHECK(cudaEventSynchronize(done_[(launched_ - std::uint64_t(limit)) % ahead]));
  cudaEvent_t& slot = done_[launched_ % ahead];
  // In the order they are made: 17's image (or not), the baseline (null where 17 runs), the optimised.
  auto done = [](const auto& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
  if (patched_ready_.valid() && done(patched_ready_) && patched_ready_.get()) best_ = tier::patched;
  for (std::size_t i = 0; i < 2; ++i) {
    if (!ready_[i].valid()) continue;  // taken at an earlier launch
    if (!done(ready_[i])) break;
    kernels_[i] = ready_[i].get();  // rethrows the compile's error, if it had one
    if (kernels_[i]) best_ = tier(std::size_t(tier::baseline) + i);
  }
  if (best_ == tier::interpreter) {
    interpreter_(a, text_);
  } else if (best_ == tier::patched) {
    patched_launch_(a, text_);
  } else {
    const unsigned grid =
        skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y}).grid;
    jit::launch_map_kernel(kernels_[std::size_t(best_) - std::size_t(tier::baseline)], grid, a, false);
  }
  if (best_ != tier::optimised) CDL_CUDA_CHECK(cudaEventRecord(slot, a.stream));
  ++launched_;
  return best_;
}

const char* to_string(tiered_expression::tier t) {
  return t == tiered_expression::tier::interpreter ? "16's interpreter"
         : t == tiered_expression::tier::patched   ? "17's patched kernel"
         : t == tiered_expression::tier::baseline  ? "08's baseline tier"
                                                   : "08's optimised tier";
}

namespace {

// The registry's entry: one tiered_map per (op, type, form), made by the first launch.
void launch_tiered(const map_launch& a) {
  using key = std::tuple<map_op, dtype, map_form>;
  // What a compile thread uses is made first, so that at exit `tiers` is destroyed before it and
  // its tiered_maps wait for a compile still running (a run shorter than the compile ends while it
  // runs) with all of that still there: statics go in the reverse order they were made.
  static const bool made_first = (jit::construct_prepare_statics(), true);
  static std::map<key, std::unique_ptr<tiered_map>> tiers;
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  auto& tier = tiers[{a.op, a.type, a.form}];
  if (!tier) tier = std::make_unique<tiered_map>(jit::builtin_op(a.op), nvrtc_jit_build);
  tier->launch(a);
}

}  // namespace

void register_10_tiered_dispatch(registry& r) { r.add_map("10_tiered_dispatch", "", launch_tiered); }

}  // namespace cdl
