// Strategy 13's plugins (strategies/plugins/map_plugin.cu): where they are, how a file is checked,
// loaded and linked. cdl_run's --plugin and the CPU tests use these too.
#pragma once

#include "common/jit.hpp"
#include "common/map_workload.hpp"

#include <cuda_runtime.h>

#include <string>
#include <string_view>

namespace cdl::plugin {

// CDL_PLUGIN_DIR from the environment, else the build's plugins/ folder.
std::string directory();
// Each op's files there: its kernels as a fatbin, the op alone as LTO-IR; and the skeleton's LTO-IR.
std::string fatbin_path(std::string_view op);
std::string op_ltoir_path(std::string_view op);
std::string skeleton_ltoir_path();

// The kernel of a map plugin for a form (scalar or vec) and type (f32 or f64), by its C name:
// "cdl_plugin_map_vec_f32" in a fatbin, "cdl_lto_map_vec_f32" in the linked skeleton.
std::string kernel_name(std::string_view prefix, std::string_view form, std::string_view type);

// Throws cdl::error saying what the file is not, before any CUDA call: missing, unreadable, or
// neither a fatbin nor a CUBIN (an ELF file) by its first bytes.
void check_loadable(const std::string& path);

// A plugin file loaded into this process (cudaLibraryLoadFromFile), unloaded on destruction.
class library {
 public:
  explicit library(const std::string& path);
  ~library();
  library(const library&) = delete;
  library& operator=(const library&) = delete;
  // Throws, naming the file, when it has no kernel of that name (it is not a map plugin).
  cudaKernel_t kernel(const std::string& name) const;

 private:
  std::string path_;
  cudaLibrary_t library_ = nullptr;
};

// Launches a map plugin's kernels (its scalar and vec kernels of a.type): the vec one where the
// pointers allow it, as the skeleton's launch does.
void launch_map(cudaKernel_t scalar, cudaKernel_t vec, const map_launch& a);

// The skeleton's LTO-IR and an op's, linked by nvJitLink for sm_<arch>: no compiler in the loop,
// and no GPU needed. The image names the four kernels by their C names.
jit::linked link_op(const std::string& op_ltoir, int arch);

}  // namespace cdl::plugin
