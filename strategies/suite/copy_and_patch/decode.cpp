// decode.hpp's emulation, simulation and schedule check. Read the header first.
#include "strategies/suite/copy_and_patch/decode.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <numeric>
#include <set>

namespace cdl::copy_and_patch::patch {

float emulate(const compiled& c, float x0, int k) {
  thread_local std::vector<float> v;          // every element of a map: no allocation after the first
  const std::size_t acc = c.code.size() + 1;  // the sum, in a register of its own after the op's
  v.assign(acc + 1, 0.0f);
  const std::size_t summed = c.code.size() - c.product_in_sum;  // the steps before the sum
  auto run = [&](const step& s) {
    v[std::size_t(s.dest)] =
        s.call ? stencil::call(s.call, v[std::size_t(s.a)], s.b >= 0 ? v[std::size_t(s.b)] : 0.0f)
               : stencil::evaluate(s.op, v[std::size_t(s.a)], s.b >= 0 ? v[std::size_t(s.b)] : 0.0f,
                                   s.c >= 0 ? v[std::size_t(s.c)] : 0.0f, s.constant);
  };
  for (int j = 0; j < k; ++j) {
    v[0] = std::fma(float(j), stencil::delta, x0);
    std::for_each(c.code.begin(), c.code.begin() + std::ptrdiff_t(summed), run);
    if (c.product_in_sum)
      run(sum_with(c.code.back(), int(acc)));
    else
      v[acc] += v[std::size_t(c.result)];
  }
  return v[acc];
}

namespace {

// The region of a patched image decoded with the learnt forms and run on a register file: what the
// machine code means, on the host. Where the GPU's result differs from this but this equals
// emulate(), the fault is in the scheduling bits, not in the instructions.
// Instruction i decoded with the learnt forms and run on reg (RZ, 255, reads 0 and keeps nothing);
// false where it is none of the operations.
bool run(const stencils& st, const insn& i, float (&reg)[256]) {
  const int o = operation_of(st, i);
  if (o == stencil::count) return false;
  const form& f = st.forms[o];
  const float constant = std::bit_cast<float>(immediate(i) ^ (f.negated ? 0x80000000u : 0u));
  const float v = stencil::evaluate(o, reg[i[f.a]], f.b >= 0 ? reg[i[f.b]] : 0.0f,
                                    f.c >= 0 ? reg[i[f.c]] : 0.0f, constant);
  if (i[dest_field] != 255) reg[i[dest_field]] = v;
  return true;
}

template <class Image>
const Image* named(const std::vector<Image>& images, const std::string& kernel) {
  for (const Image& i : images)
    if (i.kernel == kernel) return &i;
  throw std::logic_error(kernel + " is no image learnt");
}

}  // namespace

// The sum after a region (or a lane's window), decoded and run where it was learnt, after what nvcc
// writes before it is lost; else acc + the result.
bool sum(const stencils& st, const patched& image_bytes, const image& im, float& acc, float (&reg)[256]) {
  if (im.sum == 0) {
    acc += reg[im.result];
    return true;
  }
  for (int r = 0; r < 255; ++r)
    if (im.clobbered.test(std::size_t(r))) reg[r] = NAN;
  reg[im.acc] = acc;
  const bool known = run(st, at(image_bytes, im.sum), reg);
  acc = reg[im.acc];
  return known;
}

float simulate(const stencils& st, const compiled& c, float x0, int k) {
  const image* im = named(st.images, c.kernel);
  float acc = 0.0f, reg[256];
  for (int j = 0; j < k; ++j) {
    std::fill(std::begin(reg), std::end(reg), NAN);
    reg[im->x] = std::fma(float(j), stencil::delta, x0), reg[255] = 0.0f;
    for (std::size_t offset : im->steps)
      if (!run(st, at(c.image, offset), reg)) return NAN;
    if (!sum(st, c.image, *im, acc, reg)) return NAN;
  }
  return acc;
}

// A vec image's registers as iteration j starts: NaN but the elements the makers read, and j.
void enter(float (&reg)[256], const insn (&maker)[stencil::lanes],
           const std::array<float, stencil::lanes>& x0, int j) {
  std::fill(std::begin(reg), std::end(reg), NAN);
  for (int l = 0; l < stencil::lanes; ++l) reg[maker[l][8]] = x0[std::size_t(l)];
  reg[maker[0][3]] = float(j), reg[255] = 0.0f;
}
// A vec image's place decoded and run: one of x's makers (j * delta + an element), or a step.
bool run_place(const stencils& st, const insn& i, bool maker, float (&reg)[256]) {
  if (!maker) return run(st, i, reg);
  reg[i[dest_field]] = std::fma(reg[i[3]], stencil::delta, reg[i[8]]);
  return true;
}

// The same for a vec image's window: x's makers in its first places, then each place decoded; for a
// call image each window's in turn, and between two the slot's function on each lane's argument,
// every register but those the slot keeps lost.
std::array<float, stencil::lanes> simulate_vec(const stencils& st, const compiled& c,
                                               const std::array<float, stencil::lanes>& x0, int k) {
  const call_image* calls = c.kernel.empty() ? calls_of(st, calls_in(c.code)).named(c.vec_kernel) : nullptr;
  const vec_image* vec = calls ? nullptr : st.vec_images.named(c.vec_kernel);
  const std::vector<std::size_t>& places = calls ? calls->places : vec->places;
  const int windows = calls ? calls->calls + 1 : 1;
  std::array<float, stencil::lanes> acc{};
  float reg[256];
  for (int j = 0; j < k; ++j) {
    enter(reg, calls ? calls->maker : vec->maker, x0, j);
    for (int w = 0; w < windows; ++w) {
      for (std::size_t p = 0; p < places.size(); ++p)
        if ((!calls || calls->window[p] == w) &&
            !run_place(st, at(c.image, places[p]), w == 0 && p < stencil::lanes, reg))
          return {NAN, NAN, NAN, NAN};
      if (w + 1 == windows) break;
      unsigned f;
      std::memcpy(&f, c.image.data(calls_of(st, calls->calls).slot_words.offset + 4 * std::size_t(w)), 4);
      float value[stencil::lanes];
      for (int l = 0; l < stencil::lanes; ++l) {
        const auto& lane = calls->lane[l];
        value[l] = stencil::call(f, reg[lane.arg[w]], lane.divisor[w] >= 0 ? reg[lane.divisor[w]] : NAN);
      }
      std::set<int> kept;
      for (const auto& lane : calls->lane) kept.insert(lane.across[w].begin(), lane.across[w].end());
      for (int r = 0; r < 255; ++r)
        if (!kept.count(r)) reg[r] = NAN;
      for (int l = 0; l < stencil::lanes; ++l) reg[calls->lane[l].res[w]] = value[l];
    }
    if (calls) {
      for (int l = 0; l < stencil::lanes; ++l) acc[std::size_t(l)] += reg[calls->lane[l].result];
      continue;
    }
    int order[stencil::lanes];  // the sums as they come in the code
    std::iota(std::begin(order), std::end(order), 0);
    std::sort(std::begin(order), std::end(order),
              [&](int a, int b) { return vec->lane[a].sum < vec->lane[b].sum; });
    for (int l : order)
      if (!sum(st, c.image, vec->lane[l], acc[std::size_t(l)], reg)) return {NAN, NAN, NAN, NAN};
  }
  return acc;
}

// The scheduling a patched image's bytes hold, read back from them apart from how write() set it:
// over each stretch of straight-line code the patch wrote into (a region, a vec window, a call
// image's window), each instruction issues its predecessor's stall after it; every register an
// instruction of the patch reads must have been written at least the learnt latency before, and a
// second write must land after the first. Returns the first violation, or empty.
std::string check_schedule(const stencils& st, const compiled& c) {
  struct span {
    std::size_t from, to;  // offsets of the stretch's first and last instruction
    const std::vector<std::size_t>* places;
    std::size_t makers;                   // the first `makers` places make x (j * delta + an element)
    std::vector<int> read_after;          // what the code after the stretch reads (a slot; a result)
    std::vector<const image*> sums = {};  // the regions whose sum reads what the stretch wrote
  };
  std::vector<span> spans;
  const call_image* calls = c.kernel.empty() ? calls_of(st, calls_in(c.code)).named(c.vec_kernel) : nullptr;
  if (!c.kernel.empty()) {
    const image* im = named(st.images, c.kernel);
    spans.push_back({im->steps.front(), im->steps.back(), &im->steps, 0, {}, {im}});
  }
  std::vector<std::vector<std::size_t>> windows;  // a call image's places, window by window
  if (calls) {
    windows.resize(std::size_t(calls->calls) + 1);
    for (std::size_t p = 0; p < calls->places.size(); ++p)
      if (calls->window[p] >= 0) windows[std::size_t(calls->window[p])].push_back(calls->places[p]);
    for (std::size_t w = 0; w < windows.size(); ++w) {
      std::vector<int> read;  // a slot reads its argument; after the last window the sums the results
      for (const auto& lane : calls->lane)
        read.push_back(w < std::size_t(calls->calls) ? lane.arg[w] : lane.result);
      if (!windows[w].empty())
        spans.push_back({windows[w].front(),
                         w < std::size_t(calls->calls) ? calls->window_last[w] : calls->last, &windows[w],
                         w == 0 ? std::size_t(stencil::lanes) : 0, read});
    }
  } else if (!c.vec_kernel.empty()) {
    const vec_image* im = st.vec_images.named(c.vec_kernel);
    std::vector<const image*> lanes;
    for (const image& lane : im->lane) lanes.push_back(&lane);
    spans.push_back({im->places.front(), im->last, &im->places, std::size_t(stencil::lanes), {}, lanes});
  }
  int longest = 0, least = 99;
  for (const auto& row : st.latency)
    for (int l : row) longest = std::max(longest, l), least = std::min(least, l);
  const int maker = stencil::count;  // a maker of x: read after the longest latency and the margin
  auto latency = [&](int from, int to) {
    return from == maker ? longest + st.latency_margin : st.latency[from][to];
  };
  auto landed_by = [&](int from) {  // a write issued at 0 has landed for any reader by then
    int m = 0;
    for (int to = 0; to < stencil::count; ++to) m = std::max(m, latency(from, to));
    return m;
  };
  for (const span& s : spans) {
    int issued[256], producer[256];
    std::fill(std::begin(producer), std::end(producer), -1);
    int t = 0;
    std::size_t p = 0;
    // A region's sum reads what the stretch wrote (the result, or a product's factors), where it
    // stands in the stretch or after it; where no sum was learnt, the result is read after it.
    auto read_by_sum = [&](const image& im, std::size_t at_offset) -> std::string {
      const insn i = at(c.image, im.sum);
      const int op = operation_of(st, i);
      if (op == stencil::count)
        return "the sum at " + std::to_string(im.sum) + " holds none of the operations";
      const form& f = st.forms[op];
      for (int r : {int(i[f.a]), f.b >= 0 ? int(i[f.b]) : -1, f.c >= 0 ? int(i[f.c]) : -1})
        if (r >= 0 && r != 255 && producer[r] >= 0 && t < issued[r] + latency(producer[r], op))
          return "the sum at " + std::to_string(at_offset) + " reads R" + std::to_string(r) + " " +
                 std::to_string(issued[r] + latency(producer[r], op) - t) + " cycles before it is ready";
      return "";
    };
    for (std::size_t offset = s.from; offset <= s.to; offset += 16) {
      const insn i = at(c.image, offset);
      for (const image* im : s.sums)
        if (im->sum == offset)
          if (std::string late = read_by_sum(*im, offset); !late.empty()) return late;
      if (p < s.places->size() && (*s.places)[p] == offset) {
        const bool makes_x = p++ < s.makers;
        const int op = makes_x ? maker : operation_of(st, i);
        if (!makes_x && op == stencil::count)
          return "the place at " + std::to_string(offset) + " holds none of the operations";
        const form& f = st.forms[makes_x ? stencil::add : op];
        const int reader = makes_x ? int(stencil::add) : op;
        for (int r : {makes_x ? -1 : int(i[f.a]), !makes_x && f.b >= 0 ? int(i[f.b]) : -1,
                      !makes_x && f.c >= 0 ? int(i[f.c]) : -1})
          if (r >= 0 && r != 255 && producer[r] >= 0 && t < issued[r] + latency(producer[r], reader))
            return "the instruction at " + std::to_string(offset) + " reads R" + std::to_string(r) + " " +
                   std::to_string(issued[r] + latency(producer[r], reader) - t) +
                   " cycles before it is ready";
        // a second write lands after the first: the shortest latency after it, past the first's longest
        if (const int d = i[dest_field]; d != 255) {
          if (producer[d] >= 0 && t + least <= issued[d] + landed_by(producer[d]))
            return "the instruction at " + std::to_string(offset) + " writes R" + std::to_string(d) +
                   " before the write before it has landed";
          issued[d] = t, producer[d] = op;
        }
      }
      t += stall(i);
    }
    std::vector<int> read_after = s.read_after;
    for (const image* im : s.sums) {
      if (im->sum == 0) read_after.push_back(im->result);
      if (im->sum > s.to)
        if (std::string late = read_by_sum(*im, im->sum); !late.empty()) return late;
    }
    for (int r : read_after)
      if (producer[r] >= 0 && t < issued[r] + latency(producer[r], stencil::addr))
        return std::string("R") + std::to_string(r) + " is read after the stretch ending at " +
               std::to_string(s.to) + " " +
               std::to_string(issued[r] + latency(producer[r], stencil::addr) - t) +
               " cycles before it is ready";
  }
  return "";
}

}  // namespace cdl::copy_and_patch::patch
