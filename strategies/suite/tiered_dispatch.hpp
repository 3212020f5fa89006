// Strategy 10's dispatchers (10_tiered_dispatch.cu): launches of a map op served by 03's switch
// kernel while the op's own kernel compiles on a host thread, then by that kernel; and launches of a
// user's op served by 16's interpreter, then by 17's patched kernel while 08 compiles it.
#pragma once

#include "common/registry.hpp"
#include "jit_kernels.hpp"

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>

namespace cdl {

class tiered_map {
 public:
  // Compiles `text` (a text of the catalogue op its launches run, e.g. jit::fresh_text of it) with
  // `build`, for the kernel of its first launch's form, on a kept host thread, from once that launch
  // is queued.
  tiered_map(jit::op_text text, jit::build_fn build);
  ~tiered_map();  // waits for the compile, so that none runs on after its dispatcher

  tiered_map(const tiered_map&) = delete;
  tiered_map& operator=(const tiered_map&) = delete;

  // Launches `a` with the op's own kernel once its compile has finished (a compile error is
  // thrown here, at the launch that finds it), else with 03's switch kernel. True when the
  // op's own kernel ran.
  bool launch(const map_launch& a);
  bool specialised() const { return ready_; }

 private:
  // While the switch serves, the host stays at most `ahead` launches in front of the GPU (an event
  // recorded after each): launches are queued, not run, when they are made, and without the bound
  // the launch that finds the compile done would come after every launch already queued (up to
  // the driver's queue, about a thousand) on the switch.
  static constexpr int ahead = 4;
  std::array<cudaEvent_t, ahead> done_{};
  std::uint64_t launched_ = 0;

  jit::op_text text_;
  // The tiers' routes with no compiler, from the registry: 16's interpreter and 17's patched kernel.
  void (*interpreter_)(const map_launch&, const jit::op_text&) = find_route("16_interpreter").launch;
  void (*patched_launch_)(const map_launch&, const jit::op_text&) = find_route("17_copy_and_patch").launch;
  jit::build_fn build_;
  map_launch_fn switch_launch_;
  std::future<void> compile_;
  bool ready_ = false;
  void start(const map_launch& a);
};

// A user's op in 08's language, served by the best tier ready at each launch: 16's interpreter
// from the first launch (no compiler: the text is encoded when this is made), then 17's patched
// kernel (no compiler either: patched and loaded within a millisecond), then 08's optimised tier.
// Where 17 refuses the op or its type, 08's baseline tier (libNVVM without its optimiser) takes its
// place. Both are made on one kept host thread from the first launch, 17's (or the baseline) first,
// for the kernel of that launch's form. Where the interpreter's kernels are not loaded yet (none
// has launched in the process), the first launch waits for 17's kernel instead: loading them is
// inside the interpreter's first launch, and takes longer than 17's kernel takes to be made.
class tiered_expression {
 public:
  enum class tier { interpreter, patched, baseline, optimised };
  // Throws for a text the interpreter refuses (outside the language, past its limits).
  explicit tiered_expression(jit::op_text text);
  ~tiered_expression();  // waits for the compiles, as tiered_map's

  tiered_expression(const tiered_expression&) = delete;
  tiered_expression& operator=(const tiered_expression&) = delete;

  // Launches `a` on the best tier whose kernel is ready (a compile error is thrown here, at the
  // launch that finds it) and returns that tier.
  tier launch(const map_launch& a);
  tier best() const { return best_; }
  // Host milliseconds from this object's making to when the compile thread began its job, and
  // to when each later tier was ready (17's image loaded, 08's baseline, 08's optimised; -1: not
  // yet, or not made): the parts a stream's total is made of.
  double began_ms() const { return times_->began.load(); }
  double ready_ms(tier t) const {
    return t == tier::interpreter ? 0.0 : times_->ready[std::size_t(t) - 1].load();
  }

 private:
  static constexpr int ahead = 4;  // as tiered_map's before the last tier (one while 17's is being made)
  std::array<cudaEvent_t, ahead> done_{};
  std::uint64_t launched_ = 0;

  jit::op_text text_;
  // The tiers' routes with no compiler, from the registry: 16's interpreter and 17's patched kernel.
  void (*interpreter_)(const map_launch&, const jit::op_text&) = find_route("16_interpreter").launch;
  void (*patched_launch_)(const map_launch&, const jit::op_text&) = find_route("17_copy_and_patch").launch;
  // 17's image loaded (false: refused), then 08's baseline (null where 17 runs) and optimised kernels
  std::shared_ptr<std::promise<bool>> patched_;
  std::shared_ptr<std::array<std::promise<cudaKernel_t>, 2>> compiled_;
  std::future<bool> patched_ready_;
  std::array<std::future<cudaKernel_t>, 2> ready_;
  std::array<cudaKernel_t, 2> kernels_{};
  tier best_ = tier::interpreter;
  struct times {
    std::chrono::steady_clock::time_point made = std::chrono::steady_clock::now();
    std::atomic<double> began{-1};
    std::array<std::atomic<double>, 3> ready{-1.0, -1.0, -1.0};
    double since_made() const {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - made).count();
    }
  };
  std::shared_ptr<times> times_ = std::make_shared<times>();  // shared with the compile thread
  void start(const map_launch& a);
};
const char* to_string(tiered_expression::tier t);

}  // namespace cdl
