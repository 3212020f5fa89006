// Strategy 17's writing of an op's steps into an image's machine code: each value given a register
// of the image's region (a lane's, in a vec image), each step's instruction made from its operation's
// learnt form with its registers and constant and put in a place of the region, and every stall set
// so that an instruction issues only once what it reads is ready (by the latencies the stencils
// taught). An op that calls functions goes into a call image (calls.cpp). The result: the sections
// of the image's file it wrote, patched, and loadable() puts them into what loads.
#pragma once

#include "common/expression.hpp"
#include "strategies/suite/copy_and_patch/learn.hpp"
#include "strategies/suite/copy_and_patch/lower.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace cdl::copy_and_patch::patch {

// An image's file as the patch leaves it: the file itself, never written, and a copy of each
// section the patch writes (the kernel's instructions; a call file's slots' words), so that an op
// costs a copy of the few kilobytes it changes rather than of the whole file. Valid while the
// stencils whose file it is are.
class patched {
 public:
  patched() = default;
  explicit patched(const bytes& file) : file_(file.data()), size_(file.size()) {}
  // A copy of section s to write into (once: a section copied already is kept as it is).
  void copy(const section& s);
  // The byte at a file offset, in a copied section: the patch writes nowhere else.
  unsigned char& operator[](std::size_t offset);
  // The bytes from a file offset on: the copy's where a section was copied, else the file's.
  const unsigned char* data(std::size_t offset) const;
  const std::vector<std::pair<section, bytes>>& copies() const { return copies_; }
  bytes whole() const;  // the file with the copies in place: what loads where no own cubin is

 private:
  const unsigned char* file_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::pair<section, bytes>> copies_;
};
insn at(const patched& p, std::size_t offset);

struct compiled {
  patched image;
  std::string kernel;
  int steps = 0;
  std::vector<step> code;  // the steps on virtual registers (0 is x), and where the result is
  int result = 0;
  std::string vec_kernel;  // the vec image's, in the same bytes; empty where it was refused
  std::string vec_refused;
  // The op's last step is a product that the sum after the region computes (acc = a * b + acc, one
  // instruction, as nvcc fuses it), in every form: the region holds the steps before it.
  bool product_in_sum = false;
};
// The sum after the region with the op's last step, a product, in it: acc = a * b + acc (fmarr), or
// acc = a * constant + acc (fmac); `acc` the register summed into.
inline step sum_with(const step& product, int acc) {
  return product.op == stencil::mul ? step{stencil::fmac, acc, product.a, acc, product.constant}
                                    : step{stencil::fmarr, acc, product.a, product.b, 0, acc};
}

// The op in the smallest image whose region holds it and whose registers suffice for its live
// values (and in the smallest vec image that does, beside it), or in a call image where it calls
// functions; refused where none holds it, saying why.
compiled compile(const stencils& st, const cdl::expr::program& op);
compiled compile(const stencils& st, const std::string& text);
// What to load to run `kernel` (c.kernel or c.vec_kernel): its own cubin with c's patched sections
// copied in where the build made one (learn.hpp's own_cubin); else c's whole file, patched.
bytes loadable(const stencils& st, const compiled& c, const std::string& kernel);

// What write.cpp and calls.cpp share: an instruction put in a place, the clock that sets the stalls
// over a window, and the op that calls functions.
void put(const stencils& st, const step& s, unsigned char* slot);
// The issue cycles over a vec image's window: when each register's value was issued and by which
// operation (x's maker an operation of its own: the longest learnt latency and the margin), so
// that an instruction issues once what it reads is ready and what it overwrites has landed; a wait
// goes into the stall of the instruction before, which must hold it.
struct window_clock {
  static constexpr int maker = stencil::count;
  const stencils& st;
  int issued[256], producer[256], cycle = 0, last_issue = 0, longest = 0, least = 99;
  explicit window_clock(const stencils& s) : st(s) {
    std::fill(std::begin(issued), std::end(issued), -100);
    std::fill(std::begin(producer), std::end(producer), int(stencil::add));
    for (const auto& row : st.latency)
      for (int l : row) longest = std::max(longest, l), least = std::min(least, l);
  }
  int latency(int from, int to) const {
    return from == maker ? longest + st.latency_margin : st.latency[from][to];
  }
  int longest_from(int o) const {
    int m = 0;
    for (int to = 0; to < stencil::count; ++to) m = std::max(m, latency(o, to));
    return m;
  }
  int ready(int reg, int reader) const { return issued[reg] + latency(producer[reg], reader); }
  int done(int reg) const { return issued[reg] + longest_from(producer[reg]); }  // for any reader
  int landed(int reg) const { return done(reg) - least + 1; }  // a write issued then lands after it
  // The instruction at slot issues at t, or as soon as it can: the one before waits the difference.
  int issue(unsigned char* slot, int t) {
    clear_reuse(slot);
    if (t > cycle) {
      if (stall(slot - 16) + t - cycle > 15) throw refused("a wait longer than a stall field holds");
      set_stall(slot - 16, stall(slot - 16) + t - cycle);
    } else {
      t = cycle;
    }
    cycle = t + stall(slot), last_issue = t;
    return t;
  }
  void make_x(unsigned char* slot, insn i, int x) {  // j * delta + an element, into x
    i[dest_field] = (unsigned char)x;
    std::copy_n(slot + 13, 3, i.begin() + 13);  // the place's barriers: the first waits for j
    std::copy(i.begin(), i.end(), slot);
    issued[x] = issue(slot, landed(x)), producer[x] = maker;
  }
  void write(unsigned char* slot, const step& s) {
    put(st, s, slot);
    int t = cycle;
    for (int r : {s.a, s.b, s.c})
      if (r >= 0 && r != 255) t = std::max(t, ready(r, s.op));
    if (s.dest != 255) t = std::max(t, landed(s.dest));
    t = issue(slot, t);
    if (s.dest != 255) issued[s.dest] = t, producer[s.dest] = s.op;
  }
  void settle(unsigned char* last,
              int ready) {  // the window's last instruction: what follows reads at `ready`
    if (ready - last_issue > 15) throw refused("a wait longer than a stall field holds");
    set_stall(last, std::max(stall(last), ready - last_issue));
  }
};

compiled compile_calls(const stencils& st, const std::vector<step>& code, int result);

}  // namespace cdl::copy_and_patch::patch
