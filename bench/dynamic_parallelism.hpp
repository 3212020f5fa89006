// cdl_build_facts' dynamic-parallelism probe, run on the GPU (dynamic_parallelism.cu).
#pragma once

#include <nlohmann/json.hpp>

namespace cdl {
// {"runs": true|false, "valid": bool, "error": text}, or {"runs": null, "reason": ...} without a GPU.
nlohmann::json run_dynamic_parallelism();
}  // namespace cdl
