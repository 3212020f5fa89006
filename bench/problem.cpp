// cdl_problem: writes one problem's inputs and float64 reference to a directory, for programs
// outside this build (the Python peers, bench/python) to validate against the same reference
// the C++ strategies meet. It needs no GPU: the workloads build their host side on the CPU.
//
//   cdl_problem DIR map op=quadratic type=f32 n=2^26 k=1
//   cdl_problem DIR zip op=add type=f32 n=2^24
//   cdl_problem DIR tasks layout=random distinct=32 n=2^24
//   cdl_problem DIR image op=box_blur 3840x2160 r=8
//
// The arguments are the problem as cdl_bench names it. DIR gets one NumPy .npy file per input
// (x.npy, y.npy, tasks.npy, in.npy), reference.npy (value and scale per element, as
// validation.hpp compares them) and problem.json: the result name, the tolerance, the bytes the
// kernel must move and the op's source text from ops.cuh, so a peer compiling CUDA C from Python
// uses the catalogue's own definition. Each file is written atomically, problem.json last: a
// directory with a problem.json is complete.
#include "common/cli.hpp"
#include "common/image_workload.hpp"
#include "common/inputs.hpp"
#include "common/map_workload.hpp"
#include "common/record.hpp"
#include "common/skeletons/map.cuh"
#include "common/tasks_workload.hpp"
#include "common/zip_workload.hpp"

#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace cdl;

// NumPy's .npy format, version 1.0: magic, header length, a Python dict literal padded so the
// data starts on a 64-byte boundary, then the elements in C order.
template <class T>
void write_npy(const std::filesystem::path& path, const std::string& descr, std::span<const T> data) {
  std::string header =
      "{'descr': " + descr + ", 'fortran_order': False, 'shape': (" + std::to_string(data.size()) + ",), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  write_atomic(path, [&](std::ostream& out) {
    const unsigned short length = static_cast<unsigned short>(header.size());
    out.write("\x93NUMPY\x01\x00", 8);
    out.put(char(length & 0xff)).put(char(length >> 8));
    out << header;
    out.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size_bytes()));
  });
}

template <class T>
std::string descr_of() {  // the element types of the inputs: float and double
  return sizeof(T) == 4 ? "'<f4'" : "'<f8'";
}

static_assert(sizeof(reference_value) == 16 && sizeof(task) == 12, "the .npy record layouts below");
const std::string reference_descr = "[('value', '<f8'), ('scale', '<f8')]";
const std::string task_descr = "[('op', '<i4'), ('p1', '<f4'), ('p2', '<f4')]";

void usage(FILE* out) {
  std::fprintf(out,
               "usage: cdl_problem DIR WORKLOAD KEY=VALUE...   (the problem as cdl_bench names it)\n"
               "  cdl_problem DIR map op=quadratic type=f32 n=2^26 k=1\n"
               "  cdl_problem DIR zip op=add type=f32 n=2^24\n"
               "  cdl_problem DIR tasks layout=random distinct=32 n=2^24\n"
               "  cdl_problem DIR image op=box_blur 3840x2160 r=8\n"
               "Writes DIR/*.npy (inputs, reference.npy) and DIR/problem.json; needs no GPU.\n");
}

// KEY=VALUE arguments; each must be used exactly once by the workload that reads them.
class fields {
 public:
  fields(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) {
      const std::string a = argv[i];
      const auto eq = a.find('=');
      if (eq != std::string::npos)
        values_[a.substr(0, eq)] = a.substr(eq + 1);
      else if (a.find('x') != std::string::npos)
        values_["size"] = a;  // image: WIDTHxHEIGHT
      else
        throw error("argument '" + a + "' is not KEY=VALUE");
    }
  }
  std::string take(const std::string& key) {
    const auto it = values_.find(key);
    if (it == values_.end()) throw error("missing " + key + "=...");
    std::string v = it->second;
    values_.erase(it);
    return v;
  }
  void finish() const {
    if (!values_.empty()) throw error("unknown argument '" + values_.begin()->first + "' for this workload");
  }

 private:
  std::map<std::string, std::string> values_;
};

task_layout parse_layout(const std::string& text) {
  for (task_layout l : {task_layout::uniform, task_layout::sorted, task_layout::warp, task_layout::random})
    if (to_string(l) == text) return l;
  throw error("unknown task layout '" + text + "' (valid: uniform, sorted, warp, random)");
}

int parse_int(const std::string& text) { return int(parse_size(text)); }
// An element count: at least 1 (a problem of none has nothing for a peer to compute or time).
std::size_t parse_elements(const std::string& text) {
  const std::size_t n = parse_size(text);
  if (n == 0) throw error("n=0: a problem needs at least one element");
  return n;
}

// What every problem.json says first: its name and fields (as cdl_bench names and labels the
// problem), its tolerance, the bytes a kernel must move and the arrays it reads.
template <class Problem, class Tolerance>
nlohmann::json about(const Problem& p, const Tolerance& tolerance, const std::vector<std::string>& inputs) {
  return {{"name", result_name(p.describe())},
          {"fields", problem_fields(p.describe())},
          {"tolerance", tolerance},
          {"min_bytes", p.min_bytes()},
          {"inputs", inputs}};
}

// Writes the arrays and returns what problem.json says about them.
nlohmann::json write_problem(const std::filesystem::path& dir, const std::string& workload, fields& f) {
  nlohmann::json j;
  if (workload == "map") {
    map_problem p{parse_map_op(f.take("op")), parse_dtype(f.take("type")), parse_elements(f.take("n")),
                  parse_int(f.take("k"))};
    f.finish();
    if (p.k < 1) throw error("map: k must be at least 1");
    visit_dtype(p.type, [&](auto t) {
      using T = decltype(t);
      const std::vector<T> x = uniform_inputs<T>(p.n, default_seed);
      write_npy<T>(dir / "x.npy", descr_of<T>(), x);
      write_npy<reference_value>(dir / "reference.npy", reference_descr,
                                 map_reference(p.op, std::span<const T>(x), p.k));
    });
    j = about(p, map_tolerance(p), {"x"});
    j.update({{"op", info(p.op).name},
              {"type", to_string(p.type)},
              {"n", p.n},
              {"k", p.k},
              {"source", info(p.op).source},
              {"map_delta", map_delta}});
  } else if (workload == "zip") {
    zip_problem p{parse_zip_op(f.take("op")), parse_dtype(f.take("type")), parse_elements(f.take("n"))};
    f.finish();
    visit_dtype(p.type, [&](auto t) {
      using T = decltype(t);
      const zip_host<T> h = make_zip_host<T>(p, default_seed);
      write_npy<T>(dir / "x.npy", descr_of<T>(), h.x);
      write_npy<T>(dir / "y.npy", descr_of<T>(), h.y);
      write_npy<reference_value>(dir / "reference.npy", reference_descr, h.reference);
    });
    j = about(p, zip_tolerance(p), {"x", "y"});
    j.update(
        {{"op", info(p.op).name}, {"type", to_string(p.type)}, {"n", p.n}, {"source", info(p.op).source}});
  } else if (workload == "tasks") {
    tasks_problem p{parse_layout(f.take("layout")), parse_int(f.take("distinct")),
                    parse_elements(f.take("n"))};
    f.finish();
    const tasks_host h = make_tasks_host(p, default_seed);
    write_npy<float>(dir / "x.npy", descr_of<float>(), h.x);
    write_npy<task>(dir / "tasks.npy", task_descr, h.tasks);
    write_npy<reference_value>(dir / "reference.npy", reference_descr, h.reference);
    j = about(p, tasks_tolerance(), {"x", "tasks"});
    j.update({{"type", "f32"},
              {"n", p.n},
              {"layout", to_string(p.layout)},
              {"distinct", p.distinct},
              {"task_op_count", task_op_count},
              {"source", task_op_source}});
  } else if (workload == "image") {
    const image_op op = parse_op<image_op>(f.take("op"), image_op_catalogue, "image");
    const std::string size = f.take("size");
    const auto x = size.find('x');
    image_problem p{op, parse_int(size.substr(0, x)), parse_int(size.substr(x + 1)), parse_int(f.take("r"))};
    f.finish();
    const image_host h = make_image_host(p, default_seed);
    write_npy<float>(dir / "in.npy", descr_of<float>(), h.in);
    write_npy<reference_value>(dir / "reference.npy", reference_descr, h.reference);
    j = about(p, image_tolerance(p), {"in"});
    j.update({{"op", info(op).name},
              {"type", "f32"},
              {"width", p.width},
              {"height", p.height},
              {"r", p.r},
              {"source", info(op).source}});
  } else {
    throw error("unknown workload '" + workload + "' (valid: map, zip, tasks, image)");
  }
  j["schema"] = "cdl-problem/1";
  j["workload"] = workload;
  j["seed"] = default_seed;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]) == "--help") {
    usage(argc < 3 ? stderr : stdout);
    return argc < 3 ? 2 : 0;
  }
  try {
    const std::filesystem::path dir = argv[1];
    fields f(argc, argv, 3);
    const nlohmann::json j = write_problem(dir, argv[2], f);
    write_json_atomic(dir / "problem.json", j);
    std::printf("cdl_problem: %s -> %s\n", j["name"].get<std::string>().c_str(), dir.c_str());
    return finish_output("cdl_problem", 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cdl_problem: %s\n", failure_message(e, "ask for a smaller one").c_str());
    return 2;
  }
}
