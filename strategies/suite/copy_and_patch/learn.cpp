// learn.hpp's learning from the stencils' cubins. Read the header first.
#include "strategies/suite/copy_and_patch/learn.hpp"

#include <algorithm>
#include <bitset>
#include <bit>
#include <cstring>
#include <iterator>
#include <set>

namespace cdl::copy_and_patch::patch {
namespace {

#define LEARN_CHECK(cond, ...) \
  if (!(cond)) throw failed("the stencils do not read as expected: " + std::string(__VA_ARGS__))

kernel_code find(const std::map<std::string, kernel_code>& ks, const std::string& name) {
  LEARN_CHECK(ks.count(name), name + " is not in the cubin");
  return ks.at(name);
}

int marker_of(const insn& i, bool& negated) {  // step s's marker as it appears, or -1
  const std::uint32_t imm = immediate(i), s = (imm & 0x7fffffffu) - stencil::marker_bits;
  negated = imm >> 31;
  return s < 4096 ? int(s) : -1;
}

// The register each of steps 0 to `steps` - 1's marker went to (for an operation with a second
// register, x + marker s: the first instruction with the marker), in one pass over the kernel; -1
// where a step has none.
std::vector<int> marked_registers(const bytes& cubin, const kernel_code& k, std::size_t steps) {
  std::vector<int> marked(steps, -1);
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const insn i = at(cubin, k.offset + 16 * n);
    if (const int s = marker_of(i, negated); s >= 0 && std::size_t(s) < steps && marked[std::size_t(s)] < 0)
      marked[std::size_t(s)] = i[dest_field];
  }
  return marked;
}
// Step s's, refused where it has no marker.
int marked_register(const std::vector<int>& marked, std::size_t s, const std::string& name) {
  LEARN_CHECK(s < marked.size() && marked[s] >= 0, name + ": no marker " + std::to_string(s));
  return marked[s];
}

// The register holding x + j * delta: what step 0 reads in field 3 (step 0 is x + marker 0 in an
// image and before an operation with a second register, op(x, marker 0) otherwise).
int x_register(const bytes& cubin, const kernel_code& k, const std::string& name) {
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const insn i = at(cubin, k.offset + 16 * n);
    if (marker_of(i, negated) == 0) return i[3];
  }
  throw failed("the stencils do not read as expected: " + name + ": no step 0");
}

// One chain's steps (P = 1), found from x: each step reads the one before, an operation with a
// constant in field 3 (fmar: in 3 or 8, a product's factors commuting) and found by its marker; one
// with a second register reads the one before and x + marker s (a select: in two of fields 3, 4 and
// 8; a fused multiply-add of three: in two, and x in the third); a mask reads it in field 3.
// `marked`: marked_registers() of the kernel. Returns their instruction numbers.
std::vector<std::size_t> trace(const bytes& cubin, const kernel_code& k, const std::string& name,
                               const std::vector<int>& ops, const std::vector<int>& marked,
                               const stencils* known) {
  std::vector<std::size_t> at_step;
  const int x = x_register(cubin, k, name);
  int current = x;
  std::size_t n = 0;
  for (std::size_t s = 0; s < ops.size(); ++s) {
    const int o = ops[s];
    const bool constant = stencil::has_constant(o), second = !constant && o != stencil::mask;
    const int w = second ? marked_register(marked, s, name) : -1;
    auto is_step = [&](const insn& i) {
      bool negated;
      if (constant)
        return marker_of(i, negated) == int(s) &&
               (i[3] == current || ((o == stencil::fmar || o == stencil::fnmar) && i[8] == current));
      if (o == stencil::mask)
        return i[3] == current && (!known || same_but_operands(i, known->forms[o].code, o));
      if (marker_of(i, negated) >= 0) return false;  // a marked add (byte 8 of most is 0: R0)
      const int fields = stencil::registers_read(o) == 3 ? 3 : 2, f[] = {3, 4, 8};
      const bool addend_x = o == stencil::fmarr || o == stencil::fnmarr;
      for (int p = 0; p < fields; ++p)
        for (int q = 0; q < fields; ++q)
          if (p != q && i[f[p]] == current && i[f[q]] == w && (!addend_x || i[f[3 - p - q]] == x))
            return true;
      return false;
    };
    for (;; ++n) {
      LEARN_CHECK(n < k.count, name + ": step " + std::to_string(s) + " not found");
      if (is_step(at(cubin, k.offset + 16 * n))) break;
    }
    const insn i = at(cubin, k.offset + 16 * n);
    if (known)
      LEARN_CHECK(same_but_operands(i, known->forms[ops[s]].code, ops[s]),
                  name + ": step " + std::to_string(s) + " is not " + stencil::names[ops[s]]);
    at_step.push_back(n);
    current = i[dest_field];
    ++n;
  }
  return at_step;
}

// An operation's form, from its stencil's chain: the instruction, and which field holds what.
form learn_form(const bytes& cubin, const std::map<std::string, kernel_code>& ks, int o) {
  const std::string name = std::string("cdl_op_") + stencil::names[o];
  const kernel_code k = find(ks, name);
  std::vector<int> ops(stencil::learn_steps, o);
  if (o == stencil::mask) ops[0] = stencil::add;  // its chain starts from x + marker 0
  if (stencil::merges(o, o))                      // every other step an add (stencil::merges)
    for (std::size_t s = 0; s < ops.size(); s += 2) ops[s] = stencil::add;
  const std::vector<int> marked = marked_registers(cubin, k, ops.size());
  const std::vector<std::size_t> steps = trace(cubin, k, name, ops, marked, nullptr);
  auto step = [&](std::size_t s) { return at(cubin, k.offset + 16 * steps[s]); };
  form f;
  f.code = step(1);
  if (stencil::has_constant(o)) {
    bool negated;
    marker_of(f.code, negated);
    f.negated = negated;
    if (o == stencil::fmac) f.b = 8;  // a * c + x: the addend's register, checked below
    // a * x + c (and its negation): the chain's value in one factor's field, x in the other's
    if (o == stencil::fmar || o == stencil::fnmar)
      f.a = f.code[8] == step(0)[dest_field] ? 8 : 3, f.b = 11 - f.a;
  } else if (stencil::registers_read(o) == 3) {
    // Fields 3, 4 and 8 hold step 0's value, x + marker 1 and a third register: for a select its
    // if-true, its if-false and the mask; for fmarr and fnmarr the two factors and the addend (x).
    const bool select = o == stencil::sel;
    int* const role[] = {select ? &f.b : &f.a, select ? &f.c : &f.b, select ? &f.a : &f.c};
    for (int field : {3, 4, 8}) {
      const int r = f.code[field];
      *role[r == step(0)[dest_field] ? 0 : r == marked_register(marked, 1, name) ? 1 : 2] = field;
    }
  } else if (o != stencil::mask) {  // step 1 reads step 0's value and x + marker 1
    f.b = f.code[3] == marked_register(marked, 1, name) ? 3 : 4, f.a = 7 - f.b;
  }
  const bool ordered = o == stencil::subr || o == stencil::ltr || o == stencil::ler || o == stencil::sel;
  for (std::size_t s = 1; s < steps.size(); ++s) {
    if (ops[s] != o) continue;  // an add between two steps ptxas might merge
    const insn i = step(s);
    LEARN_CHECK(same_but_operands(i, f.code, o), name + ": its steps are different instructions");
    bool negated;
    LEARN_CHECK(!stencil::has_constant(o) || (marker_of(i, negated), negated == f.negated),
                name + ": its constant's sign changes");
    // a - b keeps b in its field (a < b, a select its arms); where the operation commutes the
    // compiler may swap them
    LEARN_CHECK(!ordered || (i[o == stencil::sel ? f.c : f.b] == marked_register(marked, s, name) &&
                             (o != stencil::sel || i[f.b] == step(s - 1)[dest_field])),
                name + ": its operands' fields change");
    LEARN_CHECK((o != stencil::fmac && o != stencil::fmar && o != stencil::fnmar) ||
                    i[f.b] == x_register(cubin, k, name),
                name + ": " + (o == stencil::fmac ? "the addend" : "the second factor") + " is not x");
    LEARN_CHECK((o != stencil::fmarr && o != stencil::fnmarr) || i[f.c] == x_register(cubin, k, name),
                name + ": the addend is not x");
  }
  LEARN_CHECK(stencil::registers_read(o) < 3 || (f.b >= 0 && f.c >= 0 && f.a != f.b && f.a != f.c),
              name + ": its three registers are not in three fields");
  return f;
}

// Latencies: in the chain a, b, a, b, ... for every pair, each step waits for the one before, so
// the cycles the compiler leaves between them are what the first's result takes to reach the second.
void learn_latencies(stencils& st, const bytes& cubin, const std::map<std::string, kernel_code>& ks) {
  for (auto& row : st.latency) std::fill(std::begin(row), std::end(row), 0);
  for (int o = 0; o < stencil::count; ++o) {
    std::vector<int> ops;
    for (int s = 0; s < stencil::pair_steps; ++s) {
      const int p = s / 2 - 1;
      ops.push_back(s == 0                                           ? stencil::add
                    : s % 2                                          ? o
                    : stencil::merges(o, p) || stencil::merges(p, o) ? stencil::add
                                                                     : p);
    }
    const std::string name = std::string("cdl_pairs_") + stencil::names[o];
    const kernel_code k = find(ks, name);
    const std::vector<std::size_t> steps =
        trace(cubin, k, name, ops, marked_registers(cubin, k, ops.size()), &st);
    for (std::size_t s = 0; s + 1 < steps.size(); ++s) {
      int cycles = 0;
      for (std::size_t n = steps[s]; n < steps[s + 1]; ++n) cycles += stall(at(cubin, k.offset + 16 * n));
      int& l = st.latency[ops[s]][ops[s + 1]];
      l = l == 0 ? cycles : std::min(l, cycles);
    }
  }
  // A pair ptxas may merge is never two instructions in its code: its latency is the producer's
  // longest (stencil::merges).
  for (int o = 0; o < stencil::count; ++o)
    for (int p = 0; p < stencil::count; ++p)
      if (stencil::merges(o, p))
        st.latency[o][p] = *std::max_element(std::begin(st.latency[o]), std::end(st.latency[o]));
  int low = 99, high = 0;
  for (auto& row : st.latency)
    for (int l : row) {
      LEARN_CHECK(l > 0, "a pair of operations without a latency");
      low = std::min(low, l), high = std::max(high, l);
    }
  st.latency_margin = high - low;
}

// An image: its steps by their markers, in the order the compiler placed them; the registers they
// write are the pool. Nothing else between its first and last step may write one of them.
image learn_image(const bytes& cubin, const std::map<std::string, kernel_code>& ks, int steps) {
  image im;
  im.kernel = "cdl_image_" + std::to_string(steps);
  const kernel_code k = find(ks, im.kernel);
  im.x = x_register(cubin, k, im.kernel);
  std::vector<int> marker(k.count, -1), seen(steps, 0);
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const int s = marker_of(at(cubin, k.offset + 16 * n), negated);
    if (s >= 0 && s < steps && !negated) marker[n] = s, ++seen[s], im.steps.push_back(k.offset + 16 * n);
  }
  for (int s = 0; s < steps; ++s)
    LEARN_CHECK(seen[s] == 1, im.kernel + ": step " + std::to_string(s) + " is not one instruction");
  im.pool.push_back(im.x);
  for (std::size_t offset : im.steps) {
    const int r = at(cubin, offset)[dest_field];
    if (std::find(im.pool.begin(), im.pool.end(), r) == im.pool.end()) im.pool.push_back(r);
  }
  const std::size_t first = (im.steps.front() - k.offset) / 16, last = (im.steps.back() - k.offset) / 16;
  LEARN_CHECK(at(cubin, im.steps.front())[3] == im.x, im.kernel + ": its first step does not read x");
  LEARN_CHECK(marker[last] == steps - 1, im.kernel + ": its last step is not the last fold");
  for (std::size_t n = first; n <= last; ++n)
    if (marker[n] < 0)
      LEARN_CHECK(std::find(im.pool.begin(), im.pool.end(), at(cubin, k.offset + 16 * n)[dest_field]) ==
                      im.pool.end(),
                  im.kernel + ": instruction " + std::to_string(n) +
                      " among the steps writes one of their registers");
  im.result = at(cubin, im.steps.back())[dest_field];
  return im;
}

// The operations whose byte 2 never names a register: in the whole file, never above 7 (P0-P6 and
// PT, where a compare writes its predicate; those that write nothing). Where the learning looks for
// the instruction that writes a register, it passes over these.
using operations = std::bitset<4096>;  // a set of operations, by opcode (12 bits)
operations predicate_writers(const bytes& cubin, const std::map<std::string, kernel_code>& ks) {
  operations seen, registers;
  for (const auto& [name, k] : ks)
    for (std::size_t n = 0; n < k.count; ++n) {
      const insn i = at(cubin, k.offset + 16 * n);
      seen.set(std::size_t(opcode(i)));
      if (i[dest_field] > 7) registers.set(std::size_t(opcode(i)));
    }
  return seen & ~registers;
}

// Lane l's x maker (j * delta + its element, into the register its step 0 reads): the nearest
// instruction before step 0 that writes that register (a compare's byte 2 is a predicate: those of
// predicate_writers are passed over), checked to be lane 0's but for registers.
// Returns its offset; `makers[l]` is the instruction.
std::size_t find_maker(const bytes& cubin, const kernel_code& k, std::size_t step0,
                       insn (&makers)[stencil::lanes], int l, const std::string& kernel,
                       const operations& predicates) {
  const int x = at(cubin, k.offset + 16 * step0)[3];
  std::size_t n = step0;
  while (n > 0) {
    const insn i = at(cubin, k.offset + 16 * --n);
    if (i[dest_field] == x && !predicates.test(std::size_t(opcode(i)))) break;
  }
  const insn maker = at(cubin, k.offset + 16 * n), first = l == 0 ? maker : makers[0];
  LEARN_CHECK(immediate(maker) == std::bit_cast<std::uint32_t>(stencil::delta) &&
                  std::equal(maker.begin(), maker.begin() + 2, first.begin()) && maker[3] == first[3],
              kernel + ": lane " + std::to_string(l) + "'s x is not made by j * delta + x as lane 0's is");
  makers[l] = maker;
  return k.offset + 16 * n;
}

// The fields an instruction of nvcc's may read a register in: where it is one of the learnt
// operations (an FADD summing the lanes' results, say), that form's own; else every field that holds
// a register in some instruction (3, 4 and 8): a byte 8 that is no operand reads as R0.
std::vector<int> read_fields(const stencils& st, const insn& i) {
  const int o = operation_of(st, i);
  if (o == stencil::count) return {3, 4, 8};
  std::vector<int> fields{st.forms[o].a};
  for (int f : {st.forms[o].b, st.forms[o].c})
    if (f >= 0) fields.push_back(f);
  return fields;
}

// A region's sum (image::sum): the first instruction from `from` on, none of the region's places,
// that reads the result, where it is an add of the result and another register into that
// one; what the instructions before it write (all four registers a 128-bit result may take, but
// where byte 2 is a predicate) is kept from the factors. No sum past a branch.
void learn_sum(const stencils& st, image& im, const kernel_code& k, std::size_t from,
               const std::vector<std::size_t>& places, const operations& predicates) {
  for (std::size_t offset = from; offset < k.offset + 16 * k.count; offset += 16) {
    if (std::binary_search(places.begin(), places.end(), offset)) continue;
    const insn i = at(st.cubin, offset);
    if (opcode(i) == st.branch) return;
    const int o = operation_of(st, i);
    const std::vector<int> fields = read_fields(st, i);
    if (std::none_of(fields.begin(), fields.end(), [&](int f) { return i[f] == im.result; })) {
      const int width = predicates.test(std::size_t(opcode(i))) ? 0 : o < stencil::count ? 1 : 4;
      for (int r = i[dest_field]; r < std::min(i[dest_field] + width, 255); ++r)
        im.clobbered.set(std::size_t(r));
      continue;
    }
    const form& add = st.forms[stencil::addr];
    if (o == stencil::addr && (i[add.a] == im.result) != (i[add.b] == im.result)) {
      const int other = i[add.a] == im.result ? i[add.b] : i[add.a];
      if (i[dest_field] == other) im.sum = offset, im.acc = other;
    }
    return;
  }
}

// A vec image's window, its places and each lane's registers, found by the lanes' markers.
vec_image learn_vec_image(const stencils& st, const std::map<std::string, kernel_code>& ks, int steps,
                          const operations& predicates) {
  const bytes& cubin = st.cubin;
  constexpr int lanes = stencil::lanes;
  vec_image im;
  im.kernel = "cdl_image_vec_" + std::to_string(steps), im.steps = steps;
  const kernel_code k = find(ks, im.kernel);
  auto insn_at = [&](std::size_t n) { return at(cubin, k.offset + 16 * n); };
  std::vector<int> seen(std::size_t(lanes * steps), 0);
  std::size_t step0[lanes]{}, final_step[lanes]{}, makers[lanes]{};
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const int m = marker_of(insn_at(n), negated), l = m / stencil::lane_markers,
              s = m % stencil::lane_markers;
    if (m < 0 || negated || l >= lanes || s >= steps) continue;
    ++seen[std::size_t(l * steps + s)], im.places.push_back(k.offset + 16 * n);
    if (s == 0) step0[l] = n;
    if (s == steps - 1) final_step[l] = n;
  }
  for (int v : seen) LEARN_CHECK(v == 1, im.kernel + ": a lane's step is not one instruction");
  std::bitset<256> written, kept;  // the window's registers; those the lanes may not have
  int j = -1;
  int found = 0;  // a region of no steps: the makers of x, in their order, and the sums read x
  for (std::size_t n = 0; steps == 0 && n < k.count; ++n) {
    const insn i = insn_at(n);
    if (immediate(i) != std::bit_cast<std::uint32_t>(stencil::delta) ||
        (found > 0 && !(std::equal(i.begin(), i.begin() + 2, im.maker[0].begin()) && i[3] == im.maker[0][3])))
      continue;
    LEARN_CHECK(found < lanes, im.kernel + ": more than " + std::to_string(lanes) + " makers of x");
    im.maker[found] = i, makers[found] = k.offset + 16 * n, im.lane[found++].result = i[dest_field];
  }
  LEARN_CHECK(steps > 0 || found == lanes, im.kernel + ": not a maker of x for each lane");
  for (int l = 0; l < lanes; ++l) {
    if (steps > 0) {
      im.lane[l].x = insn_at(step0[l])[3];
      im.lane[l].result = insn_at(final_step[l])[dest_field];
      makers[l] = find_maker(cubin, k, step0[l], im.maker, l, im.kernel, predicates);
    }
    j = im.maker[l][3];
    kept.set(im.maker[l][8]);  // the element itself, live through the loop
  }
  for (std::size_t offset : im.places) written.set(cubin[offset + dest_field]);
  for (std::size_t offset : makers) written.set(cubin[offset + dest_field]);
  im.places.insert(im.places.end(), std::begin(makers), std::end(makers));
  std::sort(im.places.begin(), im.places.end());
  const std::size_t first = im.places.front();
  im.last = im.places.back();
  std::set<int> results;
  for (const image& lane : im.lane) results.insert(lane.result);
  LEARN_CHECK(results.size() == lanes, im.kernel + ": two lanes' results share a register");
  for (auto& d : im.deadline) d = im.last + 16;
  for (std::size_t n = 0; n < k.count; ++n) {
    const std::size_t offset = k.offset + 16 * n;
    if (std::binary_search(im.places.begin(), im.places.end(), offset)) continue;
    const insn i = insn_at(n);
    const bool inside = offset > first && offset < im.last;
    for (int field : read_fields(st, i)) {  // where a register the instruction reads may be
      for (int l = 0; l < lanes; ++l)
        if (inside && i[field] == im.lane[l].result) im.deadline[l] = std::min(im.deadline[l], offset);
      if (!results.count(i[field])) kept.set(i[field]);
      LEARN_CHECK(
          !inside || results.count(i[field]) || !written.test(i[field]),
          im.kernel + ": instruction " + std::to_string(n) + " in the window reads a step's register");
    }
    if (inside) kept.set(i[dest_field]);
  }
  // Each lane: its result's register, and every `lanes`-th of the rest; float(j) goes to the last
  // lane, whose x is made last (every maker reads it), as that lane's x.
  const int last_lane = lanes - 1;
  std::vector<int> rest;
  for (int r = 0; r < 256; ++r)
    if (written.test(std::size_t(r)) && !kept.test(std::size_t(r)) && !results.count(r) && r != j)
      rest.push_back(r);
  for (int l = 0; l < lanes; ++l) {
    image& lane = im.lane[l];
    lane.kernel = im.kernel, lane.pool.clear();
    if (l == last_lane && written.test(std::size_t(j)) && !kept.test(std::size_t(j)) && !results.count(j))
      lane.pool.push_back(j);  // (where j is the lane's result register, it joins as that, below)
    for (std::size_t r = std::size_t(l); r < rest.size(); r += lanes) lane.pool.push_back(rest[r]);
    // x in the result's register where the lane has no other (an op of one value: x * x)
    lane.x = lane.pool.empty() ? lane.result : lane.pool.front();
    lane.pool.push_back(lane.result);
    learn_sum(st, lane, k, first, im.places, predicates);
  }
  // A register below the highest the window writes that no instruction of the kernel names (a hole
  // in nvcc's allocation), nor a 64- or 128-bit operand could reach from an aligned register below
  // it that one names: nothing reads or writes it, so a lane may hold a value there. Each goes to
  // the lane with the fewest registers, before its result's.
  std::bitset<256> named;
  for (std::size_t n = 0; n < k.count; ++n)
    for (int field : {dest_field, 3, 4, 8}) named.set(insn_at(n)[field]);
  int highest = 255;
  while (highest > 0 && !written.test(std::size_t(highest))) --highest;
  for (int r = 0; r < highest; ++r) {
    bool reached = named.test(std::size_t(r));
    for (int base = std::max(r - 3, 0); base < r && !reached; ++base)
      reached = named.test(std::size_t(base)) && (base % 4 == 0 || (base % 2 == 0 && base == r - 1));
    if (reached) continue;
    image& fewest =
        *std::min_element(std::begin(im.lane), std::end(im.lane),
                          [](const image& a, const image& b) { return a.pool.size() < b.pool.size(); });
    fewest.pool.insert(fewest.pool.end() - 1, r);
    if (fewest.x == fewest.result && steps > 0) fewest.x = r;  // (with no steps, the sum reads x)
  }
  return im;
}

// What the call images' learning must know of control flow, learnt from the cubin: the branch's
// operation (each kernel ends on a branch to itself, after its last exit: the warp never runs on
// into whatever follows, then the padding, one instruction repeated), and the operations whose
// byte 2 names no register they write: the branch, and those just before a branch guarded by a
// predicate (the compares that make it).
// A kernel's instructions before its padding (one instruction repeated to the section's end): the
// last of them is its branch to itself.
std::size_t unpadded(const bytes& cubin, const kernel_code& k) {
  std::size_t n = k.count;
  const insn padding = at(cubin, k.offset + 16 * (n - 1));
  while (n > 1 && at(cubin, k.offset + 16 * (n - 1)) == padding) --n;
  return n;
}
struct control {
  int branch = -1;
  int exit = -1;  // the stencils' (stencils::exit)
  operations no_register;
  operations predicates;  // of those, the operations whose byte 2 is a predicate (predicate_writers)
};
control learn_control(const bytes& cubin, const std::map<std::string, kernel_code>& ks) {
  std::map<int, int> votes;
  for (const auto& [name, k] : ks)
    if (const std::size_t n = unpadded(cubin, k); n < k.count)
      ++votes[opcode(at(cubin, k.offset + 16 * (n - 1)))];
  LEARN_CHECK(!votes.empty(), "no kernel of the call images ends as expected");
  control c;
  c.branch = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) {
               return a.second < b.second;
             })->first;
  c.no_register.set(std::size_t(c.branch));
  for (const auto& [name, k] : ks)
    for (std::size_t n = 1; n < k.count; ++n) {
      const insn i = at(cubin, k.offset + 16 * n);
      if (opcode(i) == c.branch && (i[1] >> 4 & 7) != 7)  // guarded: @P0 BRA
        c.no_register.set(std::size_t(opcode(at(cubin, k.offset + 16 * (n - 1)))));
    }
  return c;
}

// A call image's windows, places and registers, found by the lanes' markers: lane l's step s
// (marker l * 256 + s) is segment s / S's (S = 2P - 1): a step of each of the P chains, then
// chains 1.. folded into chain 0, so that every step of a segment comes before its slot. Slot g
// reads each lane's chain 0 as segment g's last fold left it, and writes what segment g + 1's
// first step reads; window g ends at the slot's first branch after the last of the first, and
// window g + 1 starts at the first of the second (the places between are no-ops). A chain's
// register on both sides of every slot is the lane's to keep values in across a call.
call_image learn_call_image(const bytes& cubin, const std::map<std::string, kernel_code>& ks,
                            const control& flow, int calls, stencil::call_shape shape) {
  constexpr int lanes = stencil::lanes;
  const int P = shape.chains, S = shape.steps, total = S * (calls + 1);
  call_image im;
  im.kernel = "cdl_call_vec_" + std::to_string(calls) + "_" + std::to_string(P) + "_" + std::to_string(S);
  im.calls = calls;
  const kernel_code k = find(ks, im.kernel);
  auto insn_at = [&](std::size_t offset) { return at(cubin, offset); };
  std::vector<std::size_t> pos(std::size_t(lanes * total), 0);  // lane l's step s's offset
  std::vector<int> seen(pos.size(), 0);
  for (std::size_t n = 0; n < k.count; ++n) {
    bool negated;
    const std::size_t offset = k.offset + 16 * n;
    const int m = marker_of(insn_at(offset), negated), l = m / stencil::lane_markers,
              s = m % stencil::lane_markers;
    if (m < 0 || negated || l >= lanes || s >= total) continue;
    ++seen[std::size_t(l * total + s)], pos[std::size_t(l * total + s)] = offset, im.places.push_back(offset);
  }
  for (int v : seen) LEARN_CHECK(v == 1, im.kernel + ": a lane's step is not one instruction");
  auto at_step = [&](int l, int s) { return pos[std::size_t(l * total + s)]; };
  std::size_t makers[lanes]{};
  for (int l = 0; l < lanes; ++l) {
    auto& r = im.lane[l];
    makers[l] =
        find_maker(cubin, k, (at_step(l, 0) - k.offset) / 16, im.maker, l, im.kernel, flow.predicates);
    for (int g = 0; g < calls; ++g) {
      r.arg[g] = insn_at(at_step(l, g * S + S - 1))[dest_field];
      r.res[g] = insn_at(at_step(l, (g + 1) * S))[3];
      im.from[g + 1][l] = at_step(l, (g + 1) * S);
    }
    r.result = insn_at(at_step(l, total - 1))[dest_field];
  }
  // Where nvcc makes x again after a slot (for a step it moved past it) is a place too: only the
  // moved steps read it.
  for (std::size_t n = 0; n < k.count; ++n) {
    const std::size_t offset = k.offset + 16 * n;
    const insn i = insn_at(offset);
    if (offset > im.places.front() &&
        std::find(std::begin(makers), std::end(makers), offset) == std::end(makers) &&
        immediate(i) == std::bit_cast<std::uint32_t>(stencil::delta) &&
        std::equal(i.begin(), i.begin() + 2, im.maker[0].begin()))
      im.places.push_back(offset);
  }
  im.places.insert(im.places.end(), std::begin(makers), std::end(makers));
  std::sort(im.places.begin(), im.places.end());
  im.last = im.places.back();
  for (int l = 0; l < lanes; ++l)
    LEARN_CHECK(
        std::find(im.places.begin(), im.places.begin() + lanes, makers[l]) != im.places.begin() + lanes,
        im.kernel + ": x's makers are not its first places");
  // The windows, by address
  std::vector<std::size_t> first(std::size_t(calls) + 1, im.places.front()), last(first.size(), im.last);
  for (int g = 0; g < calls; ++g) {
    last[std::size_t(g)] = 0, first[std::size_t(g) + 1] = ~std::size_t(0);
    for (int l = 0; l < lanes; ++l) {
      last[std::size_t(g)] = std::max(last[std::size_t(g)], at_step(l, g * S + S - 1));
      first[std::size_t(g) + 1] = std::min(first[std::size_t(g) + 1], at_step(l, (g + 1) * S));
    }
    // the places after the last argument's up to the slot's first branch are the window's too
    std::size_t jump = last[std::size_t(g)];
    while (jump < first[std::size_t(g) + 1] && opcode(insn_at(jump)) != flow.branch) jump += 16;
    for (std::size_t offset : im.places)
      if (offset > last[std::size_t(g)] && offset < jump) last[std::size_t(g)] = offset;
    LEARN_CHECK(jump < first[std::size_t(g) + 1] && first[std::size_t(g)] <= last[std::size_t(g)],
                im.kernel + ": slot " + std::to_string(g) + " has no branch between its windows");
    im.window_last.push_back(last[std::size_t(g)]);
  }
  for (std::size_t offset : im.places) {
    int w = -1;
    for (std::size_t g = 0; g < first.size(); ++g)
      if (offset >= first[g] && offset <= last[g]) w = int(g);
    im.window.push_back(w);
  }
  // Chain c's register is kept across slot g where the chain's step before the slot writes it and
  // its step after reads it; it holds the chain's value from the one to the other (and to the
  // fold before the next slot), so nvcc keeps nothing else there meanwhile.
  std::map<int, std::pair<std::size_t, std::size_t>> chain_life;  // from its write to its last read
  const int normal = S - (P - 1);  // a segment's steps before its folds; chain c's fold is step S - P + c
  for (int l = 0; l < lanes; ++l) {
    auto& r = im.lane[l];
    for (int c = 1; c < P; ++c)
      for (int g = 0; g < calls; ++g) {
        const std::size_t before = at_step(l, g * S + c + (normal - 1 - c) / P * P),
                          after = at_step(l, (g + 1) * S + c);
        const int kept = insn_at(before)[dest_field];
        if (before > last[std::size_t(g)] || after < first[std::size_t(g) + 1] || insn_at(after)[3] != kept)
          continue;
        std::vector<int> chain_steps;  // chain c's in the segment after: its steps, then its fold
        for (int s = c; s < normal; s += P) chain_steps.push_back(s);
        chain_steps.push_back(S - P + c);
        std::size_t read = after;  // the chain's last read of it after the slot
        for (int s : chain_steps)
          if (insn_at(at_step(l, (g + 1) * S + s))[3] == kept)
            read = std::max(read, at_step(l, (g + 1) * S + s));
        r.across[g].push_back(kept);
        if (c == 1) r.divisor[g] = kept;
        auto& life = chain_life.try_emplace(kept, before, read).first->second;
        life = {std::min(life.first, before), std::max(life.second, read)};
      }
  }
  // Before and after, what the makers read (j, the elements) and what an instruction in a window
  // reads or writes may not be a lane's. Only the sums read the results.
  auto drop = [&](int reg) {
    for (auto& r : im.lane)
      for (auto& kept : r.across) std::erase(kept, reg);
  };
  for (const insn& m : im.maker) drop(m[3]), drop(m[8]);
  // A slot's code may call a subroutine (a square root's or a quotient's slow path), which lies after
  // the kernel's last exit: nvcc keeps its own values out of what it writes, and so must the patch.
  const std::size_t end = unpadded(cubin, k);  // its last, the branch to itself
  std::size_t after_exit = 0;
  for (std::size_t n = 0; n < end; ++n)
    if (opcode(insn_at(k.offset + 16 * n)) == flow.exit) after_exit = n + 1;
  LEARN_CHECK(after_exit > 0, im.kernel + ": no exit");
  for (std::size_t n = after_exit; n + 1 < end; ++n)
    if (const insn i = insn_at(k.offset + 16 * n); !flow.no_register.test(std::size_t(opcode(i))))
      drop(i[dest_field]);
  for (auto& d : im.deadline) d = im.last + 16;
  for (auto& w : im.until) std::fill(std::begin(w), std::end(w), im.last + 16);
  // each lane's and window's register it makes: nvcc's last write to it before its own step, and
  // nvcc's last read of it there
  std::vector<std::pair<std::size_t, std::size_t>> unread(std::size_t(lanes * (calls + 1)), {0, 0});
  std::vector<std::pair<int, int>> made_in[256];  // (lane, window) by the register its steps make there
  for (int l = 0; l < lanes; ++l)
    for (int w = 0; w <= calls; ++w)
      made_in[w < calls ? im.lane[l].arg[w] : im.lane[l].result].push_back({l, w});
  for (std::size_t n = 0; n < k.count; ++n) {
    const std::size_t offset = k.offset + 16 * n;
    if (std::binary_search(im.places.begin(), im.places.end(), offset)) continue;
    const insn i = insn_at(offset);
    int inside_window = -1;
    for (std::size_t g = 0; g < first.size(); ++g)
      if (offset > first[g] && offset < last[g]) inside_window = int(g);
    const bool inside = inside_window >= 0;
    const int written = flow.no_register.test(std::size_t(opcode(i))) ? -1 : i[dest_field];
    for (int field : {dest_field, 3, 4, 8})
      if (const auto life = chain_life.find(i[field]);
          inside && life != chain_life.end() && (offset < life->second.first || offset > life->second.second))
        drop(i[field]);
    // A register a window's steps make (a slot's argument, the result) may hold something else of
    // nvcc's before nvcc's own step makes it there (the loop's bound, loaded after the slot and
    // compared before the sum): the lane's step that writes it comes after every instruction that
    // names it (reads it, or writes it: byte 2 may also be a compare's predicate) between the slot
    // before and that step, and after it only the sums read it. The slot result the steps read:
    // nvcc may write its register again after its own first read, and the steps read it before that.
    for (int field : {dest_field, 3, 4, 8}) {
      if (field == dest_field && written < 0) continue;
      for (const auto& [l, w] : made_in[i[field]]) {
        const std::size_t own = at_step(l, w < calls ? w * S + S - 1 : total - 1),
                          after = w > 0 ? im.window_last[std::size_t(w - 1)] : im.places.front();
        if (offset > after && offset < own) {
          im.write_from[w][l] = std::max(im.write_from[w][l], offset + 16);
          // a write's last reader of nvcc's waits for it
          auto& [wrote, read] = unread[std::size_t(l * (calls + 1) + w)];
          if (field == dest_field)
            wrote = std::max(wrote, offset);
          else
            read = std::max(read, offset);
        }
        if (w == calls && field != dest_field && offset > own && inside)
          im.deadline[l] = std::min(im.deadline[l], offset);
      }
    }
    for (int l = 0; l < lanes; ++l)
      if (inside && inside_window > 0 && im.lane[l].res[inside_window - 1] == written)
        im.until[inside_window][l] = std::min(im.until[inside_window][l], offset);
  }
  for (int l = 0; l < lanes; ++l) im.until[calls][l] = std::min(im.until[calls][l], im.deadline[l]);
  // A slot divides chain 0 by chain 1: its register holds the divisor where nvcc keeps it across the
  // slot and nothing of nvcc's in the window names it (nvcc's own read could come before the patch's
  // write); else no quotient in that slot.
  for (auto& r : im.lane)
    for (int g = 0; g < calls; ++g) {
      const int d = r.divisor[g];
      bool free = std::count(r.across[g].begin(), r.across[g].end(), d) > 0;
      for (std::size_t offset = first[std::size_t(g)]; free && offset <= last[std::size_t(g)]; offset += 16)
        if (!std::binary_search(im.places.begin(), im.places.end(), offset))
          for (int field : {dest_field, 3, 4, 8}) free = free && insn_at(offset)[field] != d;
      if (!free) r.divisor[g] = -1;
    }
  // Where nvcc writes such a register and only its own step (a place, the patch's now) reads it,
  // that step waits for the write, which may land late (a load, a shuffle): the patch writes the
  // register no earlier than the step's place, whatever it puts there (a place keeps its waits).
  for (int l = 0; l < lanes; ++l)
    for (int w = 0; w <= calls; ++w)
      if (const auto& [wrote, read] = unread[std::size_t(l * (calls + 1) + w)]; wrote != 0 && read <= wrote)
        im.write_from[w][l] =
            std::max(im.write_from[w][l], at_step(l, w < calls ? w * S + S - 1 : total - 1));
  return im;
}

// The exit's operation: the one before each image kernel's branch to itself (after it, padding).
int learn_exit(const bytes& cubin, const std::map<std::string, kernel_code>& ks, int branch) {
  std::map<int, int> votes;
  for (const auto& [name, k] : ks)
    if (const std::size_t n = unpadded(cubin, k);
        n >= 2 && n < k.count && opcode(at(cubin, k.offset + 16 * (n - 1))) == branch)
      ++votes[opcode(at(cubin, k.offset + 16 * (n - 2)))];
  LEARN_CHECK(!votes.empty(), "no image kernel ends on an exit and a branch to itself");
  return std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) { return a.second < b.second; })
      ->first;
}

// The call images with n slots, learnt from their cubin.
void learn_calls(const stencils& st, int n, call_stencils& out) {
  bytes& file = out.cubin;
  const std::string path = st.prefix + "calls_" + std::to_string(n) + ".cubin";
  file = read_file(path);
  if (file.at(0x31) != st.cubin[0x31])
    throw std::runtime_error(path + " is for another architecture than the stencils");
  const auto calls = kernels_of(file);
  control flow = learn_control(file, calls);
  flow.exit = st.exit;
  flow.predicates = predicate_writers(file, calls);
  flow.no_register |= flow.predicates;
  out.slots = n;
  out.learn = [&file, calls, flow, n, arch = st.arch](stencil::call_shape shape) {
    try {
      return learn_call_image(file, calls, flow, n, shape);
    } catch (const failed& e) {  // that image is not used; an op that would need it says why
      throw failed("sm_" + std::to_string(arch) + ": " + e.what());
    }
  };
  // the slots' words: in the constant bank's section, each its marker once
  const section words = sections_of(file)[".nv.constant3"];
  LEARN_CHECK(words.size >= 4 * stencil::max_calls, path + " has no slots' words");
  for (int g = 0; g < stencil::max_calls; ++g) {
    std::uint32_t word;
    std::memcpy(&word, &file.at(words.offset + 4 * std::size_t(g)), 4);
    LEARN_CHECK(word == stencil::slot_marker + unsigned(g),
                "slot " + std::to_string(g) + "'s word is not its marker");
  }
  out.slot_words = words;
  out.kernels = calls;
  out.own = own_cubins(st.prefix);
}
}  // namespace

// <prefix>alone/<kernel>.cubin where it holds the same bytes as `file` where the patch writes (the
// kernel's instructions, the slots' words); none where the build made none (another architecture's
// check) or it differs.
const own_cubin* own_cubins::of(const std::string& kernel, const bytes& file) const {
  if (!read_) return nullptr;
  const std::lock_guard<std::mutex> lock(read_->reading);
  auto [at, added] = read_->read.try_emplace(kernel);
  if (!added) return at->second.get();
  auto o = std::make_unique<own_cubin>();
  try {
    o->cubin = read_file(read_->prefix + "alone/" + kernel + ".cubin");
  } catch (const std::runtime_error&) {
    return nullptr;
  }
  const auto in_file = sections_of(file), in_own = sections_of(o->cubin);
  for (const std::string& name : {".text." + kernel, std::string(".nv.constant3")}) {
    const auto f = in_file.find(name), a = in_own.find(name);
    if (f == in_file.end() && a == in_own.end()) continue;
    if (f == in_file.end() || a == in_own.end() || f->second.size != a->second.size ||
        !std::equal(file.begin() + std::ptrdiff_t(f->second.offset),
                    file.begin() + std::ptrdiff_t(f->second.offset + f->second.size),
                    o->cubin.begin() + std::ptrdiff_t(a->second.offset)))
      return nullptr;
    o->copied.push_back({f->second, a->second});
  }
  at->second = std::move(o);
  return at->second.get();
}

namespace {
// The one of `learnt` (those learnt so far) that is `kernel`, or null.
template <class Image>
const Image* learnt_named(const std::vector<std::unique_ptr<Image>>& learnt, const std::string& kernel) {
  for (const auto& im : learnt)
    if (im && im->kernel == kernel) return im.get();
  return nullptr;
}
}  // namespace

const vec_image& vec_images::operator[](std::size_t i) const {
  const std::lock_guard<std::mutex> lock(state_->learning);
  std::unique_ptr<vec_image>& im = state_->learnt.at(i);
  if (!im) im = std::make_unique<vec_image>(learn(stencil::vec_region_sizes[i]));
  return *im;
}

const vec_image* vec_images::named(const std::string& kernel) const {
  const std::lock_guard<std::mutex> lock(state_->learning);
  return learnt_named(state_->learnt, kernel);
}

const call_image* call_stencils::image(std::size_t i) const {
  const std::lock_guard<std::mutex> lock(learning);
  if (!tried_.at(i) && stencil::call_shapes[i].most >= slots) {
    tried_[i] = true;
    try {
      images_[i] = std::make_unique<call_image>(learn(stencil::call_shapes[i]));
    } catch (const failed& e) {
      refusals_ += std::string(refusals_.empty() ? "" : "; ") + e.what();
    }
  }
  return images_[i].get();
}

const call_image* call_stencils::named(const std::string& kernel) const {
  const std::lock_guard<std::mutex> lock(learning);
  return learnt_named(images_, kernel);
}

std::string call_stencils::refusals() const {
  const std::lock_guard<std::mutex> lock(learning);
  return refusals_;
}

int operation_of(const stencils& st, const insn& i) {
  for (int o = 0; o < stencil::count; ++o)  // byte 0 first: the operation's low bits, never an operand
    if (i[0] == st.forms[o].code[0] && same_but_operands(i, st.forms[o].code, o)) return o;
  return stencil::count;
}

stencils learn(const std::string& prefix) {
  const std::string stencils_path = prefix + "stencils.cubin", images_path = prefix + "images.cubin";
  stencils st;
  st.prefix = prefix, st.own = own_cubins(prefix);
  const bytes learnt_from = read_file(stencils_path);
  st.cubin = read_file(images_path);
  const auto ks = kernels_of(learnt_from), images = kernels_of(st.cubin);
  st.kernels = images;
  st.arch = int(st.cubin[0x31]);  // the ELF header's flags name the SM in their second byte
  if (learnt_from.at(0x31) != st.cubin[0x31])
    throw std::runtime_error(stencils_path + " and " + images_path + " are for two architectures");
  try {  // a refusal names the architecture whose cubin broke what the learning takes as given
    for (int o = 0; o < stencil::count; ++o) st.forms[o] = learn_form(learnt_from, ks, o);
    learn_latencies(st, learnt_from, ks);
    for (int steps : stencil::region_sizes) st.images.push_back(learn_image(st.cubin, images, steps));
    st.branch = learn_control(st.cubin, images).branch;
    st.exit = learn_exit(st.cubin, images, st.branch);
    const operations predicates = predicate_writers(st.cubin, images);
    for (image& im : st.images)
      learn_sum(st, im, images.at(im.kernel), im.steps.back(), im.steps, predicates);
    // the vec images from what is learnt so far (a copy: `st` is returned by value)
    st.vec_images.learn = [learnt = std::make_shared<const stencils>(st), images, predicates](int steps) {
      try {
        return learn_vec_image(*learnt, images, steps, predicates);
      } catch (const failed& e) {
        throw failed("sm_" + std::to_string(learnt->arch) + ": " + e.what());
      }
    };
  } catch (const failed& e) {
    throw failed("sm_" + std::to_string(st.arch) + ": " + e.what());
  }
  return st;
}

const call_stencils& calls_of(const stencils& st, int calls) {
  call_stencils& c = st.calls->at(std::size_t(calls));
  std::call_once(c.learnt, [&] {
    try {
      learn_calls(st, calls, c);
    } catch (const std::exception& e) {
      c.unread = e.what();
    }
  });
  return c;
}

}  // namespace cdl::copy_and_patch::patch
