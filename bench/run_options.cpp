// cdl_run's command line: its usage text, and the options read and checked before any CUDA call.
#include "bench/run.hpp"

#include "common/cli.hpp"
#include "strategies/suite/routes.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace cdl::run_tool {

void usage(FILE* out) {
  std::fprintf(
      out,
      "usage: cdl_run [--list] [--strategy NAME[,NAME...]|all] [--op OP] [--type f32|f64]\n"
      "               [--n N] [--k K] [--reps R] [--seed S] [--json FILE]\n"
      "       cdl_run --expr EXPRESSION [--ulps U] [--dump-source] [--ptx FILE] [--compile-times]\n"
      "       cdl_run --plugin FILE --op OP [--type f32|f64] ...\n"
      "       cdl_run --expr EXPRESSION --launches N [--n N] [--type f32|f64]\n"
      "       cdl_run (--expr EXPRESSION | --op OP) --steps FILE\n"
      "       cdl_run --expr EXPRESSION --explain [--type f32|f64]\n"
      "  N accepts 1e8 or 2^24 forms. --list prints the registered strategies and ops; --strategy\n"
      "  takes one of them, several separated by commas (one process, problem and reference), or all.\n"
      "  --expr compiles an op of x at run time and times it beside the built-in strategies running\n"
      "  --op. In 08's language (numbers, x, + - * /, comparisons, ?:, name = value; temporaries,\n"
      "  sin cos exp sqrt min max; every number of type T), e.g. 's = sin(x); s * s + 2 * x', it runs\n"
      "  through 06, 07 and 08, checked against the language's float64 interpreter. Other text is C++\n"
      "  (an expression in x of type T, or a body with `return`) for 06 and 07, checked against the\n"
      "  host compiler's build of it. Error allowed: U epsilons per evaluation (default 16).\n"
      "  --dump-source prints 08's NVVM IR and the program 06 compiles, and exits; --ptx FILE\n"
      "  writes 08's PTX, which the driver assembles as it loads it (for the SASS: ptxas\n"
      "  -arch=sm_XY FILE -o k.cubin, then cuobjdump -sass k.cubin), and exits.\n"
      "  --plugin loads FILE, a fatbin or CUBIN built as strategies/plugins/map_plugin.cu builds one\n"
      "  (nvcc -fatbin -DCDL_PLUGIN_OP=OP), and times its kernels beside the strategies, checked\n"
      "  against --op's reference: its op must be --op.\n"
      "  --launches N adds, for each route that ran --expr, its total for N launches (its first launch,\n"
      "  the compile in it, then N - 1 at its median) and names the cheapest; 10's tiers run in a new\n"
      "  process (cdl_run --tiers-stream, the same options), their launches timed whole up to the first\n"
      "  on the last tier, the rest at its median.\n"
      "  A strategy's vec row runs first and carries what the strategy loads on first use, as a new\n"
      "  process would (marked *); its scalar row reuses it. A run that will take over a minute says\n"
      "  about how long once its first row is done, and its progress row by row, on stderr.\n"
      "  --steps FILE writes 16's program for the op in 08's language (--expr, else --op's text) as\n"
      "  JSON, for a program that loads 16's kernels from plugins/cdl_interpreter.fatbin, and exits.\n"
      "  --explain says, with no GPU, whether 17 writes the op into machine code and how (its steps,\n"
      "  each form's image, checked on the host), or why not and which routes run it; exit status 0\n"
      "  where it takes the op in some form, 1 where it does not.\n");
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
      if (arg == "--list")
        o.list = true;
      else if (arg == "--strategy")
        o.strategy = value();
      else if (arg == "--op")
        o.problem.op = parse_map_op(value());
      else if (arg == "--type")
        o.problem.type = parse_dtype(value());
      else if (arg == "--n")
        o.problem.n = parse_size(value());
      else if (arg == "--k")
        o.problem.k = int(parse_size(value()));
      else if (arg == "--reps")
        o.repetitions = int(parse_size(value()));
      else if (arg == "--seed")
        o.seed = parse_size(value());
      else if (arg == "--json")
        o.json_path = value();
      else if (arg == "--expr") {
        o.expr = value();
        // An empty --expr is a mistake (a shell variable that was not set, say), not "no op".
        if (o.expr.find_first_not_of(" \t\r\n") == std::string::npos)
          throw error("the op is empty: give an expression in x, e.g. --expr 'x * x + 1.0f'");
      } else if (arg == "--ulps")
        o.expr_ulps = int(parse_size(value()));
      else if (arg == "--dump-source")
        o.dump_source = true;
      else if (arg == "--explain")
        o.explain = true;
      else if (arg == "--ptx")
        o.ptx_path = value();
      else if (arg == "--compile-times")
        o.compile_times = true;
      else if (arg == "--steps")
        o.steps_path = value();
      else if (arg == "--tiers-stream")
        o.tiers_stream = true;
      else if (arg == "--launches") {
        o.launches = (long long)parse_size(value());
        if (o.launches < 1) throw error("--launches must be at least 1");
      } else if (arg == "--plugin") {
        o.plugin_path = value();
        plugin::check_loadable(o.plugin_path);  // a file that is not one is refused before any CUDA call
      } else if (arg == "--help" || arg == "-h") {
        usage(stdout);
        std::exit(0);
      } else
        throw error("unknown option '" + arg + "'");
    } catch (const std::logic_error& e) {  // std::stoi/stod and parse_* errors
      throw error(arg + ": " + e.what());
    }
  }
  if (o.problem.k < 1) throw error("--k must be at least 1");
  if (o.problem.n == 0) throw error("--n 0: no element to compute, nothing to time; give at least 1");
  if (o.repetitions < 1) throw error("--reps must be at least 1");
  if (o.dump_source && o.expr.empty()) throw error("--dump-source needs --expr");
  if (o.explain && o.expr.empty()) throw error("--explain needs --expr (the op to explain)");
  if (!o.ptx_path.empty() && o.expr.empty()) throw error("--ptx needs --expr");
  if (o.compile_times && o.expr.empty()) throw error("--compile-times needs --expr");
  if (o.launches != 0 && o.expr.empty())
    throw error("--launches needs --expr (the op whose launches to count)");
  if (o.tiers_stream && o.launches == 0) throw error("--tiers-stream needs --expr and --launches");
  return o;
}

}  // namespace cdl::run_tool
