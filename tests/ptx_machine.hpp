// Runs one thread of a PTX kernel on the host, instruction by instruction: how a test with no GPU
// checks what compiled code computes (13's plugins: the PTX nvJitLink makes from their LTO-IR). It
// knows what nvcc writes for the map catalogue's ops on their common path: floating-point and
// integer arithmetic (with the carry chain), compares and selects, conversions, branches, the
// kernel's parameters, loads from the module's initialised .global and .const arrays, and a .local
// depot. An instruction it does not know throws when it is reached, naming it, so a test cannot pass
// on code it did not run; a call (nvcc's slow paths, such as the trigonometric reduction of huge
// arguments) is one of those. The approximate instructions (ex2.approx and the like) are computed
// exactly, within the hardware's documented error of them: a test's tolerance must allow that.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace cdl::test {

class ptx_machine {
 public:
  explicit ptx_machine(const std::string& ptx);
  ~ptx_machine();

  // Runs `entry` with its parameters in order (each a value's bits: a float's, a double's or an
  // address, or 0 for an object of no state), and returns the machine for reading what it stored.
  ptx_machine& run(const std::string& entry, const std::vector<std::uint64_t>& params);

  // An input in memory before the run (a kernel's array).
  template <class T>
  ptx_machine& put(std::uint64_t address, T value) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof value);
    poke(address, bits, sizeof value);
    return *this;
  }

  // What the run stored (a load from an address nothing wrote throws).
  template <class T>
  T load(std::uint64_t address) const {
    const std::uint64_t bits = peek(address, sizeof(T));
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }

  static constexpr std::uint64_t output = 0x30000000;  // where a test points its kernel's output
  static constexpr std::uint64_t input = 0x40000000;   // and its input
  static constexpr unsigned block = 256;               // the thread run: thread 0 of block 0 of one

 private:
  void poke(std::uint64_t address, std::uint64_t bits, int bytes);
  std::uint64_t peek(std::uint64_t address, int bytes) const;
  struct state;
  std::unique_ptr<state> state_;
};

// What a map kernel (x, y, n, k, and the op's object where it takes one) stores when its thread 0
// of a block runs over `xs` at k: one element's value in the scalar form, a 16-byte vector's in the
// vec form (xs holds at least that many), in float64 or float32 (given and returned as doubles).
std::vector<double> map_outputs(const std::string& ptx, const std::string& entry, bool f64, bool vec,
                                const std::vector<double>& xs, int k);

}  // namespace cdl::test
