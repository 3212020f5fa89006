// Strategy 13's plugins without a GPU: every map op's files are built, a file that is not a plugin
// is refused before any CUDA call, each op's LTO-IR links into the skeleton's (nvJitLink runs on
// the CPU), and computes its op (its PTX run on the host). Loading and running the plugins' kernels
// are the GPU tests' (the registry's map entries).
#include "common/device_info.hpp"
#include "common/ops.cuh"
#include "common/skeletons/map.cuh"
#include "strategies/suite/plugin.hpp"
#include "tests/expression_oracle.hpp"
#include "tests/ptx_machine.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

namespace cdl {
namespace {

// The architecture the build made the LTO-IR for: the GPU's where there is one (a `native`
// build), else sm_90, the build's default without a GPU (CMakeLists.txt).
int lto_arch() { return gpu_available() ? jit::device_arch() : 90; }

std::string temporary_file(const std::string& name, const std::string& content) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Each op's files: a fatbin (its magic number) and the op alone as LTO-IR, each its own (no two
// ops' files alike), beside the skeleton's LTO-IR.
TEST(Plugin, EveryMapOpHasItsFilesAndThereAreNoOthers) {
  std::size_t fatbins = 0;
  std::set<std::string> distinct_fatbins, distinct_ltoir;
  for (const op_info& op : map_op_catalogue) {
    const std::string fatbin = contents(plugin::fatbin_path(op.name)),
                      ltoir = contents(plugin::op_ltoir_path(op.name));
    EXPECT_EQ(fatbin.substr(0, 4), std::string("\x50\xed\x55\xba", 4)) << op.name << ": not a fatbin";
    EXPECT_NO_THROW(plugin::check_loadable(plugin::fatbin_path(op.name))) << op.name;
    EXPECT_GT(ltoir.size(), 64u) << op.name << ": no LTO-IR";
    distinct_fatbins.insert(fatbin);
    distinct_ltoir.insert(ltoir);
  }
  EXPECT_EQ(distinct_fatbins.size(), map_op_catalogue.size()) << "two ops' fatbins are the same file";
  EXPECT_EQ(distinct_ltoir.size(), map_op_catalogue.size()) << "two ops' LTO-IR are the same";
  EXPECT_TRUE(std::filesystem::exists(plugin::skeleton_ltoir_path()));
  for (const auto& f : std::filesystem::directory_iterator(plugin::directory()))
    fatbins += f.path().extension() == ".fatbin" && f.path().filename().string().rfind("cdl_plugin_", 0) == 0;
  EXPECT_EQ(fatbins, map_op_catalogue.size())
      << "strategies/CMakeLists.txt's cdl_plugin_ops is not the map catalogue";
}

// 16's float kernels as a file (copied out of suite/interpreter_f32.cu's object), for the Python peers.
TEST(Plugin, TheInterpretersKernelsAreAFileOfTheirOwn) {
  const std::string path = (std::filesystem::path(plugin::directory()) / "cdl_interpreter.fatbin").string();
  EXPECT_NO_THROW(plugin::check_loadable(path));
  const std::string file = contents(path);  // the names a loader asks for (bench/python/cdl_peers)
  for (const char* name : {"cdl_interpreter_scalar_f32_1_0", "cdl_interpreter_scalar_f32_16_4",
                           "cdl_interpreter_vec_f32_4_1_0", "cdl_interpreter_vec_f32_1_4_4"})
    EXPECT_NE(file.find(name), std::string::npos) << name;
  // copied out of the float kernels' own object: none of 16's templated (float64) kernels with them
  EXPECT_EQ(file.find("_ZN3cdl11interpreter"), std::string::npos) << path << " holds 16's other kernels";
}

TEST(Plugin, RefusesAFileThatIsNotOneBeforeAnyCudaCall) {
  try {
    plugin::check_loadable(temporary_file("cdl_not_a_plugin.fatbin", "x * x + 1"));
    FAIL() << "a text file passed as a plugin";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("neither a fatbin nor a CUBIN"), std::string::npos) << e.what();
  }
  try {
    plugin::check_loadable("/nonexistent/cdl_plugin_quadratic.fatbin");
    FAIL() << "a missing file passed as a plugin";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be read"), std::string::npos) << e.what();
  }
}

TEST(Plugin, LinksEachOpsLtoIrIntoTheSkeletonsWithoutAGpu) {
  for (const op_info& op : map_op_catalogue) {
    const jit::linked l = plugin::link_op(plugin::op_ltoir_path(op.name), lto_arch());
    EXPECT_GT(l.image.code.size(), 1000u) << op.name;
    EXPECT_EQ(l.image.kernel_names.count("cdl_lto_map_vec_f32"), 1u) << op.name;
  }
  // Bytes that are not LTO-IR: an error naming the file.
  const std::string bad = temporary_file("cdl_not_ltoir.ltoir", "not LTO-IR");
  try {
    plugin::link_op(bad, lto_arch());
    FAIL() << "a text file linked as LTO-IR";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("linking " + bad), std::string::npos) << e.what();
  }
}

// What each op's LTO-IR computes, with no GPU: nvJitLink links it with a probe kernel that calls
// the op once (y = op(x)) into PTX, which tests/ptx_machine.hpp runs on the host, held against the
// tests' own evaluator of the op's text (tests/expression_oracle.hpp) in both types. A plugin whose
// op is not its name's fails here. The check can fail: each op's PTX is also held against the next
// op's text, which it must miss somewhere.
TEST(Plugin, EachOpsLtoIrComputesItsOpRunOnTheHost) {
  const int arch = lto_arch();
  const jit::program probe{"cdl_probe.cu",
                           R"(
extern "C" __device__ float cdl_plugin_op_f32(float x);
extern "C" __device__ double cdl_plugin_op_f64(double x);
extern "C" __global__ void cdl_probe_f32(float x, float* y) { *y = cdl_plugin_op_f32(x); }
extern "C" __global__ void cdl_probe_f64(double x, double* y) { *y = cdl_plugin_op_f64(x); }
)",
                           {},
                           {}};
  const jit::compiled probe_ir = jit::compile(probe, arch, jit::code_kind::ltoir);
  constexpr double xs[] = {-3.5, -1.25, -0.5, 0.0, 0.3125, 0.5, 0.75, 1.0, 2.5, 6.0};
  constexpr auto output = test::ptx_machine::output;
  for (std::size_t i = 0; i < map_op_catalogue.size(); ++i) {
    const op_info& op = map_op_catalogue[i];
    const std::string path = plugin::op_ltoir_path(op.name), code = contents(path);
    const jit::compiled op_ir{jit::code_kind::ltoir, arch, {{code.begin(), code.end()}, {}}, ""};
    const jit::compiled* parts[] = {&probe_ir, &op_ir};
    const std::vector<char> linked = jit::link(parts, arch, {"-ptx"}).image.code;
    const std::string ptx(linked.begin(), linked.end());
    ASSERT_NE(ptx.find(".entry cdl_probe_f32"), std::string::npos) << op.name << ": no PTX of the probe";
    const std::string_view other = map_op_catalogue[(i + 1) % map_op_catalogue.size()].source;
    int compared = 0, missed_other = 0;
    for (const double x : xs) {
      const oracle::value want = oracle::at(op.source, x), want_other = oracle::at(other, x);
      if (want.fragile) continue;
      const float y32 = test::ptx_machine(ptx)
                            .run("cdl_probe_f32", {std::bit_cast<std::uint32_t>(float(x)), output})
                            .load<float>(output);
      const double y64 = test::ptx_machine(ptx)
                             .run("cdl_probe_f64", {std::bit_cast<std::uint64_t>(x), output})
                             .load<double>(output);
      EXPECT_TRUE(oracle::agrees(y32, want, 0x1p-23, op.max_ulps + 8))
          << op.name << " (f32) at x = " << x << ": " << y32 << ", its text gives " << want.v;
      EXPECT_TRUE(oracle::agrees(y64, want, 0x1p-52, op.max_ulps + 8))
          << op.name << " (f64) at x = " << x << ": " << y64 << ", its text gives " << want.v;
      ++compared;
      missed_other += !want_other.fragile && !oracle::agrees(y64, want_other, 0x1p-52, op.max_ulps + 8);
    }
    EXPECT_GE(compared, 6) << op.name;
    EXPECT_GT(missed_other, 0) << op.name << "'s PTX agrees with " << other
                               << " everywhere: the check cannot tell";
  }
}

// What each op's fatbin (the file 13 loads) computes, with no GPU: the PTX in it (the build leaves
// the fatbin uncompressed) run on the host, each of its four map kernels over 8 elements at k = 3,
// against the tests' own evaluator. A build for the GPU it runs on (-arch=native) may hold no PTX:
// then the GPU tests, which run the file's kernels, are its check.
TEST(Plugin, EachOpsFatbinComputesItsOpRunOnTheHost) {
  const std::vector<double> xs = {-1.5, -0.625, 0.25, 0.75, 1.0, 1.75, 2.5, 3.0};
  constexpr int k = 3;
  for (const op_info& op : map_op_catalogue) {
    const std::string file = contents(plugin::fatbin_path(op.name));
    const std::size_t begin = file.find("\n.version ");
    if (begin == std::string::npos)
      GTEST_SKIP() << plugin::fatbin_path(op.name) << " holds no PTX (a build for this machine's GPU alone)";
    const std::size_t start = file.rfind('\0', begin) + 1;
    const std::string ptx = file.substr(start, file.find('\0', begin) - start);
    int compared = 0;
    for (const bool f64 : {false, true})
      for (const bool vec : {false, true}) {
        const std::string entry =
            std::string("cdl_plugin_map_") + (vec ? "vec_" : "scalar_") + (f64 ? "f64" : "f32");
        const std::vector<double> got = test::map_outputs(ptx, entry, f64, vec, xs, k);
        for (std::size_t i = 0; i < got.size(); ++i) {
          const oracle::value want = oracle::mapped(op.source, xs[i], k, map_delta);
          if (want.fragile) continue;
          EXPECT_TRUE(oracle::agrees(got[i], want, f64 ? 0x1p-52 : 0x1p-23, op.max_ulps + 8))
              << op.name << " " << entry << " at x = " << xs[i] << ": " << got[i] << ", its text gives "
              << want.v;
          ++compared;
        }
      }
    EXPECT_GE(compared, 6) << op.name;  // of 8: 1 and 4 values in float32, 1 and 2 in float64
  }
}

}  // namespace
}  // namespace cdl
