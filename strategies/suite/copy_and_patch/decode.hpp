// Strategy 17's reading back of what it wrote, on the host, with no GPU: an op's steps run in float
// (emulate: what the patched kernel must compute, bit for bit), the patched image's instructions
// decoded with the learnt forms and run on a register file (simulate: what the machine code means),
// and the stalls re-derived from the bytes and checked against the learnt latencies
// (check_schedule). The tests and the GPU fuzz set these beside each other and beside the tests' own
// evaluator of the language.
#pragma once

#include "strategies/suite/copy_and_patch/write.hpp"

#include "common/parallel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace cdl::copy_and_patch::patch {

// Two results the same: equal, or both NaN (an op may compute a NaN, and must where its steps do).
inline bool same_result(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// What the patched kernel computes for one element, in float on the host, step by step: the test
// of the machine code (its result must be this, bit for bit).
float emulate(const compiled& c, float x0, int k);

// The same over many elements at once, on every core: the steps between two calls over slices of
// the elements, each call applied by `apply` to every element's argument (the GPU's functions, in
// the fuzz: the host's sinf is not the GPU's to the bit); a quotient, the same to the bit on both,
// on the host. A chunk of elements at a time, so that each step's values stay in the caches rather
// than take a column of n floats apiece.
template <class Apply>
std::vector<float> emulate_all(const compiled& c, const float* x0, std::size_t n, int k, Apply apply) {
  constexpr std::size_t chunk = std::size_t(1) << 16;
  std::vector<float> acc(n, 0.0f);
  std::vector<std::vector<float>> v(c.code.size() + 1, std::vector<float>(std::min(n, chunk)));
  const auto summed = c.code.end() - c.product_in_sum;  // the steps before the sum
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t m = std::min(chunk, n - first);
    for (std::vector<float>& column : v) column.resize(m);
    const float* x = x0 + first;
    float* sums = acc.data() + first;
    const std::size_t workers = worker_count(m);
    for (int j = 0; j < k; ++j) {
      // the steps from `from` to the next call (or to the sum) on elements [b, e) of the chunk
      const auto run = [&](auto from, std::size_t b, std::size_t e) {
        if (from == c.code.begin())
          for (std::size_t i = b; i < e; ++i) v[0][i] = std::fma(float(j), stencil::delta, x[i]);
        for (auto s = from; s != summed && !s->call; ++s) {
          std::vector<float>& out = v[std::size_t(s->dest)];
          const std::vector<float>& a = v[std::size_t(s->a)];
          for (std::size_t i = b; i < e; ++i)
            out[i] = stencil::evaluate(s->op, a[i], s->b >= 0 ? v[std::size_t(s->b)][i] : 0.0f,
                                       s->c >= 0 ? v[std::size_t(s->c)][i] : 0.0f, s->constant);
        }
      };
      for (auto from = c.code.begin();;) {
        parallel_for(m, workers, [&](std::size_t, std::size_t b, std::size_t e) { run(from, b, e); });
        auto s = std::find_if(from, summed, [](const step& t) { return t.call != 0; });
        if (s == summed) break;
        std::vector<float>& out = v[std::size_t(s->dest)];
        const std::vector<float>& a = v[std::size_t(s->a)];
        if (s->call == stencil::fn_div) {
          for (std::size_t i = 0; i < m; ++i) out[i] = a[i] / v[std::size_t(s->b)][i];
        } else {
          out = a;
          apply(s->call, out);
        }
        from = s + 1;
      }
      if (!c.product_in_sum) {
        for (std::size_t i = 0; i < m; ++i) sums[i] += v[std::size_t(c.result)][i];
        continue;
      }
      const step sum = sum_with(c.code.back(), -1);  // (-1: the sum's own register, acc)
      const bool two = sum.op == stencil::fmarr;     // a product of two values, not one and a constant
      const std::vector<float>& a = v[std::size_t(sum.a)];
      const std::vector<float>& b = v[std::size_t(two ? sum.b : 0)];
      for (std::size_t i = 0; i < m; ++i)
        sums[i] = stencil::evaluate(sum.op, a[i], two ? b[i] : sums[i], sums[i], sum.constant);
    }
  }
  return acc;
}

// What the patched scalar image computes for one element through k steps of the map, decoded and
// run on the host; NaN where a place holds no operation the stencils taught.
float simulate(const stencils& st, const compiled& c, float x0, int k);
// The same for the vec image's (or call image's) four lanes; between a call image's windows, the
// slot's function on each lane's argument (the host's), every register but those the slot keeps lost.
std::array<float, stencil::lanes> simulate_vec(const stencils& st, const compiled& c,
                                               const std::array<float, stencil::lanes>& x0, int k);
// The first place where an instruction of the patch issues before what it reads is ready, or writes a
// register before an earlier write to it has landed, or where what follows a stretch reads it too
// soon, by the learnt latencies read against the image's own stall fields; empty where there is none.
std::string check_schedule(const stencils& st, const compiled& c);

}  // namespace cdl::copy_and_patch::patch
