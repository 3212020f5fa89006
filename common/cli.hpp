// Command-line vocabulary shared by the programs: sizes written the way people write them.
#pragma once

#include "check.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace cdl {

// "1000", "1e8" or "2^24" -> a count; anything else (negative, fractional, trailing text) throws.
inline std::size_t parse_size(const std::string& text) try {
  std::size_t used = 0;
  if (text.rfind("2^", 0) == 0) {
    const int e = std::stoi(text.substr(2), &used);
    if (used + 2 != text.size() || e < 0 || e > 62) throw error("bad size '" + text + "'");
    return std::size_t(1) << e;
  }
  const double v = std::stod(text, &used);
  if (used != text.size() || v < 0 || v != double(std::size_t(v))) throw error("bad size '" + text + "'");
  return std::size_t(v);
} catch (const std::logic_error&) {  // std::stoi / std::stod found no number
  throw error("bad size '" + text + "' (expected a whole number such as 1000, 1e8 or 2^24)");
}

}  // namespace cdl
