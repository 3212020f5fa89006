// 10 - Tiered dispatch: run a new op at once on a kernel that needs no compile, and move to the op's
//      own kernel when its compile, on a host thread, has finished.
//
// Idea.    A JIT (06) makes the fastest kernel for an op but makes the first launch wait for the
//          compiler; a switch (03) runs any op of a fixed set at once, slower per call. Language
//          runtimes do both: the first launch starts the compile on a std::async thread and runs
//          the switch kernel; each later launch asks the future, without waiting, whether it is
//          done, and moves to the compiled kernel from the first launch that finds it so. A launch
//          returns when it is queued, so while on the switch the host stays a few launches ahead
//          (an event per launch), or every launch queued before the compile ends runs on the switch.
// Cost.    The switch's penalty per launch until the compile ends, and a core busy compiling; the
//          JIT's speed after; a thread's start beside the first launch (the suite keeps its compile
//          threads from op to op instead: common/warm_threads.hpp). The knob is the number of
//          launches of a new op: the report's tiered figure draws the totals against it.
// Use it   when ops arrive at run time, a slower way to run them exists at once, and neither the
//          first launch's latency nor the steady speed may be given up.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. strategies/10_tiered_dispatch.cu -o 10 -lnvrtc
// See it.  Each tier's SASS is its own lesson's (03, 06); what is new is the host loop below.
// Suite.   strategies/suite/10_tiered_dispatch.cu: the map's forms and types, and its streams.
#include <chrono>
#include <future>

#include "strategies/lesson_jit.cuh"

// The switch tier: 03's per-call switch over the ops built in (the id hidden from the compiler).
#define CDL_SWITCH_INVOKER
#include "strategies/03_switch.cu"

// The JIT tier: 06's compile of the op's text, to a loaded kernel.
cudaKernel_t compile(const std::string& op) {
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(lesson::device_arch());
  cudaLibrary_t library = nullptr;  // kept loaded for the process's life
  return lesson::load(lesson::nvrtc(lesson::map_source(op), {arch.c_str()}), library);
}

enum class route { wait_for_jit, switch_only, tiered };

// Runs `launches` launches of a new op by one route, from the op's arrival to the last result;
// returns the milliseconds and how many launches ran on the switch.
std::pair<double, int> stream(route r, const lesson::problem& p, int k, int launches, const std::string& op) {
  const auto start = std::chrono::steady_clock::now();
  std::future<cudaKernel_t> compiling;
  cudaKernel_t kernel = nullptr;
  if (r == route::wait_for_jit) kernel = compile(op);
  if (r == route::tiered) compiling = std::async(std::launch::async, compile, op);
  constexpr int ahead = 2;  // the host this many launches ahead of the GPU while on the switch
  std::vector<cudaEvent_t> done(launches);
  int on_switch = 0;
  for (int i = 0; i < launches; ++i) {
    if (!kernel && r == route::tiered &&
        compiling.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      kernel = compiling.get();
    if (kernel) {
      lesson::launch_map(kernel, p, k);
    } else {
      if (i >= ahead) CHECK(cudaEventSynchronize(done[i - ahead]));
      lesson::map_kernel<<<lesson::grid(p.n), lesson::block>>>(p.dx, p.dy, p.n, k, switch_op{0});
      ++on_switch;
    }
    CHECK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    CHECK(cudaEventRecord(done[i]));
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaGetLastError());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (cudaEvent_t e : done) CHECK(cudaEventDestroy(e));
  if (compiling.valid()) compiling.get();  // a compile still running when the stream ended
  return {ms, on_switch};
}

int main() {
  lesson::problem p;
  const int k = 256;
  const std::vector<double> ref = lesson::reference(p.x, k);
  const std::string op = "v * v + 2.0f * v + 1.0f";  // a new op, as text; the switch knows it as id 0
  std::vector<float> y(p.n);
  std::printf("%8s %14s %14s %14s %12s   (2^24 floats, k = %d, host clock to the last result)\n", "launches",
              "wait for JIT", "switch only", "tiered", "on switch", k);
  int status = 0;
  for (int launches : {1, 10, 100, 1000}) {
    double ms[3];
    int on_switch = 0;
    bool right = true;
    for (route r : {route::wait_for_jit, route::switch_only, route::tiered}) {
      CHECK(cudaMemset(p.dy, 0xff, p.bytes()));  // NaN: a missed element fails validation
      const auto [took, switched] = stream(r, p, k, launches, op);
      ms[int(r)] = took;
      if (r == route::tiered) on_switch = switched;
      CHECK(cudaMemcpy(y.data(), p.dy, p.bytes(), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < p.n; ++i)
        if (!(std::fabs(y[i] - ref[i]) <= (k + 4) * 1.2e-7 * std::fabs(ref[i]))) {
          std::printf("route %d, %d launches: WRONG RESULT at %zu: %.9g, expected %.9g\n", int(r), launches,
                      i, y[i], ref[i]);
          status = 3;
          right = false;
          break;
        }
    }
    if (!right) continue;  // a route whose result is wrong has no time worth printing
    std::printf("%8d %11.1f ms %11.1f ms %11.1f ms %12d\n", launches, ms[0], ms[1], ms[2], on_switch);
  }
  return status;
}
