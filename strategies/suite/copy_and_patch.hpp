// Strategy 17's suite form (17_copy_and_patch.cu), for its registry entries, cdl_run --expr, the
// tests and the compile-time benchmarks.
#pragma once

#include "common/map_workload.hpp"
#include "common/registry.hpp"
#include "strategies/suite/jit_kernels.hpp"

#include <string>
#include <vector>

namespace cdl::copy_and_patch {

// The map of a user's op (08's language) through an image nvcc compiled ahead of time with the
// op's instructions written into it: float; four elements a thread where a.form is vec, x and y
// are 16-byte aligned and the op fits the vec image (scalar_only says why where it does not),
// else an element a thread. Patched and loaded the first time a text is seen (from the program
// op carries, else its text parsed), found by it after.
// cdl::error where the op, the element type or this GPU is refused: its message says why and
// which routes run it instead (08, 16).
void launch_map(const map_launch& a, const jit::op_text& op);

// Patches and loads text's image now, as launch_map does at its first launch (10's compile thread
// makes its tier so): true, or false where 17 refuses the op, the type t or the form (refusal() and
// vec_alone() say why).
bool load(const jit::op_text& op, dtype t, map_form form);

// Why launch_map would refuse text at type t, with the routes to use instead; empty where it runs
// it. Learns the stencils (once a process) and patches no image: nothing is loaded.
std::string refusal(const std::string& text, dtype t);

// The same with no GPU (the stencils read for the host, whatever architecture they are for): what
// the registry asks of the dispatch sweep's problems, at its listing.
std::string refusal_on_host(const std::string& text, dtype t);

// Why text runs in no scalar image (it calls a function: the call images are vec alone), with the
// routes that run it; empty where it has one (or where it is refused altogether).
std::string vec_alone(const std::string& text);

// Why text runs in the scalar image even where the vec form is asked for; empty where it has a vec
// image (or where it is refused altogether: see refusal()).
std::string scalar_only(const std::string& text);

// With no GPU: text patched from the stencils (whatever architecture they were built for), the
// images (scalar and vec) decoded with the learnt forms and run on the host against the op's
// steps, at k = 3 and `samples` values of x (the lesson's --check). Empty where every value
// agrees; else why not (the refusal, or the first value whose machine code computes something
// else). Not the timing, which only a GPU run shows.
std::string check_on_host(const std::string& text, int samples = 64);

// With no GPU: what the machine code patched for text computes, decoded and run on the host: each
// element of xs through k steps of the map (x + j * delta), in the scalar image or (vec) the vec
// image's lanes; empty where text has no image of that form. The tests set it beside their own
// evaluator of the language, not beside 17's steps.
std::vector<float> machine_on_host(const std::string& text, const std::vector<float>& xs, int k, bool vec);

// With no GPU: the first place in text's patched image where an instruction of the patch issues
// before what it reads is ready (by the latencies the stencils taught), or writes a register before
// an earlier write to it has landed; empty where there is none. `shorten` takes that many cycles off
// every stall first (the tests' way to see the check fail).
std::string schedule_on_host(const std::string& text, int shorten = 0);

// With no GPU: text's steps, by their operations' names (the selection the machine code is written
// from), and what they compute for x at k = 1 (the tests of the selection).
std::vector<std::string> steps_on_host(const std::string& text);
float value_on_host(const std::string& text, float x);

// With no GPU: whether 17 takes text at type t, and how, in words (cdl_run --explain): its steps,
// and for each form the image it is written into (its places, its slots and their functions), its
// machine code decoded and run on the host against the steps; or why a form is refused and which
// routes run it. taken: 17 takes it in at least one form, its machine code agreeing with its steps.
route_explanation explain_on_host(const std::string& text, dtype t);

// Where 17's cubins are read from (the path up to "stencils.cubin", "images.cubin", "calls_N.cubin"):
// CDL_PLUGIN_DIR from the environment, else the build's plugins/.
std::string stencils_prefix();

}  // namespace cdl::copy_and_patch
