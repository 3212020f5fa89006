// What cdl_run's files share (bench/run.cpp says what the program does): its options, and the
// modes that live in files of their own (where a compile's time goes; a user's op through the
// tiers; 16's program written out).
#pragma once

#include "common/expression.hpp"
#include "common/inputs.hpp"
#include "common/map_workload.hpp"
#include "common/record.hpp"
#include "strategies/suite/routes.hpp"

#include <array>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace cdl::run_tool {

struct options {
  std::string strategy = "all";
  map_problem problem{map_op::quadratic, dtype::f32, std::size_t(1) << 24, 1};
  int repetitions = 30;
  std::uint64_t seed = default_seed;
  std::string json_path;
  bool list = false;
  std::string expr;  // a user's op, for strategies 06 and 07
  int expr_ulps = 16;
  bool dump_source = false;
  bool explain = false;        // --explain: what each route that says more than its refusal does with --expr
  std::string ptx_path;        // --ptx: write 08's PTX for --expr and exit
  bool compile_times = false;  // --compile-times: where a new op's compile time goes, then exit
  std::string plugin_path;     // --plugin: a map plugin file (strategy 13) implementing --op
  std::string steps_path;      // --steps: write 16's program for --expr (or --op) and exit
  long long launches = 0;      // --launches: each route's total for this many launches of --expr
  bool tiers_stream = false;   // --tiers-stream: the process --launches starts to measure 10's tiers
};

void usage(FILE* out);
options parse(int argc, char** argv);

// The modes that print and exit (run_print.cpp): --list; --ptx, 08's PTX for the op; --explain,
// whether each route that says more than its refusal takes the op (exit status 0, or 1 where none
// does); --dump-source, 08's NVVM IR and the program 06 compiles.
int list();
int write_ptx(const options& o, const expr::program& program);
int explain(const options& o, const jit::op_text& language, const std::string& not_in);
int dump_source(const options& o, const std::optional<expr::program>& program, const std::string& not_in,
                const jit::op_text& cpp);

// --compile-times: where a new op's compile time goes, route by route (run_compile_times.cpp).
int compile_times(const options& o, bool in_language, const jit::op_text& user);

// A user's op through strategy 10's three tiers, each tier's first launch validated (run_expr.cpp).
bool tiers_until_optimised(const map_fixture& f, const jit::op_text& op, map_form form);

// A fraction of copy is a bandwidth finding only where the working set is at least this many L2s
// (run.cpp's copy_finding; the report's PAST_L2, the same rule).
constexpr double past_l2 = 8;

// --launches' total for 10's tiers: o.launches launches of the op through them, the first
// `measured` timed whole in a new process (the others at the last tier's p10, median, p90), and
// the launch each tier first ran (-1: none).
struct tiers_total {
  long long measured = 0;
  double stream_ms = 0, low = 0, median = 0, high = 0;
  std::array<long long, 4> first{};
  bool passed = false;
  std::string summary;
  double began_ms = -1;              // the tiers' compile thread began its job, from the text
  std::array<double, 3> ready_ms{};  // 17's, 08's baseline and optimised kernels ready (-1: not)
};
tiers_total measure_tiers(const options& o);  // starts `cdl_run --tiers-stream ...` (run_expr.cpp)
int tiers_stream(const options& o, const map_fixture& f, const jit::op_text& op);  // that process

// --launches: each route that ran the user's op, its total for o.launches launches (its first, the
// compile in it, then the rest at its median), the tiers' where they were measured, and the
// cheapest (run_expr.cpp); first_use[i] says whether records[i]'s first launch was its route's
// first use in the process.
void print_launches(const options& o, const std::vector<run_record>& records,
                    const std::vector<bool>& first_use, const std::optional<tiers_total>& tiers);

// --steps: 16's program for the op, as JSON (run_expr.cpp).
int write_steps(const options& o, const std::optional<expr::program>& program, const std::string& not_in);

}  // namespace cdl::run_tool
