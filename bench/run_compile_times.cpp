// cdl_run --compile-times: where a new op's compile time goes, route by route, on this machine's CPU
// (NVRTC's phases and time trace, nvJitLink's account, 08's stages).
#include "bench/run.hpp"

#include "common/cli.hpp"
#include "common/device_info.hpp"
#include "strategies/suite/routes.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace cdl::run_tool {

// NVRTC's time trace (--fdevice-time-trace, a Chrome trace written as FILE.json) of one compile:
// the front end's outermost header files and template instantiations, the two things a program's
// text adds to the front end, each summed and its three largest named. Events nest (a header
// includes headers, an instantiation instantiates), so only those inside no other of their kind count.
std::string front_end_breakdown(const std::filesystem::path& trace) {
  std::ifstream in(trace);
  if (!in) return "no time trace written";
  nlohmann::json doc;
  try {
    in >> doc;  // one compile's trace: the file was removed before it
  } catch (const nlohmann::json::exception& e) {
    return std::string("unreadable time trace: ") + e.what();
  }
  std::string out;
  for (const char* kind : {"Processing Header File", "Instantiating Template Function"}) {
    std::vector<std::tuple<double, double, std::string>> events;  // start, duration, detail
    for (const auto& e : doc.value("traceEvents", nlohmann::json::array()))
      if (e.value("ph", "") == "X" && e.value("name", "") == kind)
        events.emplace_back(e.value("ts", 0.0), e.value("dur", 0.0),
                            e.contains("args") ? e["args"].value("detail", "?") : "?");
    std::sort(events.begin(), events.end());
    std::vector<std::pair<double, std::string>> outermost;
    double open_until = -1;
    for (const auto& [ts, dur, detail] : events)
      if (ts >= open_until) {
        outermost.emplace_back(dur / 1000.0, detail);
        open_until = ts + dur;
      }
    double total = 0;
    for (const auto& [ms, detail] : outermost) total += ms;
    std::sort(outermost.rbegin(), outermost.rend());
    char line[128];
    std::snprintf(line, sizeof line, "%s%s %.0f ms in %zu", out.empty() ? "" : "; ",
                  std::string_view(kind) == "Processing Header File" ? "headers" : "template instantiations",
                  total, outermost.size());
    out += line;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, outermost.size()); ++i) {
      std::string name = outermost[i].second;
      if (name.size() > 48) name = name.substr(0, 45) + "...";
      std::snprintf(line, sizeof line, "%s%s %.0f", i == 0 ? " (" : ", ", name.c_str(), outermost[i].first);
      out += line;
    }
    if (!outermost.empty()) out += ")";
  }
  return out;
}

// Where a new op's compile time goes, route by route, on this machine's CPU (no GPU needed): NVRTC's
// own phases (--time) for 06's vec kernel and for a one-line kernel, and what its front end spent on
// headers and instantiations (its time trace), and 08's stages, with the driver's caches off: a
// new constant in a comment makes each text new, which would not do with them on (NVRTC's cache
// keys on what its front end makes, so a comment alone does not make a new entry).
int compile_times(const options& o, bool in_language, const jit::op_text& user) {
  // The driver's caches (NVRTC's and nvJitLink's) off, before anything starts the driver: the same
  // PTX from another run would otherwise skip ptxas.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  std::string why;
  const bool gpu = gpu_available(&why);
  const int arch = gpu ? jit::device_arch() : 90;
  using clock = std::chrono::steady_clock;
  const auto ms_since = [](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  };
  const std::filesystem::path csv =
      std::filesystem::temp_directory_path() / ("cdl_nvrtc_time_" + std::to_string(::getpid()) + ".csv");
  const std::filesystem::path trace =
      std::filesystem::temp_directory_path() / ("cdl_nvrtc_trace_" + std::to_string(::getpid()));
  const std::filesystem::path trace_json = trace.string() + ".json";  // NVRTC adds the extension
  // NVRTC's --time table: "file, phase, metric, unit" a line; the phases of one compile.
  auto nvrtc_route = [&](const char* route, const jit::program& p) {
    std::filesystem::remove(csv);
    std::filesystem::remove(trace_json);
    const auto start = clock::now();
    jit::compile(p, arch, jit::code_kind::cubin,
                 {"--time=" + csv.string(), "--fdevice-time-trace=" + trace.string()});
    const double total = ms_since(start);
    std::string phases;
    double in_phases = 0;
    for (const jit::phase& ph : jit::read_nvrtc_time(csv.string())) {
      in_phases += ph.ms;
      char ms[32];
      std::snprintf(ms, sizeof ms, " %.0f", ph.ms);
      phases += (phases.empty() ? "" : ", ") + ph.name + ms;
    }
    std::filesystem::remove(csv);
    std::printf("%-34s %8.1f   %s, outside them %.0f\n", route, total, phases.c_str(), total - in_phases);
    std::printf("%-34s %8s   front end: %s\n", "", "", front_end_breakdown(trace_json).c_str());
    std::filesystem::remove(trace_json);
  };
  std::printf("Where a new op's compile time goes (sm_%d, this machine's CPU; caches off, every text new)\n",
              arch);
  std::printf("%-34s %8s   %s\n", "route", "total ms", "phases, ms");
  // Each compiler is loaded (and its files read) before anything is timed: a process's first
  // compile, loading included, is cdl_bench's jit/first_compile_in_process. So is what a user's
  // first launch finds made already: the GPU's context (the first call that needs one creates it,
  // which would otherwise be counted in the first timed load) and the driver's PTX compiler,
  // loaded with a PTX of its own.
  if (gpu) CDL_CUDA_CHECK(cudaFree(nullptr));
  jit::compile(jit::one_line_program(jit::never_seen_op()), arch, jit::code_kind::cubin);
  if (in_language) {
    const jit::compiled warm = jit::compile_nvvm(
        expression_jit::map_module(expr::parse("sin(x)"), o.problem.type, map_form::scalar, "load"), arch);
    if (gpu) jit::load_now(warm.image, "map_scalar");
  }
  const jit::op_text fresh = jit::never_seen_op();  // its constants make each text below new
  jit::op_text op = user;
  op.source = "/* " + fresh.name + " */ " + op.source;
  const jit::program whole = jit::whole_program(jit::workload::map, o.problem.type, op, int(map_form::vec));
  nvrtc_route("06 NVRTC, vec kernel", whole);
  jit::program fast_compile = whole;
  fast_compile.source = "// " + jit::never_seen_op().name + "\n" + fast_compile.source;  // new text again
  fast_compile.options.push_back(jit::fast_compile_option);
  nvrtc_route("06 NVRTC fast_compile", fast_compile);
  nvrtc_route("NVRTC, a one-line kernel", jit::one_line_program(jit::never_seen_op()));
  {  // 07: the op alone to LTO-IR, then the link (the kernels' LTO-IR, made once, is not counted)
    const jit::compiled kernels =
        jit::compile(jit::lto_skeleton_program(jit::workload::map, o.problem.type, int(map_form::vec)), arch,
                     jit::code_kind::ltoir);
    jit::op_text lto_op = user;
    lto_op.source = "/* " + jit::never_seen_op().name + " */ " + lto_op.source;
    auto t = clock::now();
    const jit::compiled op_ir = jit::compile(jit::lto_op_program(jit::workload::map, o.problem.type, lto_op),
                                             arch, jit::code_kind::ltoir);
    const double op_ms = ms_since(t);
    t = clock::now();
    const jit::compiled* parts[] = {&kernels, &op_ir};
    const jit::linked linked = jit::link(parts, arch, {"-time"});
    const double link_ms = ms_since(t);
    std::string steps;  // nvJitLink's own account: libNVVM to PTX, then ptxas and the link's end
    for (const jit::phase& s : jit::read_nvjitlink_time(linked.info)) {
      char ms[32];
      std::snprintf(ms, sizeof ms, " %.0f", s.ms);
      steps += (steps.empty() ? "" : ", ") + s.name + ms;
    }
    std::printf("%-34s %8.1f   op to LTO-IR (NVRTC) %.0f, link -lto (nvJitLink) %.0f: %s\n",
                "07 LTO, vec kernel", op_ms + link_ms, op_ms, link_ms, steps.c_str());
  }
  if (in_language) {
    for (const expression_jit::tier level :
         {expression_jit::tier::optimised, expression_jit::tier::baseline}) {
      const char* route = level == expression_jit::tier::optimised ? "08 libNVVM, vec kernel"
                                                                   : "08 baseline (-opt=0), vec kernel";
      const auto start = clock::now();  // the IR's first line names the module: new text too
      const jit::nvvm_module m = expression_jit::map_module(expr::parse(o.expr), o.problem.type,
                                                            map_form::vec, jit::never_seen_op().name, level);
      const double lower = ms_since(start);
      auto t = clock::now();
      const jit::module_image ptx = expression_jit::compile_uncached(m, arch);
      const double nvvm = ms_since(t);
      if (gpu) {  // 08 loads its PTX: the driver's ptxas assembles it then
        t = clock::now();
        const float compiler = jit::load_now(ptx, "map_vec");
        const double load = ms_since(t);
        std::printf(
            "%-34s %8.1f   parse and lower %.2f, libNVVM %.0f, load %.0f (the driver's ptxas %.0f, by its "
            "account)\n",
            route, lower + nvvm + load, lower, nvvm, load, compiler);
      } else {
        std::printf(
            "%-34s %8.1f   parse and lower %.2f, libNVVM %.0f; the load (the driver's ptxas) needs a GPU\n",
            route, lower + nvvm, lower, nvvm);
      }
    }
  } else {
    std::printf("08: not in its language\n");
  }
  return 0;
}

}  // namespace cdl::run_tool
