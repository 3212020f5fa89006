// Small vocabulary shared by every workload: element types and kernel forms.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace cdl {

enum class dtype { f32, f64 };

inline std::string_view to_string(dtype t) { return t == dtype::f32 ? "f32" : "f64"; }
inline dtype parse_dtype(std::string_view text) {
  if (text == "f32" || text == "float") return dtype::f32;
  if (text == "f64" || text == "double") return dtype::f64;
  throw std::invalid_argument("unknown element type '" + std::string(text) + "' (valid: f32, f64)");
}
inline std::size_t size_of(dtype t) { return t == dtype::f32 ? 4 : 8; }

// Calls f(T{}) with T the C++ type named by t.
template <class F>
decltype(auto) visit_dtype(dtype t, F&& f) {
  if (t == dtype::f32) return f(float{});
  return f(double{});
}

// How an elementwise kernel walks its data. `scalar` is one element per thread, the form every
// article writes; `vec` loads and stores 16 bytes per access (whole vectors only: any other n
// runs scalar), the form that reaches the memory system's bandwidth; `staged` is scalar with each
// block's inputs copied through shared memory first, the articles' advice (the shared-memory
// lesson measures it).
enum class map_form { scalar, vec, staged };

inline std::string_view to_string(map_form f) {
  return f == map_form::scalar ? "scalar" : f == map_form::vec ? "vec" : "staged";
}
inline map_form parse_map_form(std::string_view text) {
  if (text == "scalar") return map_form::scalar;
  if (text == "vec") return map_form::vec;
  if (text == "staged") return map_form::staged;
  throw std::invalid_argument("unknown kernel form '" + std::string(text) + "' (valid: scalar, vec, staged)");
}

}  // namespace cdl
