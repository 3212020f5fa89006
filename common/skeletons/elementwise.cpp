// The host half of skeletons/elementwise.cuh: the launch geometry of the scalar, vec and staged
// forms (vec needs 16-byte aligned pointers and whole vectors, else the launch falls back to
// scalar).
#include "elementwise.cuh"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace cdl {

namespace skeleton {
elementwise_geometry elementwise_launch_geometry(map_form wanted, std::size_t n, std::size_t elem_bytes,
                                                 std::initializer_list<const void*> pointers) {
  bool aligned = true;
  for (const void* p : pointers) aligned = aligned && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  const bool vec = wanted == map_form::vec && aligned && elem_bytes <= 16 && n % (16 / elem_bytes) == 0;
  const std::size_t per_block = vec ? std::size_t(elementwise_block) * vecs_per_thread * (16 / elem_bytes)
                                    : std::size_t(elementwise_block);
  const std::size_t grid = std::max<std::size_t>(1, (n + per_block - 1) / per_block);
  if (grid > std::size_t(std::numeric_limits<int>::max()))
    throw error("n = " + std::to_string(n) + " needs more blocks than a launch allows");
  return {vec                          ? map_form::vec
          : wanted == map_form::staged ? map_form::staged
                                       : map_form::scalar,
          unsigned(grid)};
}
}  // namespace skeleton

}  // namespace cdl
