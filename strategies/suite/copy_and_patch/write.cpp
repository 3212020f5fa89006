// write.hpp's writing of an op into the images. Read the header first.
#include "strategies/suite/copy_and_patch/write.hpp"

#include <algorithm>
#include <bit>
#include <iterator>

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
// register is free again after its last read. The result is copied into the register the sum reads.
std::vector<step> allocate(std::vector<step> code, int result, const image& im) {
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
  if (reg[result] != im.result)
    code.push_back({stencil::add, im.result, reg[result], -1, -0.0f});  // v + -0 is v
  return code;
}

// The image with the op's instructions in its region (the rest of the region: v + -0 on a dead
// register), then every stall set so that each instruction issues only once what it reads is ready.
compiled write(const stencils& st, const image* im, const std::vector<step>& code) {
  compiled out{st.cubin, im->kernel, int(code.size()), {}, 0, {}, {}};
  const int spare = im->pool[0] == im->result ? im->pool[1] : im->pool[0];
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
    const step s = n < code.size() ? code[n] : step{stencil::add, spare, spare, -1, -0.0f};
    unsigned char* slot = &out.image[im->steps[n]];
    put(st, s, slot);
    int t = cycle;
    for (int r : {s.a, s.b, s.c})
      if (r >= 0) t = std::max(t, issued[r] + st.latency[producer[r]][s.op]);
    t = std::max(
        t, issued[s.dest] + max_latency(producer[s.dest]) - min_latency(s.op) + 1);  // writes land in order
    if (t > cycle) set_stall(slot - 16, stall(slot - 16) + t - cycle);
    issued[s.dest] = t, producer[s.dest] = s.op;
    cycle = t + stall(slot), last_issue = t;
  }
  // The sum after the region reads the result: the last step waits until it is ready.
  unsigned char* last = &out.image[im->steps.back()];
  const int ready = issued[im->result] + st.latency[producer[im->result]][stencil::addr];
  set_stall(last, std::max(stall(last), ready - last_issue));
  return out;
}

// x's four makers in a vec image's first places, then the lanes' steps, each lane done before its
// result is read (a lane takes a place out of turn only where it has no place to spare), with
// RZ = RZ + -0 in the places left; then every stall set, over the whole window, as write() does.
void write_vec(const stencils& st, const vec_image& im, const std::vector<step> (&code)[stencil::lanes],
               bytes& out) {
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
    } else {  // not the patch's: it may read a lane's result
      int t = 0;
      for (int l = 0; l < lanes; ++l)
        if (im.deadline[l] == offset) t = std::max(t, clock.ready(im.lane[l].result, stencil::addr));
      clock.issue(slot, t);
    }
  }
  // After the window the sums read the results: the last instruction waits until all are ready.
  int ready = 0;
  for (const image& lane : im.lane) ready = std::max(ready, clock.ready(lane.result, stencil::addr));
  clock.settle(&out[im.last], ready);
}

// The op in the smallest vec image that holds it, written into `c`'s image beside its scalar one;
// where none does, why not.
void compile_vec(const stencils& st, const std::vector<step>& code, int result, compiled& c) {
  c.vec_refused = "more steps than the largest vec region";
  for (std::size_t i = 0; i < st.vec_images.size(); ++i) {
    if (stencil::vec_region_sizes[i] < int(code.size())) continue;
    const vec_image& im = st.vec_images[i];
    try {
      std::vector<step> placed[stencil::lanes];
      for (int l = 0; l < stencil::lanes; ++l) placed[l] = allocate(code, result, im.lane[l]);
      bytes out = c.image;
      write_vec(st, im, placed, out);
      c.image = std::move(out), c.vec_kernel = im.kernel, c.vec_refused.clear();
      return;
    } catch (const refused& e) {
      c.vec_refused = e.what();
    }
  }
}

}  // namespace

// The smallest image whose region holds the op and whose registers suffice for its live values.
compiled compile(const stencils& st, const cdl::expr::program& op) {
  std::vector<step> code;
  const int result = fuse(code, select(op, code));
  if (std::any_of(code.begin(), code.end(), [](const step& s) { return s.call != stencil::no_function; })) {
    // the op's own order; where no image holds it, each step as late as it can be, then the steps
    // spread evenly over the windows
    try {
      return compile_calls(st, code, result);
    } catch (const refused& first) {
      for (auto order : {by_need, spread}) try {
          std::vector<step> other = code;
          const int other_result = order(other, result);
          return compile_calls(st, other, other_result);
        } catch (const refused&) {
        }
      throw first;
    }
  }
  std::string why =
      "more steps than the largest region (" + std::to_string(st.images.back().steps.size()) + ")";
  for (const image& im : st.images) {
    if (int(im.steps.size()) < int(code.size())) continue;
    try {
      const std::vector<step> placed = allocate(code, result, im);
      if (placed.size() <= im.steps.size()) {
        compiled c = write(st, &im, placed);
        c.code = code, c.result = result;
        compile_vec(st, code, result, c);
        return c;
      }
    } catch (const refused& e) {
      why = e.what();
    }
  }
  throw refused(why);
}
compiled compile(const stencils& st, const std::string& text) { return compile(st, cdl::expr::parse(text)); }

bytes loadable(const stencils& st, const compiled& c, const std::string& kernel) {
  const int calls = calls_in(c.code);
  const own_cubins& own = calls ? calls_of(st, calls).own : st.own;
  const own_cubin* found = own.of(kernel, calls ? calls_of(st, calls).cubin : st.cubin);
  if (found == nullptr) return c.image;
  bytes out = found->cubin;
  for (const auto& [in_file, in_own] : found->copied)
    std::copy_n(c.image.begin() + std::ptrdiff_t(in_file.offset), in_file.size,
                out.begin() + std::ptrdiff_t(in_own.offset));
  return out;
}

}  // namespace cdl::copy_and_patch::patch
