// Strategy 17 on the GPU: random ops of the whole language, each written into its images or refused
// (counted by reason), loaded and run as the suite runs them (copy_and_patch::launch_map) in both
// forms at k = 1 and 3 (the vec form on a tail of three elements), each launch under a time limit;
// every element compared bit for bit with the op's steps run on the host (a call's value the GPU's
// own, from the call image's cdl_functions), and with the tests' own evaluator of the language
// within float's rounding. And the first result of a new op: its text to a 2^20 map's output.
// CDL_FUZZ_OPS sets how many ops (500; fewer under compute-sanitizer, more for a longer fuzz), and
// CDL_FUZZ_FROM the first draw run (0), so that a long fuzz runs in parts: the draws before it are
// drawn and skipped.
#include "common/device_buffer.hpp"
#include "common/parallel.hpp"
#include "strategies/suite/copy_and_patch.hpp"
#include "strategies/suite/copy_and_patch/decode.hpp"

#include "expression_oracle.hpp"
#include "gpu_test.hpp"
#include "random_programs.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>
#include <set>

namespace cdl::copy_and_patch {
namespace {

class CopyAndPatchOnTheGpu : public gpu_test {};

// The GPU's own sinf, cosf, expf and sqrtf as the call images' slots compute them (the host's are not
// the GPU's to the bit): the call image's cdl_functions kernel on an array.
struct gpu_functions {
  cudaLibrary_t library{};
  cudaKernel_t functions{};
  device_buffer<float> values{std::size_t(1) << 20};  // the fuzz's largest map
  gpu_functions() {
    const patch::bytes cubin = patch::read_file(stencils_prefix() + "calls_1.cubin");
    CDL_CUDA_CHECK(cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CDL_CUDA_CHECK(cudaLibraryGetKernel(&functions, library, "cdl_functions"));
  }
  ~gpu_functions() { cudaLibraryUnload(library); }
  void operator()(unsigned f, std::vector<float>& v) {
    CDL_CUDA_CHECK(cudaMemcpy(values.data(), v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* p = values.data();
    std::size_t n = v.size();
    void* args[] = {&f, &p, &n};
    CDL_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(functions), unsigned((n + 255) / 256), 256,
                                    args, 0, nullptr));
    CDL_CUDA_CHECK(cudaMemcpy(v.data(), values.data(), v.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }
};

TEST_F(CopyAndPatchOnTheGpu, RandomOpsRunAsTheirStepsAndMeanWhatTheLanguageMeans) {
  const patch::stencils st = patch::learn(stencils_prefix());
  gpu_functions on_gpu;
  const std::size_t big = std::size_t(1) << 20, small = (std::size_t(1) << 16) + 3;
  const std::vector<float> x = uniform_inputs<float>(big, 2026, -4.0, 4.0);
  device_buffer<float> dx(big), dy(big);
  dx.copy_from(x);
  std::vector<float> y(big);
  std::uint64_t state = 0x853c49e6748fea9bull;
  std::map<std::string, int> refused;
  std::vector<double> first_ms[2];  // a new op's text to a 2^20 map's output: without calls, with
  std::set<std::string>
      seen;  // a text drawn again is a lookup of its loaded image: its first result not timed
  int runs = 0, vec_runs = 0, call_runs = 0, wrong = 0, far = 0, ops = 0;
  const auto setting = [](const char* name, int otherwise) {
    const char* asked = std::getenv(name);
    return asked && std::atoi(asked) > 0 ? std::atoi(asked) : otherwise;
  };
  const int count = setting("CDL_FUZZ_OPS", 500), from = setting("CDL_FUZZ_FROM", 0);
  for (int t = 0; t < from + count; ++t) {
    const std::string text =  // every other a program with temporaries
        t % 2 ? test::random_program(state, 1 + t % 4) : test::random_op(state, 1 + t % 5);
    if (t < from) continue;
    const bool new_text = seen.insert(text).second;
    ++ops;
    const std::string why = refusal_on_host(text, dtype::f32);
    if (!why.empty()) {
      ++refused[why];
      continue;
    }
    const patch::compiled c = patch::compile(st, text);
    CDL_CUDA_CHECK(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();  // the route's first launch: its patch and load
    const bool calls = c.kernel.empty();
    bool timed = false;
    for (const auto& [k, form] : {std::pair(1, map_form::vec), std::pair(3, map_form::vec),
                                  std::pair(1, map_form::scalar), std::pair(3, map_form::scalar)}) {
      if (calls && form == map_form::scalar) continue;  // a call image is the vec form alone
      const std::size_t n = timed ? small : big;
      CDL_CUDA_CHECK(cudaMemset(dy.data(), 0xff, n * sizeof(float)));
      map_launch a = unlaunched(map_op::quadratic, dtype::f32, form);
      a.x = dx.data(), a.y = dy.data(), a.n = n, a.k = k, a.stream = nullptr;
      launch_map(a, jit::op_text{"fuzz", text});
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      cudaError_t state_now;
      while ((state_now = cudaStreamQuery(nullptr)) == cudaErrorNotReady)
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "`" << text << "` ran past 2 s";
      CDL_CUDA_CHECK(state_now);
      if (!timed && new_text)
        first_ms[calls].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      timed = true;  // the runs after the first map the smaller size
      CDL_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
      const std::vector<float> steps =
          patch::emulate_all(c, x.data(), n, k, [&](unsigned f, std::vector<float>& v) { on_gpu(f, v); });
      const std::size_t workers = worker_count(n);  // on every core: the fuzz's time is mostly here
      std::vector<std::size_t> bad_in(workers), off_in(workers);
      parallel_for(n, workers, [&](std::size_t w, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          bad_in[w] += !patch::same_result(y[i], steps[i]);
          if (i % 257 == 0) {  // a sample against the language's meaning
            const oracle::value want = oracle::mapped(text, x[i], k, stencil::delta);
            off_in[w] += !want.fragile && !oracle::agrees(y[i], want, 0x1p-23, 256);
          }
        }
      });
      const std::size_t bad = std::accumulate(bad_in.begin(), bad_in.end(), std::size_t(0)),
                        off = std::accumulate(off_in.begin(), off_in.end(), std::size_t(0));
      EXPECT_EQ(bad, 0u) << "`" << text << "` " << (form == map_form::vec ? "vec" : "scalar") << " k = " << k;
      EXPECT_EQ(off, 0u) << "`" << text << "` against the oracle, k = " << k;
      ++runs, vec_runs += form == map_form::vec, call_runs += calls, wrong += bad > 0, far += off > 0;
    }
  }
  std::string reasons;
  for (const auto& [why, times] : refused) reasons += "\n  " + std::to_string(times) + ": " + why;
  for (bool calls : {false, true}) {
    std::vector<double>& ms = first_ms[calls];
    std::sort(ms.begin(), ms.end());
    if (!ms.empty())
      std::printf(
          "a new op's first result (text to a 2^20 map's output, k = 1)%s: median %.3f ms over %zu new "
          "texts\n",
          calls ? ", calling functions" : "", ms[ms.size() / 2], ms.size());
  }
  std::printf(
      "GPU fuzz: %d ops (%zu texts), %d runs (%d vec, %d calling functions), %d wrong, %d off the oracle; "
      "refused:%s\n",
      ops, seen.size(), runs, vec_runs, call_runs, wrong, far, reasons.c_str());
  EXPECT_GT(call_runs, count / 10);
  EXPECT_GT(vec_runs, 2 * count / 5);
}

}  // namespace
}  // namespace cdl::copy_and_patch
