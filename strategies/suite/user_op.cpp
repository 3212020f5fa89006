// user_op.hpp's host build of a user's op: the host compiler run on the op's text, the shared
// library it makes loaded with dlopen. Read the header first.
#include "user_op.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cdl {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh private directory for the generated files, removed when done.
struct scratch_dir {
  fs::path path;
  scratch_dir() {
    std::string pattern = (fs::temp_directory_path() / "cdl-user-op-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw error("cannot create a temporary directory in " + fs::temp_directory_path().string());
    path = pattern;
  }
  ~scratch_dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

}  // namespace

host_op::host_op(const jit::op_text& op) {
  const scratch_dir dir;
  for (const jit::source_file& f : jit::embedded_sources()) {
    fs::create_directories((dir.path / f.name).parent_path());
    std::ofstream(dir.path / f.name) << f.text;
  }
  std::ofstream(dir.path / "op.cpp")
      << "#define __device__\n#include \"common/ops.cuh\"\n"
      << jit::op_definition(jit::workload::map, op, "host_op")
      << "extern \"C\" double cdl_host_op(double x) { return cdl::ops::host_op{}(x); }\n";
  const char* cxx = std::getenv("CXX");
  const std::string compiler = cxx && *cxx ? cxx : "c++";
  const fs::path library = dir.path / "op.so";
  const std::string command = compiler + " -std=c++20 -O2 -shared -fPIC -I'" + dir.path.string() + "' '" +
                              (dir.path / "op.cpp").string() + "' -o '" + library.string() + "' > '" +
                              (dir.path / "log").string() + "' 2>&1";
  const int status = std::system(command.c_str());
  if (status != 0)
    throw error("the host compiler (" + compiler + ", set CXX to choose another) could not compile op '" +
                op.name + "' for its reference:\n" + read_file(dir.path / "log"));
  library_.reset(::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!library_) throw error(std::string("cannot load the host op: ") + ::dlerror());
  function_ = reinterpret_cast<double (*)(double)>(::dlsym(library_.get(), "cdl_host_op"));
  if (!function_) throw error(std::string("host op library has no cdl_host_op: ") + ::dlerror());
}

void host_op::unload::operator()(void* library) const { ::dlclose(library); }

}  // namespace cdl
