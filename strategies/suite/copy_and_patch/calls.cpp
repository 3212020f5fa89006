// write.hpp's writing of an op that calls functions: its steps in a call image's windows, a slot for
// each call (the slot's word set to the function, its argument made where the slot reads it), the
// values that live across a call in the registers nvcc itself kept across that slot.
#include "strategies/suite/copy_and_patch/write.hpp"

#include <algorithm>
#include <bitset>
#include <cstring>
#include <map>
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
// in the slot's register, as the window's last step (nvcc may hold something else there until
// late); a call's result stays in the slot's through the window after it, and is copied at its end
// where a later window reads it (at its start, where something there writes the slot's register
// first: a step, or nvcc's own code in any lane); the op's value made last is made where the sum
// reads it. A passing slot (fn_pass) reads whatever its register holds, and nothing reads its result.
routed route(const call_image& im, const std::vector<step>& code, int result, unsigned copied = 0) {
  routed r;
  std::vector<int> def_window(code.size() + 2, 0), def_step(code.size() + 2, -1), readers(code.size() + 2, 0);
  std::vector<int> last_window(code.size() + 2, -1);
  int w = 0;
  for (std::size_t n = 0; n < code.size(); ++n) {
    def_window[std::size_t(code[n].dest)] = code[n].call ? w + 1 : w,
    def_step[std::size_t(code[n].dest)] = int(n);
    for (int v : {code[n].a, code[n].b, code[n].c})
      if (v >= 0 && code[n].call != stencil::fn_pass)
        ++readers[std::size_t(v)], last_window[std::size_t(v)] = w;
    w += code[n].call ? 1 : 0;
  }
  last_window[std::size_t(result)] = w;  // the sum reads it after the last slot (a passing one's too)
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
    if (!s.call || s.call == stencil::fn_pass) {
      if (s.call && pending >= 0) renamed[std::size_t(pending)] = copy(pending, w), pending = -1;
      r.code.push_back(s), r.window.push_back(w);
      w += s.call ? 1 : 0;
      continue;
    }
    const auto made_here = [&](int v) {  // in this window, by a step, and read by this call alone
      const int made = v == 0 ? -1 : def_step[std::size_t(v)];
      return (v == 0 ? w == 0
                     : made >= 0 && !code[std::size_t(made)].call && def_window[std::size_t(v)] == w) &&
             readers[std::size_t(v)] == 1;
    };
    if (!made_here(arg)) {
      s.a = copy(s.a, w);
    } else {
      const auto made =
          std::find_if(r.code.rbegin(), r.code.rend(), [&](const step& m) { return m.dest == s.a; });
      std::rotate(made.base() - 1, made.base(), r.code.end());
    }
    if (divisor >= 0 && !made_here(divisor)) s.b = copy(s.b, w);
    if (pending >= 0) renamed[std::size_t(pending)] = copy(pending, w), pending = -1;
    r.where[std::size_t(s.a)] = {fixed::arg, w};
    if (divisor >= 0) r.where[std::size_t(s.b)] = {fixed::divisor, w};
    r.code.push_back(s), r.window.push_back(w);
    r.where[std::size_t(s.dest)] = {fixed::res, w};
    ++w;
    bool rewritten = copied >> (w - 1) & 1;
    for (int l = 0; l < stencil::lanes; ++l) rewritten = rewritten || im.until[w][l] < im.end_of(w, l);
    if (rewritten && last_window[std::size_t(s.dest)] >= w)
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
  // The registers a value may hold from window `from` to window `to`: those kept across every slot
  // between; within one window, those kept across the slot before it or the slot after it (nvcc's
  // own code in a window names none of them: the learning dropped any it did). Never another lane's
  // result, its argument in window `to` or its slot result in window `from`: nvcc keeps them apart
  // only at the slots.
  std::bitset<256> others;  // another lane's across some slot: nvcc may give a register to one lane's
  for (int l = 0; l < stencil::lanes; ++l)  // chain at one slot and another lane's at the next
    for (int g = 0; g < im.calls && l != lane; ++g)
      for (int reg : im.lane[l].across[g]) others.set(std::size_t(reg));
  auto kept = [&](int from, int to) {
    std::vector<int> out;
    const auto in = [&](int g, int reg) {
      return g >= 0 && g < im.calls && std::count(regs.across[g].begin(), regs.across[g].end(), reg) > 0;
    };
    std::vector<int> some;  // those kept across one slot next to the window, or the first crossed
    for (int g : {from - 1, from})
      if (g >= 0 && g < im.calls && (from == to || g == from))
        some.insert(some.end(), regs.across[std::size_t(g)].begin(), regs.across[std::size_t(g)].end());
    std::sort(some.begin(), some.end());
    some.erase(std::unique(some.begin(), some.end()), some.end());
    for (int reg : some) {
      bool all = !others.test(std::size_t(reg));
      for (int g = from; g < to; ++g) all = all && in(g, reg);
      for (int l = 0; l < stencil::lanes; ++l)
        all =
            all && (l == lane || (im.lane[l].result != reg && (to == im.calls || im.lane[l].arg[to] != reg) &&
                                  (from == 0 || im.lane[l].res[from - 1] != reg)));
      if (all) out.push_back(reg);
    }
    return out;
  };
  // kept(from, to), those kept across fewer later slots first: once for each pair of windows
  std::map<std::pair<int, int>, std::vector<int>> known;
  auto ordered = [&](int from, int to) -> const std::vector<int>& {
    auto [at, added] = known.try_emplace({from, to});
    if (!added) return at->second;
    at->second = kept(from, to);
    auto later = [&](int R) {
      int n = 0;
      for (int g = to; g < im.calls; ++g)
        n += int(std::count(regs.across[g].begin(), regs.across[g].end(), R));
      return n;
    };
    std::stable_sort(at->second.begin(), at->second.end(), [&](int a, int b) { return later(a) < later(b); });
    return at->second;
  };
  // Each value's life: made at step `made` (x before the first), last read at `last`; the windows
  // of the two (a call's result is made in the window after its slot).
  const std::size_t values = r.where.size();
  std::vector<int> made(values, -1), last(values, -1), from(values, 0), to(values, 0), reg(values, -1);
  for (std::size_t n = 0; n < r.code.size(); ++n) {
    const step& s = r.code[n];
    made[std::size_t(s.dest)] = int(n), from[std::size_t(s.dest)] = r.window[n] + (s.call ? 1 : 0);
    for (int v : {s.a, s.b, s.c})
      if (v >= 0 && s.call != stencil::fn_pass)
        last[std::size_t(v)] = int(n), to[std::size_t(v)] = r.window[n];
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
  // the rest, those across the most slots first (they have the fewest registers to choose from): a
  // window's own registers first, where it stays in one
  std::vector<std::size_t> order(values);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return to[a] - from[a] > to[b] - from[b]; });
  for (const std::size_t v : order) {
    if (last[v] < 0 || reg[v] >= 0) continue;
    std::vector<int> candidates;
    if (from[v] == to[v]) {
      const int w = from[v];
      if (w < im.calls) candidates.push_back(regs.arg[w]);
      // the slot result's register, where nvcc does not write it again before the window's end
      if (w > 0 && im.until[w][lane] >= im.end_of(w, lane)) candidates.push_back(regs.res[w - 1]);
      if (w == im.calls) candidates.push_back(regs.result);
    }
    const std::vector<int>& across = ordered(from[v], to[v]);
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
patched write_calls(const stencils& st, const call_image& im, const routed& r,
                    const lane_code (&lanes_code)[stencil::lanes], const call_stencils& learnt) {
  constexpr int lanes = stencil::lanes;
  const step nothing{stencil::add, 255, 255, -1, -0.0f};
  const std::vector<step>* code[lanes];
  for (int l = 0; l < lanes; ++l) code[l] = &lanes_code[l].code;
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
    // Lane l's steps before bound[l] name the register its slot result arrives in, which nvcc
    // writes again at until[w][l]: they go before it. The rest may go to the window's end (the last
    // window's: where the sum reads the lane's result).
    std::size_t bound[lanes]{};
    for (int l = 0; l < lanes && w > 0; ++l) {
      const int held = im.lane[l].res[w - 1];
      for (std::size_t j = 0; j < mine[l].size(); ++j) {
        const step& s = (*code[l])[mine[l][j]];
        if (s.dest == held || s.a == held || s.b == held || s.c == held) bound[l] = j + 1;
      }
    }
    const auto open = [&](int l, std::size_t q, bool held) {
      const std::size_t end = held ? im.until[w][l] : w == im.calls ? im.deadline[l] : ~std::size_t(0);
      return im.window[q] == w && im.places[q] >= im.from[w][l] && im.places[q] < end;
    };
    // the places from each on open to each lane's steps, and to those before bound[l]
    std::vector<std::size_t> open_from[lanes], held_from[lanes];
    for (int l = 0; l < lanes; ++l) {
      open_from[l].assign(im.places.size() + 1, 0), held_from[l].assign(im.places.size() + 1, 0);
      for (std::size_t q = im.places.size(); q-- > 0;)
        open_from[l][q] = open_from[l][q + 1] + open(l, q, false),
        held_from[l][q] = held_from[l][q + 1] + open(l, q, true);
    }
    const std::size_t first = w == 0 ? lanes : 0;
    for (std::size_t p = first; p < im.places.size(); ++p) {
      if (im.window[p] != w) continue;
      int best = -1;
      for (int l = 0; l < lanes; ++l) {
        if (next[l] == mine[l].size() || !open(l, p, next[l] < bound[l])) continue;
        bool ready = true;
        for (const wait& a : after[l]) ready = ready && (a.step != next[l] || placed[a.lane][a.its] < p);
        const int dest = (*code[l])[mine[l][next[l]]].dest,
                  made = w < im.calls ? im.lane[l].arg[w] : im.lane[l].result;
        ready = ready && (dest != made || im.places[p] >= im.write_from[w][l]);
        if (!ready) continue;
        const std::size_t before = open_from[l][p], before_held = held_from[l][p],
                          left = mine[l].size() - next[l], held = bound[l] > next[l] ? bound[l] - next[l] : 0;
        if (before < left || before_held < held)
          throw refused("a lane's steps do not fit the call image's window");
        if (before == left || (held > 0 && before_held == held)) {
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
  // The kernel's instructions and the slots' words copied (once the steps have places), the slots'
  // functions, then the stalls, window by window
  patched out(learnt.cubin);
  out.copy(text_of(learnt.kernels.at(im.kernel))), out.copy(learnt.slot_words);
  for (std::size_t n = 0; n < r.code.size(); ++n)
    if (r.code[n].call) {
      const unsigned word = r.code[n].call == stencil::fn_pass ? stencil::pass_word : r.code[n].call;
      std::memcpy(&out[learnt.slot_words.offset + 4 * std::size_t(r.window[n])], &word, 4);
    }
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
  return out;
}

// The most steps between two calls (or before the first, or after the last).
int fullest(const std::vector<step>& code) {
  int most = 0, n = 0;
  for (const step& s : code) s.call ? n = 0 : most = std::max(most, ++n);
  return most;
}

// Value v of an op in an image of `spare` slots more than it calls: pad()'s numbering, the passing
// slots' values first (x, 0, stays).
int moved(int v, int spare) { return v > 0 ? v + spare : v; }

// The op's steps with a passing slot (fn_pass) for each of an image's slots it does not call:
// first in each window with more steps than the image's windows have places (each where the fewest
// values live across it, of those the nearest an even share: route() may add copies), the rest
// before the op's steps, or after them. The passing slots' values are 1 to slots - calls, the op's
// moved up by as many. Empty where the slots to spare do not split every window enough.
std::vector<step> pad(const std::vector<step>& code, int result, int slots, int places, bool after) {
  const int shift = slots - calls_in(code);
  if (places < 1) return {};
  std::vector<int> made(code.size() + 1, -1), last(code.size() + 1, -1);  // each value's steps
  for (std::size_t n = 0; n < code.size(); ++n) {
    made[std::size_t(code[n].dest)] = int(n);
    for (int v : {code[n].a, code[n].b, code[n].c})
      if (v >= 0) last[std::size_t(v)] = int(n);
  }
  last[std::size_t(result)] = int(code.size());
  const auto live = [&](int n) {  // values made before step n and read at it or after
    int count = 0;
    for (std::size_t v = 0; v < made.size(); ++v) count += made[v] < n && last[v] >= n;
    return count;
  };
  std::vector<int> splits;  // the steps a passing slot goes before
  for (std::size_t b = 0; b < code.size() || b == 0;) {
    std::size_t e = b;  // the window: steps b to e
    while (e < code.size() && !code[e].call) ++e;
    for (int start = int(b), left = int(e - b); left > places;) {
      const int chunks = (left + places - 1) / places;  // windows still to fill, this one included
      const int even = left / chunks;
      int best = -1;
      for (int p = std::max(1, left - (chunks - 1) * places); p <= places; ++p)
        if (best < 0 || live(start + p) < live(start + best) ||
            (live(start + p) == live(start + best) && std::abs(p - even) < std::abs(best - even)))
          best = p;
      splits.push_back(start + best), start += best, left -= best;
    }
    b = e + 1;
  }
  if (int(splits.size()) > shift) return {};
  std::vector<step> out;
  int g = 0;
  const auto pass = [&] { out.push_back({-1, 1 + g++, 0, -1, 0.0f, -1, stencil::fn_pass}); };
  const int spare = shift - int(splits.size());
  while (!after && g < spare) pass();
  for (std::size_t n = 0; n < code.size(); ++n) {
    if (std::count(splits.begin(), splits.end(), int(n)) > 0) pass();
    step s = code[n];
    s.dest = moved(s.dest, shift), s.a = moved(s.a, shift), s.b = moved(s.b, shift), s.c = moved(s.c, shift);
    out.push_back(s);
  }
  while (g < shift) pass();
  return out;
}

}  // namespace

// The smallest call image with a slot for each call whose windows and registers hold the op: the
// vec form alone (no scalar kernel), the slots' words and the windows' places patched. Where the
// images have more slots than the op has calls, the others pass (pad()): they split the op's
// crowded windows, or come before or after its steps.
compiled compile_calls(const stencils& st, const std::vector<step>& code, int result) {
  const int calls = calls_in(code);
  if (calls > stencil::max_calls)
    throw refused("more calls than a call image has slots (" + std::to_string(stencil::max_calls) + ")");
  const int first = *std::find_if(std::begin(stencil::call_counts), std::end(stencil::call_counts),
                                  [&](int slots) { return slots >= calls; });
  // why the first count's images refuse it; and which of them this architecture has not learnt
  std::string why = "no call image holds its " + std::to_string(calls) + " calls", unlearnt;
  for (const int slots : stencil::call_counts) {
    if (slots < calls) continue;
    const call_stencils& learnt = calls_of(st, slots);
    if (!learnt.unread.empty()) throw refused("no call images: " + learnt.unread);
    const int value = moved(result, slots - calls);
    for (std::size_t i = 0; i < std::size(stencil::call_shapes); ++i) {
      // the windows filled up to their places, then a place or two short (for route()'s copies);
      // the spare slots before the op's steps, then after them (a slot may hold no quotient)
      std::vector<std::vector<step>> paddings;
      for (int room = stencil::call_shapes[i].steps, least = room - 2; room >= least && room > 0; --room)
        for (const bool after : {false, true})
          if (std::vector<step> p = pad(code, result, slots, room, after);
              !p.empty() && std::find(paddings.begin(), paddings.end(), p) == paddings.end())
            paddings.push_back(std::move(p));
      if (paddings.empty()) {
        if (slots == first)
          why = "more steps between two calls (" + std::to_string(fullest(code)) +
                ") than a call image's window has places";
        continue;
      }
      if (learnt.image(i) == nullptr) {
        if (slots == first && !learnt.refusals().empty())
          unlearnt = "; images of " + std::to_string(slots) + " slots not learnt: " + learnt.refusals();
        continue;
      }
      const call_image& im = *learnt.image(i);
      for (const std::vector<step>& padded : paddings) try {
          const routed r = route(im, padded, value);
          lane_code lanes[stencil::lanes];
          for (int l = 0; l < stencil::lanes; ++l) lanes[l] = allocate_lane(r, im, l);
          return compiled{
              write_calls(st, im, r, lanes, learnt), "", int(padded.size()), padded, value, im.kernel, ""};
        } catch (const refused& e) {
          if (slots == first && &padded == &paddings.front()) why = e.what();
        }
    }
  }
  throw refused(why + unlearnt);
}

}  // namespace cdl::copy_and_patch::patch
