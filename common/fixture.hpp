// What every workload fixture does the same way. A fixture owns one problem: its inputs on the
// device, the float64 reference and the output buffer every run writes, so that tests,
// benchmarks and demos run a strategy the same way. workload_fixture is the half that does not
// depend on the workload; each *_workload.hpp derives from it, uploads its inputs and says how
// its buffers reach a strategy's launch function.
#pragma once

#include "check.hpp"
#include "device_buffer.hpp"
#include "types.hpp"
#include "validation.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cdl {

// Fills count elements of type at output with the poison (validation.hpp), on stream.
void poison(void* output, dtype type, std::size_t count, cudaStream_t stream);

// Synchronises `stream`, downloads `count` elements of `type` and validates them.
validation_result download_and_validate(const void* output, dtype type, std::size_t count,
                                        const std::vector<reference_value>& reference, double tolerance,
                                        cudaStream_t stream);

// Derived provides `void launch(LaunchFn fn, Form form, cudaStream_t stream) const`, which
// enqueues `fn` on the fixture's buffers without synchronising, and may hide reference_for
// where the reference depends on the form (the points layouts).
template <class Derived, class Problem, class LaunchFn, class Form>
class workload_fixture {
 public:
  using problem_type = Problem;
  const Problem& problem() const { return problem_; }
  const std::vector<reference_value>& reference_for(Form) const { return reference_; }

  // Fills the output with the poison, launches, synchronises and compares every element: a
  // kernel that skips an element cannot pass on what an earlier run left there.
  validation_result run_and_validate(LaunchFn fn, Form form, cudaStream_t stream = nullptr) const {
    const Derived& self = static_cast<const Derived&>(*this);
    const std::size_t count = output_.bytes() / size_of(output_type_);
    poison(output_.data(), output_type_, count, stream);
    self.launch(fn, form, stream);
    return download_and_validate(output_.data(), output_type_, count, self.reference_for(form), tolerance_,
                                 stream);
  }

 protected:
  workload_fixture(const Problem& p, dtype output_type, std::size_t output_count, double tolerance)
      : problem_(p),
        tolerance_(tolerance),
        output_type_(output_type),
        output_(output_count * size_of(output_type)) {}

  template <class T>
  T* output() const {
    return reinterpret_cast<T*>(output_.data());
  }

  Problem problem_;
  double tolerance_;
  dtype output_type_;
  std::vector<reference_value> reference_;

 private:
  mutable device_buffer<std::byte> output_;  // written by every run; inputs and reference stay const
};

// The fixture of a workload whose fixture is its inputs on the device and nothing more (zip, image,
// tasks, matmul, objects): Inputs, the workload's struct of device buffers, uploaded by the
// constructor, and the launch that hands them to a strategy; the workload's .cu defines the two.
template <class Problem, class LaunchFn, class Form, class Inputs>
class fixture : public workload_fixture<fixture<Problem, LaunchFn, Form, Inputs>, Problem, LaunchFn, Form> {
 public:
  fixture(const Problem& p, std::uint64_t seed);
  void launch(LaunchFn fn, Form form, cudaStream_t stream) const;

 private:
  Inputs in_;
};

}  // namespace cdl
