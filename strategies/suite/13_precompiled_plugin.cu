// 13 - Precompiled plugins: an op compiled ahead of time by nvcc into a file, loaded at run time.
//
// Idea.    The way a plugin ships: each op is built by nvcc, on its own, into a file beside the
//          programs (strategies/plugins/map_plugin.cu, built per op of the map catalogue by
//          strategies/CMakeLists.txt into build/<preset>/plugins/), and a program that was built
//          without knowing it loads it when the op is chosen: cudaLibraryLoadFromFile, then
//          cudaLibraryGetKernel by the kernel's C name, then cudaLaunchKernel. No compiler runs
//          in the program. Two forms: the plugin holds the map skeleton's kernels with the op
//          inlined (a fatbin: SASS for the build's GPUs and PTX for later ones), or the op alone
//          as LTO-IR, which nvJitLink links with -lto into the skeleton's kernels, themselves
//          shipped as LTO-IR (`.lto`: strategy 07 without NVRTC, only the link paid at run time).
// Cost.    A file per op to build, ship and find (CDL_PLUGIN_DIR), and a contract between the
//          plugin and its loader (the kernels' C names and parameters) that no compiler checks:
//          a mismatch is a wrong launch, not a build error. Loading costs a file read and a
//          module load per op; the LTO form adds the link. At run time the kernel is the
//          template kernel: the op is inlined in both forms.
// Use it   when ops come from elsewhere (a user, a vendor) but a compiler cannot be shipped or
//          run where the program runs: extensibility without NVRTC. The fatbin must hold code
//          for the GPU that loads it (or PTX the driver can compile); the LTO-IR is linked for
//          the GPU that runs it.
// See it.  `cuobjdump -sass build/release/plugins/cdl_plugin_sine.fatbin`: the skeleton's loop
//          with the op's instructions in it, no CALL. The plugin's kernels, as the loader sees
//          them:  extern "C" __global__ void cdl_plugin_map_scalar_f32(const float* x, float* y,
//                                                                    std::size_t n, int k)
// Measured: the report's map and dispatch tables, beside 01 and 07: both forms run at the
//          template's speed (the op is inlined in both). `cdl_run` prints each form's first
//          launch: a file read and a module load for the fatbin; for .lto also the link, which
//          optimises and generates all four of the skeleton's kernels at once (07 links one
//          form's kernel), and so costs more than 07's.
// Run it.  `cdl_run --strategy 13_precompiled_plugin/vec --op sine --n 2^24 --k 16`
//          (`cdl_run --plugin FILE --op OP` loads a plugin file of your own and times it beside)
#include "common/check.hpp"
#include "common/registry.hpp"
#include "common/skeletons/elementwise.cuh"
#include "strategies/suite/jit_kernels.hpp"
#include "strategies/suite/plugin.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

namespace cdl::plugin {

std::string directory() {
  const char* from_environment = std::getenv("CDL_PLUGIN_DIR");
  return from_environment && *from_environment ? from_environment : CDL_PLUGIN_DIR;
}
std::string fatbin_path(std::string_view op) {
  return directory() + "/cdl_plugin_" + std::string(op) + ".fatbin";
}
std::string op_ltoir_path(std::string_view op) {
  return directory() + "/cdl_plugin_" + std::string(op) + ".ltoir";
}
std::string skeleton_ltoir_path() { return directory() + "/cdl_map_skeleton.ltoir"; }

std::string kernel_name(std::string_view prefix, std::string_view form, std::string_view type) {
  return std::string(prefix) + std::string(form) + "_" + std::string(type);
}

namespace {
std::ifstream open_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw error(std::string(what) + " " + path +
                " cannot be read (is the build's plugins/ folder there, or " +
                "CDL_PLUGIN_DIR set to where the plugins are?)");
  return in;
}
std::vector<char> read_file(const std::string& path, const char* what) {
  std::ifstream in = open_file(path, what);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

void check_loadable(const std::string& path) {
  std::ifstream in = open_file(path, "plugin");  // its first four bytes: the runtime reads the rest
  unsigned char head[4] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  static constexpr unsigned char fatbin_magic[] = {0x50, 0xed, 0x55, 0xba};  // 0xba55ed50, little-endian
  static constexpr unsigned char elf_magic[] = {0x7f, 'E', 'L', 'F'};
  const bool whole = in.gcount() == sizeof head;
  if (!whole || (!std::equal(head, head + 4, fatbin_magic) && !std::equal(head, head + 4, elf_magic)))
    throw error("plugin " + path +
                " is neither a fatbin nor a CUBIN (its first bytes are not either's magic " +
                "number): build one with nvcc -fatbin or -cubin (strategies/plugins/map_plugin.cu)");
}

library::library(const std::string& path) : path_(path) {
  check_loadable(path);
  CDL_CUDA_CHECK(cudaLibraryLoadFromFile(&library_, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}
library::~library() {
  if (library_) (void)cudaLibraryUnload(library_);  // at exit the runtime may be gone already
}
cudaKernel_t library::kernel(const std::string& name) const {
  cudaKernel_t k = nullptr;
  if (cudaLibraryGetKernel(&k, library_, name.c_str()) != cudaSuccess) {
    (void)cudaGetLastError();  // the failure is reported here, not left for the next call
    throw error("plugin " + path_ + " has no kernel " + name + ": it is not a map plugin of this suite " +
                "(strategies/plugins/map_plugin.cu gives the kernels' names and parameters)");
  }
  return k;
}

void launch_map(cudaKernel_t scalar, cudaKernel_t vec, const map_launch& a) {
  if (a.form == map_form::staged) throw error("13_precompiled_plugin has no staged form");
  if (a.n == 0) return;
  const skeleton::elementwise_geometry g =
      skeleton::elementwise_launch_geometry(a.form, a.n, size_of(a.type), {a.x, a.y});
  jit::launch_map_kernel(g.form == map_form::vec ? vec : scalar, g.grid, a, false);
}

jit::linked link_op(const std::string& op_ltoir, int arch) {
  const auto part = [&](const std::string& path, const char* what) {
    return jit::compiled{jit::code_kind::ltoir, arch, {read_file(path, what), {}}, ""};
  };
  const jit::compiled skeleton = part(skeleton_ltoir_path(), "the skeleton's LTO-IR"),
                      op = part(op_ltoir, "LTO-IR");
  const jit::compiled* parts[] = {&skeleton, &op};
  jit::linked out;
  try {
    out = jit::link(parts, arch);
  } catch (const error& e) {  // which file, then what nvJitLink said (and its log, if it wrote one)
    throw error("plugin: linking " + op_ltoir + " into " + skeleton_ltoir_path() + " for sm_" +
                std::to_string(arch) +
                " failed (is it LTO-IR from nvcc -ltoir -dlto for this GPU?): " + e.what());
  }
  for (const char* form : {"scalar", "vec"})
    for (const char* type : {"f32", "f64"}) {
      const std::string name = kernel_name("cdl_lto_map_", form, type);
      out.image.kernel_names[name] = name;
    }
  return out;
}

}  // namespace cdl::plugin

namespace cdl {
namespace {

// Each op's plugin, loaded (and, for .lto, linked) at its first launch, its kernels found then;
// later launches find them by a lookup.
struct loaded_plugin {
  std::unique_ptr<plugin::library> fatbin;
  std::unique_ptr<jit::loaded> linked;
  cudaKernel_t kernels[2][2] = {};  // [f64][vec]
};
template <bool Lto>
void launch_map(const map_launch& a) {
  static std::map<map_op, loaded_plugin> found;
  static std::mutex mutex;
  const loaded_plugin* p = nullptr;
  {
    const std::lock_guard lock(mutex);
    loaded_plugin& q = found[a.op];
    if (!q.kernels[0][0]) {
      const std::string_view op = info(a.op).name;
      if constexpr (Lto)
        q.linked = std::make_unique<jit::loaded>(
            plugin::link_op(plugin::op_ltoir_path(op), jit::device_arch()).image);
      else
        q.fatbin = std::make_unique<plugin::library>(plugin::fatbin_path(op));
      for (int f64 : {0, 1})
        for (int vec : {0, 1}) {
          const std::string name = plugin::kernel_name(Lto ? "cdl_lto_map_" : "cdl_plugin_map_",
                                                       vec ? "vec" : "scalar", f64 ? "f64" : "f32");
          q.kernels[f64][vec] = Lto ? q.linked->kernel(name) : q.fatbin->kernel(name);
        }
    }
    p = &q;
  }
  const int f64 = a.type == dtype::f64;
  plugin::launch_map(p->kernels[f64][0], p->kernels[f64][1], a);
}

}  // namespace

void register_13_precompiled_plugin(registry& r) {
  r.add_map("13_precompiled_plugin", "", launch_map<false>);
  r.add_map("13_precompiled_plugin", "lto", launch_map<true>);
}

}  // namespace cdl
