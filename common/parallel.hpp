// Host-side data parallelism for inputs, references and validation: a 2^28-element CPU
// reference is seconds on one core and a fraction of that on all of them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace cdl {

inline std::size_t worker_count(std::size_t n, std::size_t grain = std::size_t(1) << 14) {
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(n / grain, 1, hw);
}

// Calls body(worker, begin, end) on contiguous slices of [0, n), one slice per worker.
// body must not throw (an exception escaping a thread terminates the program).
template <class Body>
void parallel_for(std::size_t n, std::size_t workers, Body&& body) {
  if (workers <= 1) {
    body(std::size_t(0), std::size_t(0), n);
    return;
  }
  const std::size_t slice = (n + workers - 1) / workers;
  std::vector<std::jthread> pool;
  pool.reserve(workers);
  for (std::size_t w = 0; w < workers; ++w) {
    const std::size_t begin = std::min(n, w * slice), end = std::min(n, begin + slice);
    pool.emplace_back([&body, w, begin, end] { body(w, begin, end); });
  }
}

}  // namespace cdl
