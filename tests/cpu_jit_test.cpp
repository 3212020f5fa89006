// Strategies 06 and 07 without a GPU: NVRTC and nvJitLink compile and link on any machine, so
// every built-in op is compiled to a CUBIN here, the map kernels they make are run on the host as
// PTX (tests/ptx_machine.hpp) against the tests' own evaluator, bad op sources are shown to fail
// cleanly, and the cache is put through its faults. Loading and running the kernels is in the GPU
// tests.
#include "common/jit_cache.hpp"
#include "common/skeletons/map.cuh"
#include "strategies/suite/expression_jit.hpp"
#include "strategies/suite/jit_kernels.hpp"
#include "strategies/suite/user_op.hpp"

#include "expression_oracle.hpp"
#include "ptx_machine.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace cdl::jit {
namespace {

constexpr int arch = 90;  // Hopper, the architecture the project is measured on

// A CUBIN holds what a launch needs: an ELF for the CUDA machine whose symbols name every kernel
// the compile says it made (a buffer of any bytes would pass a test of its size).
void expect_cubin_of_its_kernels(const module_image& m, const std::string& what, bool named = true) {
  const std::string bytes(m.code.begin(), m.code.end());
  ASSERT_GE(bytes.size(), 64u) << what;
  EXPECT_EQ(bytes.substr(0, 4), std::string("\x7f"
                                            "ELF"))
      << what;
  std::uint16_t machine = 0;
  std::memcpy(&machine, bytes.data() + 18, sizeof machine);  // e_machine
  EXPECT_EQ(machine, 190) << what << ": not an ELF for the CUDA machine (EM_CUDA)";
  EXPECT_EQ(m.kernel_names.empty(), !named) << what;
  for (const auto& [expression, mangled] : m.kernel_names)
    EXPECT_NE(bytes.find(mangled + '\0'), std::string::npos) << what << ": no symbol for " << expression;
}

struct op_case {
  workload w;
  dtype t;
  op_text op;
};
void PrintTo(const op_case& c, std::ostream* os) {
  *os << to_string(c.w) << "/" << c.op.name << "/" << cdl::to_string(c.t);
}

std::vector<op_case> builtin_cases() {
  std::vector<op_case> v;
  for (dtype t : {dtype::f32, dtype::f64}) {
    for (std::size_t i = 0; i < map_op_catalogue.size(); ++i)
      v.push_back({workload::map, t, builtin_op(map_op(i))});
    for (std::size_t i = 0; i < zip_op_catalogue.size(); ++i)
      v.push_back({workload::zip, t, builtin_op(zip_op(i))});
    for (std::size_t i = 0; i < point_op_catalogue.size(); ++i)
      v.push_back({workload::points, t, builtin_op(point_op(i))});
    for (std::size_t i = 0; i < semiring_catalogue.size(); ++i)
      v.push_back({workload::matmul, t, builtin_op(semiring(i))});
  }
  for (std::size_t i = 0; i < image_op_catalogue.size(); ++i)
    v.push_back({workload::image, dtype::f32, builtin_op(image_op(i))});
  v.push_back({workload::tasks, dtype::f32, builtin_task_ops()});
  return v;
}

class JitBuiltinOp : public ::testing::TestWithParam<op_case> {};

// What the map kernels of a module of 06, 07 or 08 compute: each one's PTX run on the host for
// thread 0 of a block (one element in the scalar form, a vector's in the vec form) over 8 elements
// at k = 3, each held to the tests' own evaluator of the op's text: what disagreed, and how many
// kernels ran and values were compared.
struct map_check {
  std::vector<std::string> missed;
  int kernels = 0, compared = 0;
};
map_check check_map_kernels(const module_image& ptx, dtype t, std::string_view text) {
  const std::string code(ptx.code.begin(), ptx.code.end());
  const std::vector<double> xs = {-1.5, -0.625, 0.25, 0.75, 1.0, 1.75, 2.5, 3.0};
  constexpr int k = 3;
  map_check out;
  for (const auto& [expression, kernel] : ptx.kernel_names) {
    // 06's and 07's map_scalar_kernel<...> and map_vec_kernel<...>, 08's map_scalar and map_vec
    const bool scalar = expression.find("map_scalar") != std::string::npos;
    if (!scalar && expression.find("map_vec") == std::string::npos) continue;
    const std::vector<double> got = test::map_outputs(code, kernel, t == dtype::f64, !scalar, xs, k);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const oracle::value want = oracle::mapped(text, xs[i], k, map_delta);
      if (want.fragile) continue;
      ++out.compared;
      if (!oracle::agrees(got[i], want, t == dtype::f32 ? 0x1p-23 : 0x1p-52, 64))
        out.missed.push_back(expression + " at x = " + std::to_string(xs[i]) + ": " + std::to_string(got[i]) +
                             ", its text gives " + std::to_string(want.v));
    }
    ++out.kernels;
  }
  return out;
}

TEST(JitMapKernels, 06sAnd07sComputeEachOpOfTheCatalogueRunOnTheHost) {
  for (const op_info& o : map_op_catalogue)
    for (const dtype t : {dtype::f32, dtype::f64}) {
      const op_text op = builtin_op(map_op(&o - map_op_catalogue.data()));
      const std::string what = std::string(o.name) + " (" + std::string(to_string(t)) + ")";
      const compiled kernels = compile(lto_skeleton_program(workload::map, t), arch, code_kind::ltoir);
      const compiled lto_op = compile(lto_op_program(workload::map, t, op), arch, code_kind::ltoir);
      const compiled* parts[] = {&kernels, &lto_op};
      for (const auto& [route, ptx] :
           {std::pair{"06", compile(whole_program(workload::map, t, op), arch, code_kind::ptx).image},
            {"07", link(parts, arch, {"-ptx"}).image}}) {
        const map_check c = check_map_kernels(ptx, t, o.source);
        for (const std::string& miss : c.missed) ADD_FAILURE() << route << " " << what << ": " << miss;
        EXPECT_EQ(c.kernels, 2) << route << " " << what << ": its scalar and vec map kernels";
      }
    }
}

// 08's map kernels too: libNVVM's PTX of each catalogue op and of texts at the operators'
// boundaries, scalar and vec, in both types.
TEST(JitMapKernels, 08sComputeEachOpRunOnTheHost) {
  std::vector<std::string> texts;
  for (const op_info& o : map_op_catalogue) texts.emplace_back(o.source);
  for (const char* text :
       {"-x + 1 - 2 * x / 4", "2 <= x ? min(x, 3) : max(-x, 0.5)", "t = sin(x); t * t - x"})
    texts.emplace_back(text);
  int compared = 0;
  for (const std::string& text : texts)
    for (const dtype t : {dtype::f32, dtype::f64})
      for (const map_form form : {map_form::scalar, map_form::vec}) {
        const module_image ptx =
            compile_nvvm(expression_jit::map_module(expr::parse(text), t, form, "op"), arch).image;
        const map_check c = check_map_kernels(ptx, t, text);
        for (const std::string& miss : c.missed)
          ADD_FAILURE() << "08 " << text << " (" << to_string(t) << "): " << miss;
        EXPECT_EQ(c.kernels, 1) << "08 " << text << ": a module per form";
        compared += c.compared;
      }
  EXPECT_GE(compared, 56);  // of 64: 8 texts, each 1 + 4 values in float32, 1 + 2 in float64
}

// The check can fail: a kernel of one op is not taken for another's.
TEST(JitMapKernels, AKernelOfOneOpIsNotTakenForAnothers) {
  const op_text square = builtin_op(map_op::square);
  const module_image ptx =
      compile(whole_program(workload::map, dtype::f64, square), arch, code_kind::ptx).image;
  EXPECT_EQ(check_map_kernels(ptx, dtype::f64, "x * x").missed.size(), 0u);
  // every value it computed: the scalar kernel's one and the vec kernel's vector of two doubles
  EXPECT_EQ(check_map_kernels(ptx, dtype::f64, "x * x + 1e-9").missed.size(), 3u);
}

TEST_P(JitBuiltinOp, CompilesToCubinThrough06) {
  const op_case& c = GetParam();
  const program p = whole_program(c.w, c.t, c.op);
  const compiled out = compile(p, arch, code_kind::cubin);
  expect_cubin_of_its_kernels(out.image, c.op.name);
  ASSERT_EQ(out.image.kernel_names.size(), p.name_expressions.size());
  for (const auto& [expression, mangled] : out.image.kernel_names)
    EXPECT_EQ(mangled.rfind("_Z", 0), 0u) << expression;
}

TEST_P(JitBuiltinOp, LinksToCubinThrough07) {
  const op_case& c = GetParam();
  const compiled kernels = compile(lto_skeleton_program(c.w, c.t), arch, code_kind::ltoir);
  const compiled op = compile(lto_op_program(c.w, c.t, c.op), arch, code_kind::ltoir);
  const compiled* parts[] = {&kernels, &op};
  const linked out = link(parts, arch);
  expect_cubin_of_its_kernels(out.image, c.op.name);
  EXPECT_EQ(out.image.kernel_names, kernels.image.kernel_names);
}

// 07's variant `preoptimised`: the kernels' LTO-IR written after the optimiser has run, linked
// with an op's as it is. One op of each workload: the option changes the kernels, not the ops.
TEST(JitPreoptimised, KernelsLinkInEveryWorkload) {
  std::set<workload> done;
  for (const op_case& c : builtin_cases()) {
    if (c.t != dtype::f32 || !done.insert(c.w).second) continue;
    program k = lto_skeleton_program(c.w, c.t);
    k.options.push_back(preoptimise_option);
    const compiled kernels = compile(k, arch, code_kind::ltoir);
    const compiled op = compile(lto_op_program(c.w, c.t, c.op), arch, code_kind::ltoir);
    const compiled* parts[] = {&kernels, &op};
    expect_cubin_of_its_kernels(link(parts, arch).image, std::string(to_string(c.w)));
  }
  EXPECT_EQ(done.size(), 6u);
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, JitBuiltinOp, ::testing::ValuesIn(builtin_cases()),
                         [](const auto& info) {
                           return std::string(to_string(info.param.w)) + "_" + info.param.op.name + "_" +
                                  std::string(cdl::to_string(info.param.t));
                         });

// A bad op source, and what its error must say.
struct bad_op {
  std::string label, source, expected;
};
void PrintTo(const bad_op& b, std::ostream* os) { *os << b.label; }

std::vector<bad_op> bad_ops() {
  return {
      {"empty", "", "empty"},
      {"blank", " \n\t ", "empty"},
      {"syntax_error", "x * * + 1", "user(1): error"},
      {"unknown_name", "x * frobnicate(x)", "identifier \"frobnicate\" is undefined"},
      {"wrong_type", "\"a string\"", "return value type does not match"},
      {"error_on_line_3", "T y = x;\ny = y * 2;\nreturn undefined_thing;", "user(3): error"},
      {"missing_semicolon", "return x * x", "expected a \";\""},
      {"unbalanced_open_brace", "{ return x;", "never closed"},
      {"unbalanced_paren", "(x + 1", "never closed"},
      {"mismatched_brackets", "(x + 1]", "does not match"},
      {"closes_the_function", "x; } __global__ void evil() { *(int*)0 = 1;", "closes nothing"},
      {"closes_with_paren", "x); } __global__ void evil() { (x", "closes nothing"},
      {"preprocessor", "#include </etc/passwd>\nx", "preprocessor"},
      {"hidden_directive", "x\n#define T int", "preprocessor"},
      {"too_long", std::string(max_op_source_bytes + 1, ' ') + "x", "limit"},
      {"nul_byte", std::string("x\0 + 1", 6), "NUL"},
      {"unterminated_string", "x + \"abc", "unterminated literal"},
      {"unterminated_comment", "x /* never ends", "unterminated comment"},
      {"other_workloads_name", "x * y", "identifier \"y\" is undefined"},
  };
}

class JitBadOp : public ::testing::TestWithParam<bad_op> {};

TEST_P(JitBadOp, GivesAClearErrorNotACrash) {
  const op_text op{"user", GetParam().source};
  for (auto make : {+[](const op_text& o) { return whole_program(workload::map, dtype::f32, o); },
                    +[](const op_text& o) { return lto_op_program(workload::map, dtype::f32, o); }}) {
    try {
      const program p = make(op);
      compile(p, arch, p.name_expressions.empty() ? code_kind::ltoir : code_kind::cubin);
      FAIL() << "compiled: " << op.source;
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find(GetParam().expected), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Malformed, JitBadOp, ::testing::ValuesIn(bad_ops()),
                         [](const auto& info) { return info.param.label; });

TEST(JitCompile, CompilerErrorCarriesTheLogWithTheUsersLine) {
  try {
    compile(whole_program(workload::map, dtype::f32, {"user", "x +\n  nope(x)"}), arch, code_kind::cubin);
    FAIL();
  } catch (const compile_error& e) {
    EXPECT_NE(e.log().find("user(2): error"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("nope(x)"), std::string::npos) << "the log quotes the line: " << e.log();
  }
}

// NVRTC's --time table, as NVRTC writes it: the phases the JIT stages record (jit/phases/).
TEST(JitCompile, NvrtcsTimeTableIsReadPhaseByPhase) {
  const std::filesystem::path table =
      std::filesystem::temp_directory_path() / ("cdl_test_time_" + std::to_string(::getpid()) + ".csv");
  const cdl::jit::program p = cdl::jit::one_line_program(cdl::jit::never_seen_op());
  cdl::jit::compile(p, 90, cdl::jit::code_kind::cubin, {"--time=" + table.string()});
  const std::vector<cdl::jit::phase> phases = cdl::jit::read_nvrtc_time(table.string());
  std::vector<std::string> names;
  for (const cdl::jit::phase& ph : phases) {
    names.push_back(ph.name);
    EXPECT_GE(ph.ms, 0) << ph.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"CUDA C++ Frontend", "NVVM Optimizer", "PTX Translation"}));

  {  // a table that is not NVRTC's is refused with the file named, not read as zeros
    std::ofstream out(table);
    out << "File name, phase name, metric, unit\nk.cu, CUDA C++ Frontend, seven, ms\n";
  }
  EXPECT_THROW(cdl::jit::read_nvrtc_time(table.string()), cdl::error);
  std::filesystem::remove(table);
  EXPECT_THROW(cdl::jit::read_nvrtc_time(table.string()), cdl::error);
}

TEST(JitCompile, AFunctionBodyIsAcceptedAsWellAsAnExpression) {
  const op_text body{"body", "const T y = x * x;\nreturn y + T(2) * x + T(1);"};
  expect_cubin_of_its_kernels(
      compile(whole_program(workload::map, dtype::f64, body), arch, code_kind::cubin).image, body.name);
}

// nvJitLink's -time report, as nvJitLink writes it: the steps jit/phases/07_link records.
TEST(JitLink, NvJitLinksTimeReportIsReadStepByStep) {
  const compiled kernels = compile(lto_skeleton_program(workload::map, dtype::f32, int(cdl::map_form::vec)),
                                   arch, code_kind::ltoir);
  const compiled op =
      compile(lto_op_program(workload::map, dtype::f32, never_seen_op()), arch, code_kind::ltoir);
  const compiled* parts[] = {&kernels, &op};
  const std::string report = link(parts, arch, {"-time"}).info;
  std::map<std::string, double> ms;
  for (const phase& s : read_nvjitlink_time(report)) ms[s.name] = s.ms;
  ASSERT_TRUE(ms.count("time to create PTX") && ms.count("time to finish")) << report;
  EXPECT_GT(ms["time to create PTX"], 0) << "libNVVM optimised the whole program";
  EXPECT_GT(ms["time to finish"], 0) << "ptxas assembled it";

  // Without -time there is no report, and a report without its number is refused: neither reads as zeros.
  EXPECT_THROW(read_nvjitlink_time(link(parts, arch).info), cdl::error);
  EXPECT_THROW(read_nvjitlink_time("nvJitLinkComplete time to create PTX: soon\n"), cdl::error);
}

TEST(JitLink, AnUndefinedOpIsALinkErrorWithTheLog) {
  const compiled kernels = compile(lto_skeleton_program(workload::map, dtype::f32), arch, code_kind::ltoir);
  const compiled* parts[] = {&kernels};
  try {
    link(parts, arch);
    FAIL() << "linked kernels whose op is missing";
  } catch (const link_error& e) {
    EXPECT_NE(e.log().find("lto_entry"), std::string::npos) << e.log();
  }
}

TEST(HostOp, CompilesTheSameTextForTheHost) {
  const host_op square_plus({"user", "x * x + 2.0f * x + 1.0f"});
  EXPECT_DOUBLE_EQ(square_plus.function()(3.0), 16.0);
  const host_op body({"user", "const T s = sin(x);\nreturn s * s;"});
  EXPECT_DOUBLE_EQ(body.function()(0.5), std::sin(0.5) * std::sin(0.5))
      << "T is double: the reference is float64";
}

// The op 06 and 07 compile (the definition every program they make holds, jit_kernels.cpp's
// define_op) computes the op: built for the host as it is pasted into their programs, and held to
// the tests' own evaluator of the language (expression_oracle.hpp), for the catalogue and for the
// operators at their boundaries.
TEST(HostOp, TheDefinitionTheJitCompilesComputesTheOp) {
  // each op as the JIT compiles it, and its text in the language: the catalogue's C++ is both; a
  // user's program reaches 06 and 07 as its C++ form (expression.hpp's to_cpp)
  std::vector<std::pair<op_text, std::string>> ops;
  for (const op_info& o : map_op_catalogue)
    ops.emplace_back(builtin_op(map_op(&o - map_op_catalogue.data())), std::string(o.source));
  for (const char* text :
       {"-x + 1 - 2 * x / 4", "2 <= x ? min(x, 3) : max(-x, 0.5)", "t = sin(x); t * t - x"})
    ops.emplace_back(op_text{"user", expr::to_cpp(expr::parse(text))}, text);
  for (const auto& [op, text] : ops) {
    const program whole = whole_program(workload::map, dtype::f32, op),
                  lto = lto_op_program(workload::map, dtype::f32, op);
    EXPECT_NE(whole.source.find(op.source), std::string::npos) << op.name;
    EXPECT_NE(lto.source.find(op.source), std::string::npos) << op.name;
    const host_op built(op);
    for (const double x : {-2.0, -0.4, 0.3, 0.75, 1.9}) {
      const oracle::value want = oracle::at(text, x, oracle::double_edge);
      if (!want.fragile) {
        EXPECT_TRUE(oracle::agrees(built.function()(x), want, 0x1p-52, 16)) << text << " at x = " << x;
      }
    }
  }
}

TEST(HostOp, ACompilerErrorIsReportedWithTheLog) {
  try {
    host_op bad({"user", "x * frobnicate(x)"});
    FAIL();
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("frobnicate"), std::string::npos) << e.what();
  }
}

// The cache, on a private temporary directory.
class JitCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cdl-jit-cache-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(dir_, ignored);
  }
  cache make_cache() {
    return cache({dir_, [this](const std::string& m) { warnings_ += m + "\n"; }});
  }
  static module_image image(char fill, std::size_t bytes = 1000) {
    return {std::vector<char>(bytes, fill), {{"&kernel", "_Z6kernelv"}}};
  }
  // Damages the stored entry of "key", then checks a new cache reports, discards and rebuilds it.
  template <class Damage>
  void expect_rebuilt(Damage damage, const std::string& why) {
    const std::filesystem::path path = stored("key");
    damage(path);
    cache c = make_cache();
    int builds = 0;
    const module_image got = c.get("key", [&] {
      ++builds;
      return image('B');
    });
    EXPECT_EQ(builds, 1);
    EXPECT_EQ(got.code, image('B').code);
    EXPECT_EQ(c.stats().discarded, 1);
    EXPECT_NE(warnings_.find(why), std::string::npos) << warnings_;
    EXPECT_EQ(c.read_disk("key")->code, image('B').code) << "the rebuilt entry replaced the bad one";
  }
  // Stores image('A') under `key` and returns the entry's path.
  std::filesystem::path stored(const std::string& key) {
    cache c = make_cache();
    c.get(key, [] { return image('A'); });
    return c.entry_path(key);
  }

  std::filesystem::path dir_;
  std::string warnings_;
};

TEST_F(JitCache, MissThenMemoryHitThenDiskHitInANewCache) {
  int builds = 0;
  auto make = [&] {
    ++builds;
    return image('A');
  };
  cache first = make_cache();
  EXPECT_EQ(first.get("key", make).code, image('A').code);
  EXPECT_EQ(first.get("key", make).code, image('A').code);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(first.stats().misses, 1);
  EXPECT_EQ(first.stats().memory_hits, 1);

  cache second = make_cache();  // what a new process sees
  const module_image read = second.get("key", make);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(second.stats().disk_hits, 1);
  EXPECT_EQ(read.code, image('A').code);
  EXPECT_EQ(read.kernel_names, image('A').kernel_names);
  EXPECT_TRUE(warnings_.empty()) << warnings_;
}

TEST_F(JitCache, DirectoryIsCreatedPrivate) {
  stored("key");
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(JitCache, CorruptEntryIsReportedDiscardedAndRebuilt) {
  expect_rebuilt(
      [](const auto& p) {
        std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(std::streamoff(std::filesystem::file_size(p) / 2));
        f.put('\x5a');
      },
      "checksum");
}

TEST_F(JitCache, TruncatedEntryIsReportedDiscardedAndRebuilt) {
  expect_rebuilt([](const auto& p) { std::filesystem::resize_file(p, std::filesystem::file_size(p) / 2); },
                 "truncated");
}

TEST_F(JitCache, ForeignFileIsReportedDiscardedAndRebuilt) {
  expect_rebuilt([](const auto& p) { std::ofstream(p) << "not a cache entry"; }, "not a cache entry");
}

TEST_F(JitCache, EntryForAnotherKeyIsReportedDiscardedAndRebuilt) {
  const auto other = stored("other key");
  expect_rebuilt(
      [&](const auto& p) {
        std::filesystem::copy_file(other, p, std::filesystem::copy_options::overwrite_existing);
      },
      "another key");
}

TEST_F(JitCache, UncreatableDirectoryIsReportedAndTheCodeStillUsed) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "file") << "a file where a directory should be";
  cache c({dir_ / "file" / "jit", [this](const std::string& m) { warnings_ += m; }});
  EXPECT_EQ(c.get("key", [] { return image('A'); }).code, image('A').code);
  EXPECT_EQ(c.stats().write_failures, 1);
  EXPECT_NE(warnings_.find("cannot store"), std::string::npos) << warnings_;
}

// Runs f in a child process and returns its exit status (f returns the status).
template <class F>
int in_child(F f) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(f());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

TEST_F(JitCache, ReadOnlyDirectoryIsReportedAndTheCodeStillUsed) {
  std::filesystem::create_directories(dir_);
  ::chmod(dir_.c_str(), 0555);
  // Root may write anywhere: run the check as an unprivileged user (nobody) in that case.
  const int status = in_child([this] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 10;
    if (::access(dir_.c_str(), W_OK) == 0) return 11;  // the directory is writable after all
    std::string warnings;
    cache c({dir_, [&](const std::string& m) { warnings += m; }});
    if (c.get("key", [] { return image('A'); }).code != image('A').code) return 12;
    if (c.stats().write_failures != 1) return 13;
    if (warnings.find("cannot store") == std::string::npos) return 14;
    return 0;
  });
  EXPECT_EQ(status, 0)
      << "10: cannot drop privileges, 11: directory writable, 12: wrong code, 13: no failure "
         "counted, 14: no warning";
}

TEST_F(JitCache, TwoProcessesWritingTheSameEntryAtOnce) {
  const std::string key = "shared key";
  constexpr int writes = 100;
  constexpr std::size_t bytes = 256 * 1024;  // large enough that writes overlap
  auto writer = [&](char fill) {
    return [&, fill] {
      cache c({dir_, [](const std::string&) {}});
      for (int i = 0; i < writes; ++i) c.write_disk(key, image(fill, bytes));
      return c.stats().write_failures == 0 ? 0 : 1;
    };
  };
  std::filesystem::create_directories(dir_);
  // An entry before the writers start: from then on every read must find a whole one (the old
  // entry or a new one), never none, never a torn or corrupt file.
  cache({dir_, [](const std::string&) {}}).write_disk(key, image('C', bytes));
  std::vector<pid_t> children;
  for (char fill : {'A', 'B'}) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(writer(fill)());
    children.push_back(pid);
  }
  cache reader({dir_, [this](const std::string& m) { warnings_ += m; }});
  int reads = 0, whole = 0, running = 2;
  std::vector<int> status(children.size(), 0);
  while (running > 0 || reads < 100) {
    if (const auto got = reader.read_disk(key)) {
      ++whole;
      ASSERT_TRUE(got->code == image('A', bytes).code || got->code == image('B', bytes).code ||
                  got->code == image('C', bytes).code)
          << "a torn entry";
    }
    ++reads;
    for (std::size_t i = 0; i < children.size(); ++i)
      if (children[i] && ::waitpid(children[i], &status[i], WNOHANG) == children[i]) {
        children[i] = 0;
        --running;
      }
  }
  for (int st : status) EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "a writer failed";
  EXPECT_EQ(whole, reads) << "a read found no entry while one existed throughout";
  EXPECT_EQ(reader.stats().discarded, 0) << warnings_;
  const auto last = reader.read_disk(key);
  ASSERT_TRUE(last.has_value());
  EXPECT_TRUE(last->code == image('A', bytes).code || last->code == image('B', bytes).code)
      << "the writers' last entry is one of theirs";
  std::size_t leftovers = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) leftovers += e.path().extension() == ".tmp";
  EXPECT_EQ(leftovers, 0u) << "temporary files left behind";
}

TEST(JitCacheKey, DependsOnSourceArchitectureAndKind) {
  const program a = whole_program(workload::map, dtype::f32, builtin_op(map_op::square));
  const program b = whole_program(workload::map, dtype::f32, builtin_op(map_op::sine));
  EXPECT_NE(cache_key(a, 90, code_kind::cubin), cache_key(b, 90, code_kind::cubin));
  EXPECT_NE(cache_key(a, 90, code_kind::cubin), cache_key(a, 100, code_kind::cubin));
  EXPECT_NE(cache_key(a, 90, code_kind::cubin), cache_key(a, 90, code_kind::ltoir));
  EXPECT_NE(cache_key(a, 90, code_kind::cubin).find(nvrtc_version()), std::string::npos);
}

// The new_op timings must meet no cache: every op they compile is new text, new code and a new key.
TEST(JitNewOp, EveryOpIsNewTextAndANewCacheKeyAndCompiles) {
  std::set<std::string> sources, keys, one_line;
  for (int i = 0; i < 50; ++i) {
    const jit::op_text op = jit::never_seen_op();
    EXPECT_TRUE(sources.insert(op.source).second) << op.source << " came twice";
    EXPECT_TRUE(keys.insert(jit::cache_key(jit::whole_program(jit::workload::map, dtype::f32, op), 90,
                                           jit::code_kind::cubin))
                    .second);
    EXPECT_TRUE(one_line.insert(jit::one_line_program(op).source).second);
  }
  const jit::op_text op = jit::never_seen_op();
  expect_cubin_of_its_kernels(
      jit::compile(jit::whole_program(jit::workload::map, dtype::f32, op), 90, jit::code_kind::cubin).image,
      op.name);
  const jit::module_image one_line_cubin =
      jit::compile(jit::one_line_program(op), 90, jit::code_kind::cubin).image;
  expect_cubin_of_its_kernels(one_line_cubin,
                              op.name + " (one line: an extern \"C\" kernel, no name expression)", false);
  EXPECT_NE(std::string(one_line_cubin.code.begin(), one_line_cubin.code.end())
                .find(std::string("one_line") + '\0'),
            std::string::npos);
}

// A cache keyed by machine code (nvJitLink's, for PTX or LTO-IR input) must not answer either:
// two new ops, named alike, make different code. (One large constant would not: neighbouring
// counts round to the same float.)
TEST(JitNewOp, ConsecutiveNewOpsMakeDifferentMachineCode) {
  const jit::op_text a = jit::never_seen_op(), b = jit::never_seen_op();
  auto ptx = [](const jit::op_text& op) {
    const jit::compiled c = jit::compile_nvvm(
        expression_jit::map_module(expr::parse(op.source), dtype::f32, map_form::vec, "same"), 90);
    return std::string(c.image.code.begin(), c.image.code.end());
  };
  EXPECT_NE(ptx(a), ptx(b));
}

// The smallest LTO link (jit/link/one_line_kernel/new_op) meets no cache either: two new ops make
// different LTO-IR, and each links with the one-line kernel.
TEST(JitNewOp, OneLineLtoOpsAreNewCodeAndLink) {
  const jit::compiled kernel = jit::compile(jit::one_line_lto_kernel(), arch, jit::code_kind::ltoir);
  std::set<std::vector<char>> codes;
  for (int i = 0; i < 2; ++i) {
    const jit::compiled op =
        jit::compile(jit::one_line_lto_op(jit::never_seen_op()), arch, jit::code_kind::ltoir);
    EXPECT_TRUE(codes.insert(op.image.code).second) << "two new ops made the same LTO-IR";
    const jit::compiled* parts[] = {&kernel, &op};
    EXPECT_FALSE(jit::link(parts, arch).image.code.empty());
  }
}

TEST(JitCacheEnvironment, VariablesChooseTheDirectoryOrTurnTheDiskOff) {
  struct saved_environment {  // put back what the test changes
    std::vector<std::pair<std::string, std::optional<std::string>>> vars;
    saved_environment() {
      for (const char* v : {"CDL_JIT_CACHE_DIR", "CDL_JIT_DISK_CACHE", "XDG_CACHE_HOME"}) {
        const char* value = std::getenv(v);
        vars.emplace_back(v, value ? std::optional<std::string>(value) : std::nullopt);
      }
    }
    ~saved_environment() {
      for (const auto& [name, value] : vars)
        value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
    }
  } saved;
  ::setenv("CDL_JIT_CACHE_DIR", "/some/where", 1);
  ::unsetenv("CDL_JIT_DISK_CACHE");
  EXPECT_EQ(cache::from_environment().dir, std::filesystem::path("/some/where"));
  ::setenv("CDL_JIT_DISK_CACHE", "0", 1);
  EXPECT_FALSE(cache::from_environment().dir.has_value());
  ::unsetenv("CDL_JIT_DISK_CACHE");
  ::unsetenv("CDL_JIT_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(cache::from_environment().dir, std::filesystem::path("/xdg/cuda-dispatch-lab/jit"));
}

}  // namespace
}  // namespace cdl::jit
