// cdl_run's modes that print what the program knows of an op and exit, none of them timing a
// kernel (bench/run.cpp says what the program does): --list, --ptx, --explain, --dump-source.
#include "bench/run.hpp"

#include "common/record.hpp"
#include "common/registry.hpp"

#include <cstdio>
#include <string>

namespace cdl::run_tool {

// --list: the registered strategies, the routes a user's op takes, and the ops.
int list() {
  for (const map_entry& e : get_registry().map) std::printf("%s\n", e.name().c_str());
  std::printf("routes of a user's op (--expr):");
  for (const op_route& r : get_registry().routes) std::printf(" %s", r.name().c_str());
  std::printf("\nops:");
  for (const op_info& op : map_op_catalogue) std::printf(" %s", std::string(op.name).c_str());
  std::printf("\n");
  return 0;
}

// --ptx: what the driver assembles for 08's vec kernel (`ptxas -arch=sm_XY FILE` makes its SASS).
int write_ptx(const options& o, const expr::program& program) {
  std::string why;
  const int arch = gpu_available(&why) ? jit::device_arch() : 90;
  const jit::module_image image = expression_jit::compile_uncached(
      expression_jit::map_module(program, o.problem.type, map_form::vec, "user"), arch);
  write_atomic(o.ptx_path, [&](std::ostream& out) {  // the text, without the driver's terminating NUL
    out.write(image.code.data(), std::streamsize(image.code.size() - 1));
  });
  std::printf("wrote %s: 08's vec kernel (map_vec) for sm_%d, as PTX\n", o.ptx_path.c_str(), arch);
  return 0;
}

// --explain: with no GPU, whether each route that can say more than its refusal takes the op and
// how (17: the image it is written into, form by form); exit status 0 where one takes it in some
// form, 1 where none does.
int explain(const options& o, const jit::op_text& language, const std::string& not_in) {
  if (!language.program) {
    std::printf("not in 08's language, which 16 and 17 read: %s\n", not_in.c_str());
    return 1;
  }
  bool taken = false;
  for (const op_route& r : get_registry().routes)
    if (r.explain) {
      const route_explanation e = r.explain(language, o.problem.type);
      std::printf("%s", e.text.c_str());
      taken = taken || e.taken;
    }
  return taken ? 0 : 1;
}

// --dump-source: 08's NVVM IR and the program 06 compiles.
int dump_source(const options& o, const std::optional<expr::program>& program, const std::string& not_in,
                const jit::op_text& cpp) {
  if (program)
    std::printf("%s\n",
                expression_jit::map_module(*program, o.problem.type, map_form::vec, "user").ir.c_str());
  else
    std::printf("(08_expression_jit: not in its language: %s)\n\n", not_in.c_str());
  std::printf("%s", jit::whole_program(jit::workload::map, o.problem.type, cpp).source.c_str());
  return 0;
}

}  // namespace cdl::run_tool
