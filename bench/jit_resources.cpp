// cdl_jit_resources: the kernels the run-time strategies compile (06, its variant fast_compile, 07,
// its variant preoptimised, 08's two tiers; strategy 10's tiers run these same kernels), each built
// as its strategy builds it for the map's forms, every catalogue op and both types, with ptxas's
// own account of it (-v: registers, stack frame, spills) from the compiler that made it: NVRTC for
// 06, nvJitLink's link for 07, and for 08 nvJitLink assembling its PTX as the driver's ptxas does at
// the load. reports/resources.py reads what it prints into resources.json beside nvcc's kernels,
// so that a figure of a JIT kernel can be explained by its resources as any other's.
//
//   cdl_jit_resources ARCH DIR    e.g. 90; the CUBINs are written under DIR (for the occupancy)
//
// Prints a JSON array, a record per kernel: entry (the registry's name), op, type, kernel (its
// name in the CUBIN), cubin (the file) and ptxas (the compiler's -v text). Needs no GPU.
#include "common/check.hpp"
#include "common/expression.hpp"
#include "common/jit.hpp"
#include "strategies/suite/routes.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cdl;

// What one route made: its CUBIN, the kernel's name in it, and ptxas's -v text.
struct built {
  jit::module_image image;
  std::string kernel, ptxas;
};

constexpr const char* nvrtc_verbose = "--ptxas-options=-v";
constexpr const char* link_verbose = "-Xptxas=-v";

// 06 (and fast_compile): the whole program, NVRTC to a CUBIN.
built nvrtc(dtype t, const jit::op_text& op, map_form form, int arch, bool fast_compile) {
  jit::program p = jit::whole_program(jit::workload::map, t, op, int(form));
  if (fast_compile) p.options.push_back(jit::fast_compile_option);
  jit::compiled c = jit::compile(p, arch, jit::code_kind::cubin, {nvrtc_verbose});
  const std::string kernel = c.image.kernel_names.begin()->second;
  return {std::move(c.image), kernel, std::move(c.log)};
}

// 07 (and preoptimised): the kernel's and the op's LTO-IR, linked by nvJitLink.
built lto(dtype t, const jit::op_text& op, map_form form, int arch, bool preoptimised) {
  jit::program kernels = jit::lto_skeleton_program(jit::workload::map, t, int(form));
  if (preoptimised) kernels.options.push_back(jit::preoptimise_option);
  const jit::compiled parts[] = {
      jit::compile(kernels, arch, jit::code_kind::ltoir),
      jit::compile(jit::lto_op_program(jit::workload::map, t, op), arch, jit::code_kind::ltoir)};
  const jit::compiled* ptrs[] = {&parts[0], &parts[1]};
  jit::linked l = jit::link(ptrs, arch, {link_verbose});
  const std::string kernel = parts[0].image.kernel_names.begin()->second;
  return {std::move(l.image), kernel, std::move(l.info)};
}

// 08, a tier: IR to PTX (libNVVM), then the PTX assembled.
built nvvm(dtype t, const jit::op_text& op, map_form form, int arch, expression_jit::tier level) {
  const jit::compiled ptx =
      jit::compile_nvvm(expression_jit::map_module(expr::parse(op.source), t, form, op.name, level), arch);
  const jit::compiled* parts[] = {&ptx};
  jit::linked l = jit::link(parts, arch, {link_verbose});
  return {std::move(l.image), form == map_form::vec ? "map_vec" : "map_scalar", std::move(l.info)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cdl_jit_resources ARCH DIR  (ARCH as NVRTC takes it: 90 for sm_90)\n");
    return 2;
  }
  // Where a GPU driver is installed, NVRTC and nvJitLink answer a text they have compiled before from
  // the driver's compute cache, and then ptxas never runs and writes no -v report: a second run on
  // the same machine would find no resources. With the cache off every kernel is compiled here.
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  try {
    const int arch = std::stoi(argv[1]);
    const std::filesystem::path dir = argv[2];
    std::filesystem::create_directories(dir);
    // Every kernel is compiled on a thread of its own, as many at once as the machine has cores
    // (each compile is one thread's work, and the compilers are thread-safe across programs), and
    // written out in the order listed.
    struct job {
      std::string entry, op;
      dtype type;
      std::function<built()> build;
    };
    std::vector<job> jobs;
    for (const auto& info : map_op_catalogue) {
      const jit::op_text op{std::string(info.name), std::string(info.source)};
      for (dtype t : {dtype::f32, dtype::f64})
        for (map_form form : {map_form::scalar, map_form::vec}) {
          std::string f = "/";
          f += to_string(form);
          const auto add = [&](const std::string& entry, std::function<built()> build) {
            jobs.push_back({entry + f, op.name, t, std::move(build)});
          };
          add("06_nvrtc_jit", [=] { return nvrtc(t, op, form, arch, false); });
          add("06_nvrtc_jit.fast_compile", [=] { return nvrtc(t, op, form, arch, true); });
          add("07_jit_lto", [=] { return lto(t, op, form, arch, false); });
          add("07_jit_lto.preoptimised", [=] { return lto(t, op, form, arch, true); });
          add("08_expression_jit", [=] { return nvvm(t, op, form, arch, expression_jit::tier::optimised); });
          add("08_expression_jit.baseline",
              [=] { return nvvm(t, op, form, arch, expression_jit::tier::baseline); });
        }
    }
    std::vector<std::optional<built>> made(jobs.size());
    std::vector<std::exception_ptr> failed(jobs.size());
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
      for (std::size_t i; (i = next++) < jobs.size();) try {
          made[i] = jobs[i].build();
        } catch (...) {
          failed[i] = std::current_exception();
        }
    };
    std::vector<std::thread> threads(std::max(1u, std::thread::hardware_concurrency()));
    for (std::thread& th : threads) th = std::thread(work);
    for (std::thread& th : threads) th.join();
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (failed[i]) std::rethrow_exception(failed[i]);
      const built& b = *made[i];
      const std::filesystem::path cubin = dir / (std::to_string(i) + ".cubin");
      std::ofstream(cubin, std::ios::binary).write(b.image.code.data(), std::streamsize(b.image.code.size()));
      out.push_back({{"entry", jobs[i].entry},
                     {"op", jobs[i].op},
                     {"type", std::string(to_string(jobs[i].type))},
                     {"kernel", b.kernel},
                     {"cubin", cubin.string()},
                     {"ptxas", b.ptxas}});
    }
    std::cout << out.dump(1) << "\n";
  } catch (const jit::compile_error& e) {
    std::fprintf(stderr, "cdl_jit_resources: %s\n%s\n", e.what(), e.log().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_jit_resources: %s\n", e.what());
    return 1;
  }
  return 0;
}
