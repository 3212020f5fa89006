// The poison every run's output is filled with before its launch (validation.hpp says why this
// pattern), written as integers so that no conversion can touch the NaN's bits.
#include "fixture.hpp"

#include <thrust/execution_policy.h>
#include <thrust/fill.h>

namespace cdl {

void poison(void* output, dtype type, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  if (type == dtype::f32)
    thrust::fill_n(thrust::cuda::par_nosync.on(stream), static_cast<std::uint32_t*>(output), count,
                   poison_f32);
  else
    thrust::fill_n(thrust::cuda::par_nosync.on(stream), static_cast<std::uint64_t*>(output), count,
                   poison_f64);
  CDL_CHECK_LAUNCH();
}

}  // namespace cdl
