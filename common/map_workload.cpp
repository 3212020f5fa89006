// map_workload.hpp's problem, inputs, float64 reference and fixture; the kernels are in
// skeletons/map.cuh, and each strategy's launch in strategies/.
#include "map_workload.hpp"

#include "expression.hpp"
#include "inputs.hpp"
#include "parallel.hpp"
#include "reference_cache.hpp"
#include "skeletons/map.cuh"

#include <algorithm>
#include <cmath>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

namespace cdl {

std::string map_problem::describe() const {
  return "map op=" + std::string(info(op).name) + " type=" + std::string(to_string(type)) +
         " n=" + std::to_string(n) + " k=" + std::to_string(k);
}

namespace {
// Each term's float64 value and scale: bounded(argument) where given, else f's value and its |value|.
template <class T, class F>
std::vector<reference_value> map_reference_of(const F& f, std::span<const T> x, int k,
                                              const std::function<reference_value(double)>& bounded = {}) {
  const auto of = [&f](double arg) {
    const double v = f(arg);
    return reference_value{v, std::fabs(v)};
  };
  std::vector<reference_value> ref(x.size());
  parallel_for(x.size(), worker_count(x.size() * std::size_t(k)),
               [&](std::size_t, std::size_t begin, std::size_t end) {
                 for (std::size_t i = begin; i < end; ++i) {
                   reference_value r;
                   for (int j = 0; j < k; ++j) {
                     const double arg = double(map_arg(x[i], j));  // argument rounded in T, op in double
                     const reference_value term = bounded ? bounded(arg) : of(arg);
                     r.value += term.value;
                     r.scale += term.scale;
                   }
                   ref[i] = r;
                 }
               });
  return ref;
}
}  // namespace

template <class T>
std::vector<reference_value> map_reference(map_op op, std::span<const T> x, int k) {
  return visit_op(op, [&](auto f) { return map_reference_of(f, x, k); });
}
template std::vector<reference_value> map_reference<float>(map_op, std::span<const float>, int);
template std::vector<reference_value> map_reference<double>(map_op, std::span<const double>, int);

double map_tolerance(const map_problem& p, int max_ulps) {
  return tolerance_for(epsilon_of(p.type), max_ulps, p.k);
}

namespace {
// The host side of the problems this process made last: a (type, n, seed)'s inputs and a catalogue
// problem's reference, kept up to `kept_bytes` in all and handed out shared. The GPU tests run
// entry after entry on the same problems, and making these is most of a test's host work. A
// fixture still uploads the inputs into a device buffer of its own, so a kernel that writes where it
// must not cannot change what the next one reads. A value larger than the budget is not kept.
constexpr std::size_t kept_bytes = std::size_t(768) << 20;  // an op and type's problems in the tests
struct kept_value {
  std::string key;
  std::shared_ptr<const void> value;
  std::size_t bytes;
};
struct kept_store {
  std::mutex mutex;
  std::list<kept_value> values;  // the most recently asked first
};
// Made at the first value kept, after the CUDA runtime's first call (a fixture's device buffers, a
// test's check for a GPU): destroyed at exit before the runtime's teardown, while the inputs kept
// can still be unregistered.
kept_store& store() {
  static kept_store s;
  return s;
}

// Inputs as kept: page-locked (cudaHostRegister) while they are, so that each fixture's upload of
// them is the copy engine's alone, where one from pageable memory is staged by the CPU through the
// driver's buffers. Inputs larger than the budget are not kept, and not registered.
template <class T>
class kept_inputs : public std::vector<T> {
 public:
  explicit kept_inputs(std::vector<T> v) : std::vector<T>(std::move(v)) {
    const std::size_t bytes = this->size() * sizeof(T);
    if (bytes == 0 || bytes > kept_bytes) return;
    CDL_CUDA_CHECK(cudaHostRegister(this->data(), bytes, cudaHostRegisterDefault));
    registered_ = true;
  }
  kept_inputs(kept_inputs&& other) noexcept
      : std::vector<T>(std::move(other)), registered_(std::exchange(other.registered_, false)) {}
  kept_inputs(const kept_inputs&) = delete;
  kept_inputs& operator=(const kept_inputs&) = delete;
  kept_inputs& operator=(kept_inputs&&) = delete;
  // Unchecked: a destructor must not throw (the values still kept at exit go before the runtime's
  // teardown: store(), above).
  ~kept_inputs() {
    if (registered_) cudaHostUnregister(this->data());
  }

 private:
  bool registered_ = false;
};

template <class V, class Make>
std::shared_ptr<const V> kept(const std::string& key, Make make) {
  kept_store& s = store();
  {
    const std::lock_guard lock(s.mutex);
    const auto found = std::ranges::find(s.values, key, &kept_value::key);
    if (found != s.values.end()) {
      s.values.splice(s.values.begin(), s.values, found);
      return std::static_pointer_cast<const V>(found->value);
    }
  }
  auto value = std::make_shared<const V>(make());  // unlocked: another thread may make another
  const std::size_t bytes = value->size() * sizeof(typename V::value_type);
  if (bytes > kept_bytes) return value;
  const std::lock_guard lock(s.mutex);
  s.values.push_front({key, value, bytes});
  std::size_t total = 0;
  for (auto it = s.values.begin(); it != s.values.end();)
    it = (total += it->bytes) > kept_bytes ? s.values.erase(it) : std::next(it);
  return value;
}
}  // namespace

// reference(x, k) gives the float64 reference for inputs x of the problem's type.
template <class Reference>
map_fixture::map_fixture(const map_problem& p, std::uint64_t seed, Reference reference, double tolerance)
    : workload_fixture(p, p.type, p.n, tolerance), x_(p.n * size_of(p.type)) {
  if (p.k < 1) throw error("map: k must be at least 1, got " + std::to_string(p.k));
  visit_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    const std::string key = "inputs type=" + std::string(to_string(p.type)) + " n=" + std::to_string(p.n) +
                            " seed=" + std::to_string(seed);
    const auto x = kept<kept_inputs<T>>(key, [&] { return kept_inputs<T>(uniform_inputs<T>(p.n, seed)); });
    CDL_CUDA_CHECK(cudaMemcpy(x_.data(), x->data(), x_.bytes(), cudaMemcpyHostToDevice));
    kept_reference_ = reference(std::span<const T>(*x), p.k);
  });
}

// A catalogue op's reference is kept (above), and may come from the cache the test processes share
// (reference_cache.hpp).
map_fixture::map_fixture(const map_problem& p, std::uint64_t seed)
    : map_fixture(
          p, seed,
          [&](auto x, int k) {
            return kept<std::vector<reference_value>>(p.describe() + " seed=" + std::to_string(seed), [&] {
              return shared_reference(p.describe(), seed, double(p.n) * k,
                                      [&] { return map_reference(p.op, x, k); });
            });
          },
          map_tolerance(p)) {}

map_fixture::map_fixture(const map_problem& p, std::uint64_t seed, const custom_map_op& op)
    : map_fixture(
          p, seed,
          [&](auto x, int k) {
            return std::make_shared<const std::vector<reference_value>>(
                map_reference_of(op.reference, x, k, op.bounded));
          },
          map_tolerance(p, op.max_ulps)) {}

custom_map_op language_op(const expr::program& p, int max_ulps) {
  return {[&p](double x) { return expr::evaluate(p, x); }, max_ulps,
          [&p](double x) {
            const expr::bounded b = expr::evaluate_bounded(p, x);
            return reference_value{b.value, b.magnitude};
          }};
}

void map_fixture::launch(const map_launcher& fn, map_form form, cudaStream_t stream) const {
  fn(map_launch{problem_.op, problem_.type, form, x_.data(), output<void>(), problem_.n, problem_.k, stream});
}

}  // namespace cdl
