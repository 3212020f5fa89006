// write.hpp's writing of an op into the images. Read the header first.
#include "strategies/suite/copy_and_patch/write.hpp"

#include <algorithm>
#include <bit>
#include <iterator>
#include <stdexcept>
#include <string>

namespace cdl::copy_and_patch::patch {

// Step s's instruction written into the place at `slot`: the operation's learnt form with the
// step's registers and constant, keeping the place's own barriers and stall (its stall may also
// cover an instruction around it), no operand kept for the next instruction.
void put(const stencils& st, const step& s, unsigned char* slot) {
  const form& f = st.forms[s.op];
  insn i = f.code;
  i[dest_field] = (unsigned char)s.dest;
  i[f.a] = (unsigned char)s.a;
  if (f.b >= 0) i[f.b] = (unsigned char)s.b;
  if (f.c >= 0) i[f.c] = (unsigned char)s.c;
  if (stencil::has_constant(s.op))
    set_immediate(i, std::bit_cast<std::uint32_t>(s.constant) ^ (f.negated ? 0x80000000u : 0u));
  std::copy_n(slot + 13, 3, i.begin() + 13);
  std::copy(i.begin(), i.end(), slot);
  clear_reuse(slot);
}

namespace {

// Physical registers for the virtual ones, from the image's pool, x where it already is; a value's
// register is free again after its last read. The result is copied into the register the sum reads,
// unless the sum computes the last step (`in_sum`: its factors stay where they are).
std::vector<step> allocate(std::vector<step> code, int result, const image& im, bool in_sum = false) {
  std::vector<int> last(code.size() + 1, -1), reg(code.size() + 1, -1);
  for (std::size_t n = 0; n < code.size(); ++n)
    for (int r : {code[n].a, code[n].b, code[n].c})
      if (r >= 0) last[r] = int(n);
  last[result] = int(code.size());
  std::vector<int> free;  // x's register is not free until x's last read
  for (int r : im.pool)
    if (r != im.x && r != im.result) free.push_back(r);
  if (im.result != im.x) free.push_back(im.result);  // given out last: it is where the result goes
  reg[0] = im.x;
  if (last[0] < 0) free.insert(free.begin(), im.x);  // x never read: its register is free at once
  for (std::size_t n = 0; n < code.size(); ++n) {
    step& s = code[n];
    for (int r : {s.a, s.b, s.c})
      if (r >= 0 && last[r] == int(n) && std::find(free.begin(), free.end(), reg[r]) == free.end())
        free.insert(free.begin(), reg[r]);  // read for the last time here: the result may take it
    if (free.empty())
      throw refused("more values live at once than the region has registers (" +
                    std::to_string(im.pool.size()) + ")");
    const auto pick = s.dest == result && std::find(free.begin(), free.end(), im.result) != free.end()
                          ? std::find(free.begin(), free.end(), im.result)
                          : free.begin();
    reg[s.dest] = *pick;
    free.erase(pick);
    s.dest = reg[s.dest], s.a = s.a >= 0 ? reg[s.a] : -1, s.b = s.b >= 0 ? reg[s.b] : -1;
    s.c = s.c >= 0 ? reg[s.c] : -1;
  }
  if (reg[result] != im.result && !in_sum)
    code.push_back({stencil::add, im.result, reg[result], -1, -0.0f});  // v + -0 is v
  return code;
}

// Whether a region's sum can compute the op's last step, a product: its factors in registers nvcc
// writes nothing to before the sum, and the fused sum's result as soon ready for what reads the sum
// as an add's.
bool sums(const stencils& st, const image& im, const step& product) {
  const int o = sum_with(product, im.acc).op;
  for (int to = 0; to < stencil::count; ++to)
    if (st.latency[o][to] > st.latency[stencil::addr][to]) return false;
  return im.sum != 0 && !im.clobbered.test(std::size_t(product.a)) &&
         (product.op == stencil::mul || !im.clobbered.test(std::size_t(product.b)));
}
// The steps allocate() gave registers, less the last, a product, where the sum computes it: that
// step, or refused where the region's sum cannot.
step take_product(const stencils& st, const image& im, std::vector<step>& placed) {
  const step product = placed.back();
  placed.pop_back();
  if (!sums(st, im, product)) throw refused("the sum after the region cannot compute the op's last product");
  return product;
}
// The sum written with the product in it; the instruction before it keeps no operand for it.
void write_sum(const stencils& st, const image& im, const step& product, patched& out) {
  put(st, sum_with(product, im.acc), &out[im.sum]);
  clear_reuse(&out[im.sum - 16]);
}

// The image with the op's instructions in its region (the rest of the region: RZ = RZ + -0), then
// every stall set so that each instruction issues only once what it reads is ready; the product in
// the sum where `product` is given.
compiled write(const stencils& st, const image* im, const std::vector<step>& code, const step* product) {
  compiled out{patched(st.cubin), im->kernel, int(code.size()), {}, 0, {}, {}};
  out.image.copy(text_of(st.kernels.at(im->kernel)));
  int issued[256], producer[256], cycle = 0, last_issue = 0;
  std::fill(std::begin(issued), std::end(issued), -100);
  std::fill(std::begin(producer), std::end(producer), int(stencil::add));
  auto max_latency = [&](int o) {
    return *std::max_element(std::begin(st.latency[o]), std::end(st.latency[o]));
  };
  auto min_latency = [&](int o) {
    int m = 99;
    for (const auto& row : st.latency) m = std::min(m, row[o]);
    return m;
  };
  unsigned char* before = &out.image[im->steps.front() - 16];
  set_stall(before, stall(before) + st.latency_margin);  // x's producer, whatever reads it first
  for (std::size_t n = 0; n < im->steps.size(); ++n) {
    const step s = n < code.size() ? code[n] : step{stencil::add, 255, 255, -1, -0.0f};
    unsigned char* slot = &out.image[im->steps[n]];
    put(st, s, slot);
    int t = cycle;
    for (int r : {s.a, s.b, s.c})
      if (r >= 0 && r != 255) t = std::max(t, issued[r] + st.latency[producer[r]][s.op]);
    if (s.dest != 255)  // writes land in order
      t = std::max(t, issued[s.dest] + max_latency(producer[s.dest]) - min_latency(s.op) + 1);
    if (t > cycle) set_stall(slot - 16, stall(slot - 16) + t - cycle);
    if (s.dest != 255) issued[s.dest] = t, producer[s.dest] = s.op;
    cycle = t + stall(slot), last_issue = t;
  }
  // The sum after the region reads the result (or the product's factors): the last step waits until
  // they are ready.
  auto ready_for = [&](int r, int reader) { return issued[r] + st.latency[producer[r]][reader]; };
  int ready = ready_for(im->result, stencil::addr);
  if (product) {
    const step sum = sum_with(*product, im->acc);
    write_sum(st, *im, *product, out.image);
    ready = ready_for(sum.a, sum.op);
    if (sum.op == stencil::fmarr) ready = std::max(ready, ready_for(sum.b, sum.op));
  }
  unsigned char* last = &out.image[im->steps.back()];
  set_stall(last, std::max(stall(last), ready - last_issue));
  return out;
}

// x's four makers in a vec image's first places, then the lanes' steps, each lane done before its
// result is read (a lane takes a place out of turn only where it has no place to spare), with
// RZ = RZ + -0 in the places left; then every stall set, over the whole window, as write() does;
// each lane's product in its sum where `products` are given.
void write_vec(const stencils& st, const vec_image& im, const std::vector<step> (&code)[stencil::lanes],
               const step* products, patched& out) {
  constexpr int lanes = stencil::lanes;
  // The makers in the first places; then at each place the lane that must take it (as many steps
  // left as places before its result is read), else the one that waited longest.
  std::vector<int> chosen(im.places.size(), -1);
  std::size_t next[lanes]{}, last_placed[lanes]{};
  for (std::size_t p = lanes; p < im.places.size(); ++p) {
    int best = -1;
    for (int l = 0; l < lanes; ++l) {
      if (next[l] == code[l].size()) continue;
      const std::size_t left = code[l].size() - next[l],
                        before =
                            std::size_t(std::count_if(im.places.begin() + std::ptrdiff_t(p), im.places.end(),
                                                      [&](std::size_t o) { return o < im.deadline[l]; }));
      if (before < left) throw refused("a lane's result is read before its steps are done");
      if (before == left) {
        best = l;
        break;
      }
      if (best < 0 || last_placed[l] < last_placed[best]) best = l;
    }
    if (best >= 0) chosen[p] = best, last_placed[best] = p + 1, ++next[best];
  }
  for (int l = 0; l < lanes; ++l)
    if (next[l] < code[l].size()) throw refused("more steps than the vec image's places");
  window_clock clock(st);
  std::size_t next_step[lanes]{}, p = 0;
  clear_reuse(&out[im.places.front() - 16]);
  for (std::size_t offset = im.places.front(); offset <= im.last; offset += 16) {
    unsigned char* slot = &out[offset];
    const bool place = p < im.places.size() && im.places[p] == offset;
    if (place && p < lanes) {  // lane p's x: j * stencil::delta + its element, into the lane's x register
      clock.make_x(slot, im.maker[p], im.lane[p].x), ++p;
    } else if (place) {
      const int l = chosen[p++];
      clock.write(slot, l >= 0 ? code[l][next_step[l]++] : step{stencil::add, 255, 255, -1, -0.0f});
    } else {  // not the patch's: it may read a lane's result, or be a lane's sum
      int t = 0, sum = -1;
      for (int l = 0; l < lanes; ++l) {
        if (products && im.lane[l].sum == offset) sum = l;
        if (im.deadline[l] == offset) t = std::max(t, clock.ready(im.lane[l].result, stencil::addr));
      }
      if (sum >= 0) {
        clock.write(slot, sum_with(products[sum], im.lane[sum].acc));
        clear_reuse(slot - 16);
      } else {
        clock.issue(slot, t);
      }
    }
  }
  // After the window the sums read the results (or compute the products): the last instruction
  // waits until what they read is ready.
  int ready = 0;
  for (int l = 0; l < lanes; ++l) {
    const image& lane = im.lane[l];
    if (!products) {
      ready = std::max(ready, clock.ready(lane.result, stencil::addr));
    } else if (lane.sum > im.last) {
      const step sum = sum_with(products[l], lane.acc);
      write_sum(st, lane, products[l], out);
      ready = std::max(ready, clock.ready(sum.a, sum.op));
      if (sum.op == stencil::fmarr) ready = std::max(ready, clock.ready(sum.b, sum.op));
    }
  }
  clock.settle(&out[im.last], ready);
}

// The op in the smallest vec image that holds it, written into `c`'s image beside its scalar one;
// where none does, why not.
void compile_vec(const stencils& st, const std::vector<step>& code, int result, compiled& c) {
  c.vec_refused = "more steps than the largest vec region";
  const int steps = int(code.size()) - c.product_in_sum;
  for (std::size_t i = 0; i < st.vec_images.size(); ++i) {
    if (stencil::vec_region_sizes[i] < steps) continue;
    const vec_image& im = st.vec_images[i];
    try {
      std::vector<step> placed[stencil::lanes];
      step products[stencil::lanes]{};
      for (int l = 0; l < stencil::lanes; ++l) {
        placed[l] = allocate(code, result, im.lane[l], c.product_in_sum);
        if (c.product_in_sum) products[l] = take_product(st, im.lane[l], placed[l]);
      }
      patched out = c.image;  // the scalar kernel's copy and the vec kernel's, written
      out.copy(text_of(st.kernels.at(im.kernel)));
      write_vec(st, im, placed, c.product_in_sum ? products : nullptr, out);
      c.image = std::move(out), c.vec_kernel = im.kernel, c.vec_refused.clear();
      return;
    } catch (const refused& e) {
      c.vec_refused = e.what();
    }
  }
}

// A lane's places in c's vec image; more than any where it has none.
int vec_places(const stencils& st, const compiled& c) {
  const vec_image* im = st.vec_images.named(c.vec_kernel);
  return im ? im->steps : 1 << 20;
}

// The smallest image whose region holds the op and whose registers suffice for its live values, the
// last step in the sum where `in_sum`; and the smallest vec image likewise.
compiled place(const stencils& st, const std::vector<step>& code, int result, bool in_sum) {
  std::string why =
      "more steps than the largest region (" + std::to_string(st.images.back().steps.size()) + ")";
  for (const image& im : st.images) {
    if (int(im.steps.size()) < int(code.size()) - in_sum) continue;
    try {
      std::vector<step> placed = allocate(code, result, im, in_sum);
      const step product = in_sum ? take_product(st, im, placed) : step{};
      if (placed.size() <= im.steps.size()) {
        compiled c = write(st, &im, placed, in_sum ? &product : nullptr);
        c.code = code, c.result = result, c.product_in_sum = in_sum;
        compile_vec(st, code, result, c);
        return c;
      }
    } catch (const refused& e) {
      why = e.what();
    }
  }
  throw refused(why);
}

}  // namespace

// The smallest image whose region holds the op and whose registers suffice for its live values.
compiled compile(const stencils& st, const cdl::expr::program& op) {
  std::vector<step> code;
  const int result = fuse(code, select(op, code));
  if (std::any_of(code.begin(), code.end(), [](const step& s) { return s.call != stencil::no_function; })) {
    // the op's own order; where no image holds it, each step as late as it can be, then the steps
    // spread evenly over the windows; then each of the three with the values made from x alone
    // made again after a slot rather than kept across it
    try {
      return compile_calls(st, code, result);
    } catch (const refused& first) {
      const auto own = [](std::vector<step>&, int r) { return r; };
      for (const bool again : {false, true})
        for (int (*order)(std::vector<step>&, int) : {+own, by_need, spread}) try {
            if (order == +own && !again) continue;  // tried first, above
            std::vector<step> other = code;
            int other_result = order(other, result);
            if (again) other_result = remake(other, other_result);
            return compile_calls(st, other, other_result);
          } catch (const refused&) {
          }
      throw first;
    }
  }
  // An op whose last step is a product: the sum computes it, unless the op written whole goes into
  // a smaller vec image (its factors and what it made before them live at once: a lane of the
  // smallest has one register), which it may only where the sum's went into one with a place to
  // spare.
  if (!code.empty() && code.back().dest == result &&
      (code.back().op == stencil::mul || code.back().op == stencil::mulr)) {
    try {
      compiled in_sum = place(st, code, result, true);
      if (vec_places(st, in_sum) > int(code.size())) try {
          compiled whole = place(st, code, result, false);
          if (vec_places(st, whole) < vec_places(st, in_sum)) return whole;
        } catch (const refused&) {
        }
      return in_sum;
    } catch (const refused&) {
    }
  }
  return place(st, code, result, false);
}
compiled compile(const stencils& st, const std::string& text) { return compile(st, cdl::expr::parse(text)); }

void patched::copy(const section& s) {
  if (s.offset + s.size > size_) throw std::logic_error("a section past the end of the file");
  for (const auto& [at, bytes_of] : copies_)
    if (at.offset == s.offset) return;
  copies_.push_back({s, bytes(file_ + s.offset, file_ + s.offset + s.size)});
}
unsigned char& patched::operator[](std::size_t offset) {
  for (auto& [at, bytes_of] : copies_)
    if (offset - at.offset < at.size) return bytes_of[offset - at.offset];
  throw std::logic_error("the patch writes at " + std::to_string(offset) + ", in no section it copied");
}
const unsigned char* patched::data(std::size_t offset) const {
  for (const auto& [at, bytes_of] : copies_)
    if (offset - at.offset < at.size) return &bytes_of[offset - at.offset];
  return file_ + offset;
}
bytes patched::whole() const {
  bytes out(file_, file_ + size_);
  for (const auto& [at, bytes_of] : copies_)
    std::copy(bytes_of.begin(), bytes_of.end(), out.begin() + std::ptrdiff_t(at.offset));
  return out;
}
insn at(const patched& p, std::size_t offset) {
  insn i;
  std::copy_n(p.data(offset), i.size(), i.begin());
  return i;
}

bytes loadable(const stencils& st, const compiled& c, const std::string& kernel) {
  const int calls = calls_in(c.code);
  const own_cubins& own = calls ? calls_of(st, calls).own : st.own;
  const own_cubin* found = own.of(kernel, calls ? calls_of(st, calls).cubin : st.cubin);
  if (found == nullptr) return c.image.whole();
  bytes out = found->cubin;
  for (const auto& [in_file, in_own] : found->copied)
    std::copy_n(c.image.data(in_file.offset), in_file.size, out.begin() + std::ptrdiff_t(in_own.offset));
  return out;
}

}  // namespace cdl::copy_and_patch::patch
