// Strategy 10's dispatcher (10_tiered_dispatch.cu): launches of a map op served by 03's switch
// kernel while the op's own kernel compiles on a host thread, then by that kernel.
#pragma once

#include "common/registry.hpp"
#include "jit_kernels.hpp"

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <future>

namespace cdl {

class tiered_map {
 public:
  // Starts compiling `text` (a text of the catalogue op a.op, e.g. jit::fresh_text of it) with
  // `build`, on a host thread, for the kernel a launch like `a` runs.
  tiered_map(const map_launch& a, jit::op_text text, jit::build_fn build);
  ~tiered_map();  // waits for the compile: the thread uses what this object holds

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
  jit::build_fn build_;
  map_launch_fn switch_launch_;
  std::future<void> compile_;
  bool ready_ = false;
};

}  // namespace cdl
