// Strategy 17's learning: what the engine takes from the cubins of stencils nvcc compiled (stencils.cu),
// by their markers, before it writes an op: each operation's instruction and which of its bytes are
// which register; the cycles one operation's result takes to reach another's read; and each image's
// region (the places an op's instructions go, the registers they may use, where x is and where the
// result must be), the vec images' lanes and the call images' windows and slots. A cubin that does
// not read as the learning expects is refused (failed), naming the kernel and what it found.
#pragma once

#include "strategies/suite/copy_and_patch/cubin.hpp"
#include "strategies/suite/copy_and_patch/stencils.hpp"

#include <array>
#include <bitset>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace cdl::copy_and_patch::patch {

// A cubin that breaks what the learning takes as given: what() names the kernel and the step.
struct failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct form {                 // an operation's instruction
  insn code{};                // as the compiler wrote it
  int a = 3, b = -1, c = -1;  // the fields of the registers it reads (stencil::registers_read)
  bool negated = false;       // the immediate is -c (a - c is written a + (-c))
};
struct image {  // an image an op is written into
  std::string kernel;
  std::vector<std::size_t> steps;  // file offsets of its steps' instructions, in the order they run
  int x = -1;                      // the register holding x + j * delta on entry
  int result = -1;                 // where the sum after the region reads the op's value
  std::vector<int> pool;           // every register the region may write
  // The sum after the region (acc += the op's value, an add of two registers into one of them):
  // where the op's value is a product, the patch writes the product there instead (acc = a * b +
  // acc, one instruction, as nvcc fuses it), so that the region holds one step fewer. 0 where the
  // first reader of the result is no such add.
  std::size_t sum = 0;
  int acc = -1;                // the register summed into
  std::bitset<256> clobbered;  // what nvcc writes between the region and the sum: no factor there
};
// A vec image (four elements a thread): the compiler interleaved the lanes' steps and gave them
// registers across lanes, so the patch keeps only the places. Inside its window (the first
// instruction making a lane's x to the last step) the places of the steps and of x's makers take
// the four makers first, then the lanes' steps in any interleaving; each lane gets its own
// registers from those the window's steps and makers wrote, so that the lanes never meet.
struct vec_image {
  std::string kernel;
  int steps = 0;                           // a lane's region
  std::size_t last = 0;                    // the window's last instruction's offset
  std::vector<std::size_t> places;         // the offsets of x's makers and the steps, in order
  insn maker[stencil::lanes]{};            // the instruction making lane l's x: j * delta + x[i + l]
  std::size_t deadline[stencil::lanes]{};  // lane l's result is read here (the window's end: after it)
  image lane[stencil::lanes];              // lane l's registers: x, result and pool, as a scalar image's
};
// The vec images (stencil::vec_region_sizes, smallest first), each learnt the first time an op is
// tried in it (whichever thread asks first): a new process's first op waits for the few it is tried
// in, not for all of them.
class vec_images {
 public:
  std::size_t size() const { return std::size(stencil::vec_region_sizes); }
  // the i-th, learnt now where it was not yet; throws failed where its kernel does not read as
  // expected, naming the architecture
  const vec_image& operator[](std::size_t i) const;
  const vec_image* named(const std::string& kernel) const;  // one learnt already, or null
  std::function<vec_image(int steps)> learn;                // learn()'s, for operator[]

 private:
  struct state {
    std::mutex learning;
    std::vector<std::unique_ptr<vec_image>> learnt =
        std::vector<std::unique_ptr<vec_image>>(std::size(stencil::vec_region_sizes));
  };
  std::shared_ptr<state> state_ = std::make_shared<state>();
};
// A call image (an op that calls functions): the vec image's lanes, their steps in windows that
// the slots part (window g runs before slot g, window g + 1 after it), each lane's registers
// those nvcc gave its chains there: a value that lives across a slot must be in one nvcc kept
// across it (a chain's), since the slot's code may write any other.
struct call_image {
  std::string kernel;
  int calls = 0;                           // its slots
  std::vector<std::size_t> places;         // the offsets of x's makers and the steps, in order
  std::vector<int> window;                 // each place's window; -1 between two (a no-op)
  std::vector<std::size_t> window_last;    // window g's last place: what slot g reads is ready after it
  insn maker[stencil::lanes]{};            // as a vec image's
  std::size_t deadline[stencil::lanes]{};  // the last window: lane l's result is read here
  // window w: lane l's steps from here (after a slot, nvcc's own first reader of its result); those
  // that name the register its slot result arrives in before here (nvcc writes it again there; in
  // the last window, every step: the sum reads the result there)
  std::size_t from[stencil::max_calls + 1][stencil::lanes]{}, until[stencil::max_calls + 1][stencil::lanes]{};
  // window w: the step that writes lane l's slot argument (the result, in the last) goes here or
  // after: after every instruction of nvcc's that names that register first, and where nvcc writes
  // it and only its own step there reads it, at that step's place (whose wait on nvcc's write, kept,
  // covers what may land late); 0 where nothing constrains it
  std::size_t write_from[stencil::max_calls + 1][stencil::lanes]{};
  std::size_t last = 0;  // the last place
  // window w's end for lane l: the slot after it, or in the last window where the sum reads the result
  std::size_t end_of(int w, int l) const {
    return w < calls ? window_last[std::size_t(w)] + 16 : deadline[l];
  }
  struct lane_registers {
    std::vector<int> across[stencil::max_calls];  // kept by slot g: a value of the op that lives across it
    int arg[stencil::max_calls]{}, res[stencil::max_calls]{};  // what slot g reads, and writes
    // what slot g divides by (chain 1's register, kept across it), or -1: no quotient there
    std::array<int, stencil::max_calls> divisor = [] {
      std::array<int, stencil::max_calls> none;
      none.fill(-1);
      return none;
    }();
    int result = -1;  // where the sum reads the op's value
  } lane[stencil::lanes];
};
// A kernel's own cubin, which the build makes beside the file of every image (ptxas --entry on the
// same PTX): where its machine code and constant bank are the same bytes as in the file the image
// was learnt from (checked when learning), an op's image is that cubin with the patched bytes copied
// in, and loads alone: the driver's load of a library takes longer the more code the context holds.
struct own_cubin {
  bytes cubin;
  std::vector<std::pair<section, section>> copied;  // what the patch may write: in the file, in this one
};
// The own cubins of a file's kernels, each read the first time an op's image in it is loaded
// (whichever thread asks first), so that learning reads no file an op may never need.
class own_cubins {
 public:
  own_cubins() = default;
  explicit own_cubins(std::string prefix) : read_(std::make_shared<state>()) {
    read_->prefix = std::move(prefix);
  }
  // kernel's, its code and constants checked against `file`'s (the file it is in); null where the
  // build made none or they differ: the image loads the whole file
  const own_cubin* of(const std::string& kernel, const bytes& file) const;

 private:
  struct state {
    std::string prefix;  // where they are: <prefix>alone/<kernel>.cubin
    std::mutex reading;
    std::map<std::string, std::unique_ptr<own_cubin>> read;  // by kernel, null where there is none
  };
  std::shared_ptr<state> read_;
};

// The call images with a count of slots (a cubin each), read the first time an op makes that many
// calls (most ops call none, and an op's first call need not wait for the other cubins), and each
// image learnt the first time an op is tried in it (most ops go into one of the first).
struct call_stencils {
  bytes cubin;                                 // the file an op's image is patched from (write.hpp's patched)
  std::map<std::string, kernel_code> kernels;  // each kernel's instructions in it
  section slot_words;                          // where in it the slots' words are
  int slots = 0;                               // each image's
  own_cubins own;
  std::string unread;     // why the file could not be read: every op with this many calls is refused
  std::once_flag learnt;  // calls_of() reads them once a process
  // The image of stencil::call_shapes[i], learnt once a process (whichever thread asks first); null
  // where the learning refused it, saying why in refusals(), or the shape is not built for this many
  // slots.
  const call_image* image(std::size_t i) const;
  const call_image* named(const std::string& kernel) const;  // one learnt already, or null
  std::string refusals() const;                              // of the images learnt so far
  std::function<call_image(stencil::call_shape)> learn;      // calls_of()'s, for image()
 private:
  mutable std::mutex learning;
  mutable std::vector<std::unique_ptr<call_image>> images_ =
      std::vector<std::unique_ptr<call_image>>(std::size(stencil::call_shapes));
  mutable std::vector<bool> tried_ = std::vector<bool>(std::size(stencil::call_shapes));
  mutable std::string refusals_;
};
struct stencils {
  bytes cubin;                                 // the images' file, each op's image patched from it
  std::map<std::string, kernel_code> kernels;  // each kernel's instructions in it
  int arch = 0;                                // the architecture they were compiled for: 90 for sm_90
  std::vector<image> images;
  patch::vec_images vec_images;
  own_cubins own;
  std::string prefix;  // where the cubins are: calls_of() reads the call images' from there
  int exit = -1;       // the exit's operation: each image kernel's last before its branch to itself
  int branch = -1;     // the branch's operation (the learning of a sum stops at one)
  std::shared_ptr<std::array<call_stencils, stencil::max_calls + 1>> calls =
      std::make_shared<std::array<call_stencils, stencil::max_calls + 1>>();
  form forms[stencil::count];
  int latency[stencil::count][stencil::count]{};  // cycles from one's result to the other's read
  int latency_margin = 0;                         // the largest latency less the least
};

// Which learnt operation instruction i is (its form but for its operands and constant), or
// stencil::count where it is none of them.
int operation_of(const stencils& st, const insn& i);

// The stencils learnt from the cubins whose paths begin with `prefix`: stencils.cubin and
// images.cubin (each vec image the first time an op is tried in it; calls_of() learns the call
// images, calls_N.cubin for N calls, when an op first needs them); each image kernel's own cubin
// read from alone/<kernel>.cubin, where the build made one, when its image first loads.
stencils learn(const std::string& prefix);
// The call images with `calls` slots (1 to stencil::max_calls), learnt the first time an op asks
// for them (once a process, whichever thread asks first); where they cannot be read, why is kept
// and refuses every op with that many calls.
const call_stencils& calls_of(const stencils& st, int calls);

}  // namespace cdl::copy_and_patch::patch
