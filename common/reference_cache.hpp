// A float64 reference that many processes need, computed once. The GPU tests run as several
// processes at once (ctest's shards), and the map implementations' edge-size tests in each need the
// same 2^24-element, k = 16 reference of their op and type: seconds of every core each, recomputed
// in every process (within one, map_fixture keeps the last problems' references). With
// CDL_REFERENCE_CACHE naming a directory (tests/CMakeLists.txt sets it for the tests, in the build
// tree), the first process to need a reference computes it and writes it there, under a lock the
// others wait on, and the rest read it. Nothing else sets it: benchmarks and demos compute their
// own, in process.
//
// An entry is keyed by the problem, the seed and the executable that computed it (its size and
// modification time), so a rebuilt program never reads an older program's reference; entries of
// other builds are removed when a new build first writes. An entry that cannot be read, is cut
// short or names another problem is computed again and rewritten: the cache can only cost time.
#pragma once

#include "validation.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cdl {

// Work below this many op evaluations (elements times terms) is computed, never cached: reading
// it back would cost about as much.
inline constexpr double reference_cache_min_work = double(std::size_t(1) << 25);

// compute() when the cache is off or `work` is small; else the cached reference of `problem`
// (a full description: workload, op, type, sizes) with inputs from `seed`.
std::vector<reference_value> shared_reference(const std::string& problem, std::uint64_t seed, double work,
                                              const std::function<std::vector<reference_value>()>& compute);

}  // namespace cdl
