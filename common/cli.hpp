// Command-line vocabulary shared by the programs: sizes written the way people write them, and
// the message a program ends with.
#pragma once

#include "check.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
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

// What a program says when `e` ends it: e.what(), except for std::vector's two ways of saying the
// host cannot hold a problem (std::bad_alloc, std::length_error), which become one plain sentence
// ending with `smaller` (how to ask for less).
inline std::string failure_message(const std::exception& e, const std::string& smaller) {
  if (dynamic_cast<const std::bad_alloc*>(&e) || dynamic_cast<const std::length_error*>(&e))
    return "out of host memory: the inputs and the float64 reference need more than this machine can give; " +
           smaller;
  return e.what();
}

// A program's exit status once what it printed has reached its standard output: where that could
// not be written (a full disk, a closed pipe), the reason on stderr and status 2, never 0.
inline int finish_output(const char* program, int status) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  std::fprintf(stderr, "%s: cannot write the standard output: %s\n", program, std::strerror(errno));
  return status == 0 ? 2 : status;
}

}  // namespace cdl
