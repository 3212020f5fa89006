// The library peers of the elementwise workloads: cub::DeviceTransform and thrust::transform,
// each given the op as a functor type (the template-functor strategy, done by CCCL's own
// kernels). They take the launch signature of every strategy, so the same fixtures validate
// and time them; the form in the launch is ignored (each library picks its own loads).
#pragma once

#include "map_workload.hpp"
#include "zip_workload.hpp"

namespace cdl {

void cub_transform_map(const map_launch& a);
void cub_transform_zip(const zip_launch& a);
void thrust_transform_map(const map_launch& a);
void thrust_transform_zip(const zip_launch& a);

}  // namespace cdl
