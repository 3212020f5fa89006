// write.hpp's writing of an op that calls functions: its steps in a call image's windows, a slot for
// each call (the slot's word set to the function, its argument made where the slot reads it), the
// values that live across a call in the registers nvcc itself kept across that slot.
#include "strategies/suite/copy_and_patch/write.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace cdl::copy_and_patch::patch {
namespace {

// --- An op that calls functions: its steps in a call image's windows, a slot for each call -------

// Where a value must be: anywhere in the lane's registers kept across the slots, or in what slot g
// reads (arg, and a quotient's divisor), what it writes (res), or where the sum reads the op's value.
enum class fixed { no, arg, divisor, res, result };
struct routed {
  std::vector<step> code;                    // calls included (op -1), in order
  std::vector<int> window;                   // each step's window (a call's: the window it ends, its slot)
  std::vector<std::pair<fixed, int>> where;  // each virtual register's, with its slot
  int result = 0;
};

// The op's steps with copies (v + -0) where a value is not made where the image needs it: a call's
// argument (and a quotient's divisor) made in the window before it and read by nothing else is made
// in the slot's register;
// a call's result stays in the slot's through the window after it, and is copied at its end where
// a later window reads it (at its start, where something there writes the slot's register first,
// in any lane); the op's value made last is made where the sum reads it.
routed route(const call_image& im, const std::vector<step>& code, int result, unsigned copied = 0) {
  routed r;
  std::vector<int> def_window(code.size() + 2, 0), def_step(code.size() + 2, -1), readers(code.size() + 2, 0);
  std::vector<int> last_window(code.size() + 2, -1);
  int w = 0;
  for (std::size_t n = 0; n < code.size(); ++n) {
    def_window[std::size_t(code[n].dest)] = code[n].call ? w + 1 : w,
    def_step[std::size_t(code[n].dest)] = int(n);
    for (int v : {code[n].a, code[n].b, code[n].c})
      if (v >= 0) ++readers[std::size_t(v)], last_window[std::size_t(v)] = w;
    w += code[n].call ? 1 : 0;
  }
  int next = int(code.size()) + 1;
  std::vector<int> renamed(code.size() + 2);
  for (std::size_t v = 0; v < renamed.size(); ++v) renamed[v] = int(v);
  r.where.assign(std::size_t(next), {fixed::no, 0});
  auto copy = [&](int from, int window) {  // a new register, v + -0
    r.code.push_back({stencil::add, next, from, -1, -0.0f}), r.window.push_back(window);
    r.where.push_back({fixed::no, 0});
    return next++;
  };
  w = 0;
  int pending = -1;  // the last call's result, read after the next slot: copied just before it
  for (step s : code) {
    const int arg = s.a, divisor = s.b;
    for (int* v : {&s.a, &s.b, &s.c})
      if (*v >= 0) *v = renamed[std::size_t(*v)];
    if (!s.call) {
      r.code.push_back(s), r.window.push_back(w);
      continue;
    }
    const auto made_here = [&](int v) {  // in this window, by a step, and read by this call alone
      const int made = v == 0 ? -1 : def_step[std::size_t(v)];
      return (v == 0 ? w == 0
                     : made >= 0 && !code[std::size_t(made)].call && def_window[std::size_t(v)] == w) &&
             readers[std::size_t(v)] == 1;
    };
    if (!made_here(arg)) s.a = copy(s.a, w);
    if (divisor >= 0 && !made_here(divisor)) s.b = copy(s.b, w);
    if (pending >= 0) renamed[std::size_t(pending)] = copy(pending, w), pending = -1;
    r.where[std::size_t(s.a)] = {fixed::arg, w};
    if (divisor >= 0) r.where[std::size_t(s.b)] = {fixed::divisor, w};
    r.code.push_back(s), r.window.push_back(w);
    r.where[std::size_t(s.dest)] = {fixed::res, w};
    ++w;
    if (copied >> (w - 1) & 1)  // at once: something writes its register before the window's end
      renamed[std::size_t(s.dest)] = copy(s.dest, w);
    else if (last_window[std::size_t(s.dest)] > w)
      pending = s.dest;
  }
  r.result = renamed[std::size_t(result)];
  const int made = r.result == 0 ? -1 : def_step[std::size_t(result)];
  if (r.result != result || made < 0 || code[std::size_t(made)].call ||
      def_window[std::size_t(result)] != w || readers[std::size_t(result)] != 0)
    r.result = copy(r.result, w);
  r.where[std::size_t(r.result)] = {fixed::result, 0};
  // A result left in its slot's register is read there before a step writes that register (in any
  // lane, the next slot's argument or the op's value may be made there): else it is copied first.
  for (std::size_t n = 0; n < r.code.size(); ++n) {
    if (!r.code[n].call || copied >> r.window[n] & 1) continue;
    const int g = r.window[n], v = r.code[n].dest;
    std::size_t read = n, written = r.code.size();
    for (std::size_t m = n + 1; m < r.code.size(); ++m) {
      const step& s = r.code[m];
      if (s.a == v || s.b == v || s.c == v) read = m;
      const auto [kind, slot] = r.where[std::size_t(s.dest)];
      for (const auto& lane : im.lane)
        if (((kind == fixed::arg && slot == g + 1 && lane.arg[slot] == lane.res[g]) ||
             (kind == fixed::divisor && slot == g + 1 && lane.divisor[slot] == lane.res[g]) ||
             (kind == fixed::result && lane.result == lane.res[g])) &&
            written == r.code.size())
          written = m;
    }
    if (written < read) return route(im, code, result, copied | 1u << g);
  }
  return r;
}

// One lane's registers for the routed steps: the fixed ones where they must be; a value that lives
// across a slot in a register nvcc kept across it; one within a window first in the window's own
// fixed registers, once free (a register holds one value from its making to its last read).
struct lane_code {
  std::vector<step> code;  // r's steps on the lane's registers
  int x = -1;              // where its maker puts x
};
lane_code allocate_lane(const routed& r, const call_image& im, int lane) {
  const auto& regs = im.lane[lane];
  // The registers kept across the slots between windows `from` and `to` (where from == to, those
  // before and after the window), but those another lane's result, its argument in window `to` or
  // its slot result in window `from` may go to: nvcc keeps them apart only at the slots.
  auto kept = [&](int from, int to) {
    std::vector<int> out;
    const int first = from == to ? std::max(from - 1, 0) : from,
              last = from == to ? std::min(to + 1, im.calls) : to;
    for (int reg : regs.across[first]) {
      bool all = true;
      for (int g = first; g < last; ++g)
        all = all && std::count(regs.across[g].begin(), regs.across[g].end(), reg);
      for (int l = 0; l < stencil::lanes; ++l)
        all =
            all && (l == lane || (im.lane[l].result != reg && (to == im.calls || im.lane[l].arg[to] != reg) &&
                                  (from == 0 || im.lane[l].res[from - 1] != reg)));
      if (all) out.push_back(reg);
    }
    return out;
  };
  // Each value's life: made at step `made` (x before the first), last read at `last`; the windows
  // of the two (a call's result is made in the window after its slot).
  const std::size_t values = r.where.size();
  std::vector<int> made(values, -1), last(values, -1), from(values, 0), to(values, 0), reg(values, -1);
  for (std::size_t n = 0; n < r.code.size(); ++n) {
    const step& s = r.code[n];
    made[std::size_t(s.dest)] = int(n), from[std::size_t(s.dest)] = r.window[n] + (s.call ? 1 : 0);
    for (int v : {s.a, s.b, s.c})
      if (v >= 0) last[std::size_t(v)] = int(n), to[std::size_t(v)] = r.window[n];
  }
  last[std::size_t(r.result)] = int(r.code.size()), to[std::size_t(r.result)] = im.calls;
  // A register holds one value at a time: two share it where one is last read by the step that
  // makes the other.
  std::vector<std::vector<int>> holds(256);
  auto fits = [&](int v, int R) {
    for (int u : holds[std::size_t(R)])
      if (made[std::size_t(v)] < last[std::size_t(u)] && made[std::size_t(u)] < last[std::size_t(v)])
        return false;
    return true;
  };
  for (std::size_t v = 0; v < values; ++v) {  // the fixed ones first: they have no choice
    const auto [kind, g] = r.where[v];
    if (last[v] < 0 || kind == fixed::no) continue;
    if (kind == fixed::divisor && regs.divisor[g] < 0)
      throw refused("no register for a divisor at the call image's slot " + std::to_string(g));
    reg[v] = kind == fixed::arg       ? regs.arg[g]
             : kind == fixed::divisor ? regs.divisor[g]
             : kind == fixed::res     ? regs.res[g]
                                      : regs.result;
    if (!fits(int(v), reg[v]))
      throw refused("a call's argument or result meets another value in its register");
    holds[std::size_t(reg[v])].push_back(int(v));
  }
  for (std::size_t v = 0; v < values;
       ++v) {  // the rest: a window's own registers first, where it stays in one
    if (last[v] < 0 || reg[v] >= 0) continue;
    std::vector<int> candidates;
    if (from[v] == to[v]) {
      const int w = from[v];
      if (w < im.calls) candidates.push_back(regs.arg[w]);
      if (w > 0) candidates.push_back(regs.res[w - 1]);
      if (w == im.calls) candidates.push_back(regs.result);
    }
    std::vector<int> across = kept(from[v], to[v]);  // those kept across fewer later slots first
    auto later = [&](int R) {
      int n = 0;
      for (int g = to[v]; g < im.calls; ++g)
        n += int(std::count(regs.across[g].begin(), regs.across[g].end(), R));
      return n;
    };
    std::stable_sort(across.begin(), across.end(), [&](int a, int b) { return later(a) < later(b); });
    candidates.insert(candidates.end(), across.begin(), across.end());
    for (int R : candidates)
      if (reg[v] < 0 && fits(int(v), R)) reg[v] = R, holds[std::size_t(R)].push_back(int(v));
    if (reg[v] < 0)
      throw refused("more values live at once than a lane keeps across its slots (" +
                    std::to_string(across.size()) + " registers from window " + std::to_string(from[v]) +
                    " to " + std::to_string(to[v]) + ")");
  }
  lane_code out{r.code, reg[0]};
  for (step& s : out.code) {
    s.dest = reg[std::size_t(s.dest)], s.a = reg[std::size_t(s.a)];
    s.b = s.b >= 0 ? reg[std::size_t(s.b)] : -1, s.c = s.c >= 0 ? reg[std::size_t(s.c)] : -1;
  }
  return out;
}

// The lanes' steps in the image (the calls in its slots, the places of no step a no-op), then
// every stall set over each window as write_vec() does; at a window's end, the last place waits
// until all the window wrote is ready; after a slot, a lane's steps start no earlier than nvcc's
// own first reader of the slot's result (its wait on the slot's code keeps its place). Where one
// lane's slot result arrives in a register another lane's steps write, the writer waits for the
// holder's last read of it.
void write_calls(const stencils& st, const call_image& im, const routed& r,
                 const lane_code (&lanes_code)[stencil::lanes], bytes& out) {
  constexpr int lanes = stencil::lanes;
  const step nothing{stencil::add, 255, 255, -1, -0.0f};
  const std::vector<step>* code[lanes];
  for (int l = 0; l < lanes; ++l) code[l] = &lanes_code[l].code;
  for (std::size_t n = 0; n < r.code.size(); ++n)  // the slots' functions
    if (r.code[n].call)
      std::memcpy(&out[calls_of(st, im.calls).slot_words + 4 * std::size_t(r.window[n])], &r.code[n].call, 4);
  std::vector<int> chosen(im.places.size(), -1);        // each place's lane
  std::vector<std::size_t> index(im.places.size(), 0);  // and its step there
  for (int w = 0; w <= im.calls; ++w) {
    std::vector<std::size_t> mine[lanes];  // lane l's steps in window w
    for (int l = 0; l < lanes; ++l)
      for (std::size_t n = 0; n < r.code.size(); ++n)
        if (r.window[n] == w && !r.code[n].call) mine[l].push_back(n);
    // A lane's step that writes the register another lane's slot result arrives in waits for that
    // lane's last read of it.
    struct wait {
      std::size_t step, lane, its;  // this lane's step waits for that lane's step `its`
    };
    std::vector<wait> after[lanes];
    if (w > 0)
      for (int h = 0; h < lanes; ++h) {
        const int held = im.lane[h].res[w - 1];
        std::size_t read = 0;
        for (std::size_t j = 0; j < mine[h].size(); ++j) {
          const step& s = (*code[h])[mine[h][j]];
          if (s.a == held || s.b == held || s.c == held) read = j + 1;
        }
        for (int l = 0; l < lanes; ++l)
          for (std::size_t j = 0; l != h && read > 0 && j < mine[l].size(); ++j)
            if ((*code[l])[mine[l][j]].dest == held) {
              after[l].push_back({j, std::size_t(h), read - 1});
              break;
            }
      }
    std::size_t next[lanes]{}, last_placed[lanes]{};
    std::vector<std::size_t> placed[lanes];
    for (int l = 0; l < lanes; ++l) placed[l].assign(mine[l].size(), ~std::size_t(0));
    const std::size_t first = w == 0 ? lanes : 0;
    for (std::size_t p = first; p < im.places.size(); ++p) {
      if (im.window[p] != w) continue;
      auto open = [&](int l, std::size_t q) {
        return im.window[q] == w && im.places[q] >= im.from[w][l] && im.places[q] < im.until[w][l];
      };
      int best = -1;
      for (int l = 0; l < lanes; ++l) {
        if (next[l] == mine[l].size() || !open(l, p)) continue;
        bool ready = true;
        for (const wait& a : after[l]) ready = ready && (a.step != next[l] || placed[a.lane][a.its] < p);
        const int dest = (*code[l])[mine[l][next[l]]].dest,
                  made = w < im.calls ? im.lane[l].arg[w] : im.lane[l].result;
        ready = ready && (dest != made || im.places[p] >= im.write_from[w][l]);
        if (!ready) continue;
        std::size_t before = 0;
        for (std::size_t q = p; q < im.places.size(); ++q) before += open(l, q);
        if (before < mine[l].size() - next[l])
          throw refused("a lane's steps do not fit the call image's window");
        if (before == mine[l].size() - next[l]) {
          best = l;
          break;
        }
        // else a lane another waits for, then the one that waited longest
        auto awaited = [&](int h) {
          for (int o = 0; o < lanes; ++o)
            for (const wait& a : after[o])
              if (int(a.lane) == h && a.its >= next[h]) return true;
          return false;
        };
        if (best < 0 || (awaited(l) && !awaited(best)) ||
            (awaited(l) == awaited(best) && last_placed[l] < last_placed[best]))
          best = l;
      }
      if (best < 0) continue;
      chosen[p] = best, index[p] = mine[best][next[best]], placed[best][next[best]] = p;
      last_placed[best] = p + 1, ++next[best];
    }
    for (int l = 0; l < lanes; ++l)
      if (next[l] < mine[l].size()) throw refused("more steps than the call image's window has places");
  }
  // The stalls, window by window
  for (std::size_t p = 0; p < im.places.size(); ++p)
    if (im.window[p] < 0) put(st, nothing, &out[im.places[p]]);
  int maker_order[lanes];  // the lane whose x goes where j is (every maker reads j) made last
  std::iota(std::begin(maker_order), std::end(maker_order), 0);
  std::stable_partition(std::begin(maker_order), std::end(maker_order),
                        [&](int l) { return lanes_code[l].x != im.maker[0][3]; });
  for (int w = 0; w <= im.calls; ++w) {
    window_clock clock(st);
    std::size_t p = 0;
    while (im.window[p] != w) ++p;
    const std::size_t from = im.places[p], to = w < im.calls ? im.window_last[std::size_t(w)] : im.last;
    std::vector<int> written;
    clear_reuse(&out[from - 16]);
    for (std::size_t offset = from; offset <= to; offset += 16) {
      unsigned char* slot = &out[offset];
      const bool place = p < im.places.size() && im.places[p] == offset;
      if (place && w == 0 &&
          p < lanes) {  // a lane's x: j * stencil::delta + its element, where the lane keeps x
        const int l = maker_order[p++];
        clock.make_x(slot, im.maker[l], lanes_code[l].x), written.push_back(lanes_code[l].x);
      } else if (place) {
        const int l = chosen[p];
        const step s = l >= 0 ? (*code[l])[index[p]] : nothing;
        ++p;
        clock.write(slot, s);
        if (s.dest != 255) written.push_back(s.dest);
      } else {  // not the patch's: in the last window it may read a lane's result
        int t = 0;
        for (int l = 0; l < lanes && w == im.calls; ++l)
          if (im.deadline[l] == offset) t = std::max(t, clock.ready(im.lane[l].result, stencil::addr));
        clock.issue(slot, t);
      }
    }
    // What follows (the slot's code, or the sums) reads what the window wrote: ready before it.
    int ready = 0;
    for (int reg : written) ready = std::max(ready, clock.done(reg));
    clock.settle(&out[to], ready);
  }
}

}  // namespace

// The smallest call image with a slot for each call whose windows and registers hold the op: the
// vec form alone (no scalar kernel), the slots' words and the windows' places patched.
compiled compile_calls(const stencils& st, const std::vector<step>& code, int result) {
  const int calls = calls_in(code);
  if (calls > stencil::max_calls)
    throw refused("more calls than a call image has slots (" + std::to_string(stencil::max_calls) + ")");
  const call_stencils& learnt = calls_of(st, calls);
  if (!learnt.unread.empty()) throw refused("no call images: " + learnt.unread);
  std::string why = "no call image for " + std::to_string(calls) + " calls: " + learnt.refusals;
  for (const call_image& im : learnt.images) {
    try {
      const routed r = route(im, code, result);
      lane_code lanes[stencil::lanes];
      for (int l = 0; l < stencil::lanes; ++l) lanes[l] = allocate_lane(r, im, l);
      compiled c{learnt.cubin, "", int(code.size()), code, result, im.kernel, ""};
      write_calls(st, im, r, lanes, c.image);
      return c;
    } catch (const refused& e) {
      why = e.what();
    }
  }
  throw refused(why);
}

}  // namespace cdl::copy_and_patch::patch
