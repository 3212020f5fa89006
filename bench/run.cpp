// cdl_run: run one registered strategy (or all of them) on one map problem, validate it, time
// it, print a line per strategy and optionally write the result records as JSON. The demo for
// readers of strategies/: pick a file, run its entry, compare with the baseline.
//
//   cdl_run --list
//   cdl_run --strategy 04_function_pointer.symbol/vec --op sine --n 16777216 --k 16 [--json out.json]
//   cdl_run --strategy all --op quadratic --type f64 --n 1e8
#include "common/inputs.hpp"
#include "common/record.hpp"
#include "common/registry.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace cdl;

struct options {
  std::string strategy = "all";
  map_problem problem{map_op::quadratic, dtype::f32, std::size_t(1) << 24, 1};
  int repetitions = 30;
  std::uint64_t seed = default_seed;
  std::string json_path;
  bool list = false;
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: cdl_run [--list] [--strategy NAME|all] [--op OP] [--type f32|f64] [--n N] [--k K]\n"
               "               [--reps R] [--seed S] [--json FILE]\n"
               "  N accepts 1e8 or 2^24 forms. --list prints the registered strategies and ops.\n");
}

std::size_t parse_size(const std::string& text) try {
  std::size_t used = 0;
  if (text.rfind("2^", 0) == 0) {
    const int e = std::stoi(text.substr(2), &used);
    if (used + 2 != text.size() || e < 0 || e > 62) throw error("bad size '" + text + "'");
    return std::size_t(1) << e;
  }
  const double v = std::stod(text, &used);
  if (used != text.size() || v < 0 || v != double(std::size_t(v))) throw error("bad size '" + text + "'");
  return std::size_t(v);
} catch (const std::logic_error&) {  // std::stoi / std::stod found no number
  throw error("bad size '" + text + "' (expected a whole number such as 1000, 1e8 or 2^24)");
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw error("option " + arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--list") o.list = true;
      else if (arg == "--strategy") o.strategy = value();
      else if (arg == "--op") o.problem.op = parse_map_op(value());
      else if (arg == "--type") o.problem.type = parse_dtype(value());
      else if (arg == "--n") o.problem.n = parse_size(value());
      else if (arg == "--k") o.problem.k = int(parse_size(value()));
      else if (arg == "--reps") o.repetitions = int(parse_size(value()));
      else if (arg == "--seed") o.seed = parse_size(value());
      else if (arg == "--json") o.json_path = value();
      else if (arg == "--help" || arg == "-h") {
        usage(stdout);
        std::exit(0);
      } else throw error("unknown option '" + arg + "'");
    } catch (const std::logic_error& e) {  // std::stoi/stod and parse_* errors
      throw error(arg + ": " + e.what());
    }
  }
  if (o.problem.k < 1) throw error("--k must be at least 1");
  if (o.repetitions < 1) throw error("--reps must be at least 1");
  return o;
}

int run(const options& o) {
  if (o.list) {
    for (const map_entry& e : get_registry().map) std::printf("%s\n", e.name().c_str());
    std::printf("ops:");
    for (const op_info& op : map_op_catalogue) std::printf(" %s", std::string(op.name).c_str());
    std::printf("\n");
    return 0;
  }
  std::vector<const map_entry*> chosen;
  if (o.strategy == "all")
    for (const map_entry& e : get_registry().map) chosen.push_back(&e);
  else
    chosen.push_back(&find_map_entry(o.strategy));

  std::string why;
  if (!gpu_available(&why)) throw error(why);
  const double copy = measure_copy_bandwidth_gbs(default_copy_bytes());
  const environment env = current_environment(copy);
  std::printf("%s | copy %.0f GB/s | %s\n", env.device.name.c_str(), copy, o.problem.describe().c_str());

  const map_fixture fixture(o.problem, o.seed);
  nlohmann::json records = nlohmann::json::array();
  bool all_passed = true;
  for (const map_entry* e : chosen) {
    run_record r;
    r.strategy = e->strategy;
    r.variant = e->variant;
    r.form = to_string(e->form);
    r.workload = "map";
    r.problem = {{"op", info(o.problem.op).name}, {"type", to_string(o.problem.type)}, {"n", o.problem.n},
                 {"k", o.problem.k}, {"seed", o.seed}};
    r.validation = fixture.run_and_validate(e->launch, e->form);
    r.env = env;
    if (r.validation.passed) {
      r.timing = time_launches([&](cudaStream_t s) { fixture.launch(e->launch, e->form, s); },
                               {.warmup = 3, .repetitions = o.repetitions, .flush_l2 = true});
      r.bytes = double(o.problem.min_bytes());
      r.bandwidth_gbs = r.bytes / (r.timing.median_ms * 1e-3) / 1e9;
      r.fraction_of_copy = r.bandwidth_gbs / copy;
      std::printf("%-36s %10.4f ms  (p10 %.4f, p90 %.4f)  %7.0f GB/s  %5.3f of copy  max rel err %.2g\n",
                  e->name().c_str(), r.timing.median_ms, r.timing.p10_ms, r.timing.p90_ms, r.bandwidth_gbs,
                  r.fraction_of_copy, r.validation.max_rel_error);
    } else {
      all_passed = false;
      std::printf("%-36s %s (not timed)\n", e->name().c_str(), r.validation.summary().c_str());
    }
    records.push_back(r);
  }
  if (!o.json_path.empty()) write_json_atomic(o.json_path, records);
  return all_passed ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_run: %s\n", e.what());
    return 2;
  }
}
