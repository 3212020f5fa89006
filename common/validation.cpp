// validation.hpp's comparison of a device result with its float64 reference, element by element.
#include "validation.hpp"

#include "parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace cdl {

double tolerance_for(double epsilon, int op_ulps, int terms) {
  return 4.0 * double(op_ulps + std::max(terms, 1)) * epsilon;
}

std::string validation_result::summary() const {
  char text[512];
  if (passed) {
    std::snprintf(text, sizeof text, "ok: %llu elements, max rel error %.3g (tolerance %.3g)",
                  static_cast<unsigned long long>(checked), max_rel_error, tolerance);
  } else if (first_bad >= 0) {
    char never[96] = "";
    if (unwritten)
      std::snprintf(never, sizeof never, " (%llu of them never written: still the poison)",
                    static_cast<unsigned long long>(unwritten));
    std::snprintf(
        text, sizeof text,
        "WRONG RESULT: %llu of %llu elements out of tolerance %.3g%s; first at index %lld: got %.9g, "
        "expected %.9g; max rel error %.3g",
        static_cast<unsigned long long>(failures), static_cast<unsigned long long>(checked), tolerance, never,
        static_cast<long long>(first_bad), first_bad_got, first_bad_expected, max_rel_error);
  } else {
    std::snprintf(text, sizeof text, "WRONG RESULT: size mismatch");
  }
  return text;
}

template <class T>
validation_result validate(std::span<const T> got, std::span<const reference_value> expected,
                           double tolerance) {
  validation_result r;
  r.tolerance = tolerance;
  if (got.size() != expected.size()) return r;
  const std::size_t n = got.size();
  const std::size_t workers = worker_count(n);
  std::vector<validation_result> part(workers);
  parallel_for(n, workers, [&](std::size_t w, std::size_t begin, std::size_t end) {
    validation_result& p = part[w];
    // First the plain comparison, the one every element of a passing result takes. The cases below
    // (the poison, which is a NaN; an infinite or NaN reference) all give it a NaN or an infinite
    // error, so a slice it passes whole holds none of them and has the maxima it found; any other
    // slice is compared again, element by element, below.
    double max_abs = 0, max_rel = 0;
    bool all_within = true;
    for (std::size_t i = begin; i < end; ++i) {
      const double abs_err = std::fabs(double(got[i]) - expected[i].value);
      const double rel_err = expected[i].scale > 0 ? abs_err / expected[i].scale : abs_err;
      all_within &= rel_err <= tolerance;
      max_abs = std::max(max_abs, abs_err);
      max_rel = std::max(max_rel, rel_err);
    }
    if (all_within) {
      p.max_abs_error = max_abs;
      p.max_rel_error = max_rel;
      return;
    }
    for (std::size_t i = begin; i < end; ++i) {
      // The poison's bits are read before any conversion (one to double would quiet the NaN).
      const bool never_written = is_poison(got[i]);
      const double g = double(got[i]), want = expected[i].value;
      // The same infinity is agreement (x / 0 where the reference divides by zero too), but
      // |inf - inf| is NaN, so it is tested first; so is a NaN the op computed where the reference
      // has one too. An error is NaN wherever one side alone is NaN, and NaN <= x is false: it fails.
      const bool same_special = (std::isinf(want) && g == want) || (std::isnan(want) && std::isnan(g));
      const double abs_err = never_written ? INFINITY : same_special ? 0.0 : std::fabs(g - want);
      const double rel_err = expected[i].scale > 0 ? abs_err / expected[i].scale : abs_err;
      const bool ok = rel_err <= tolerance;
      p.unwritten += never_written;
      if (!ok) {
        if (p.failures++ == 0) {
          p.first_bad = std::int64_t(i);
          p.first_bad_got = g;
          p.first_bad_expected = want;
        }
      }
      // NaN compares false, so track it explicitly as an infinite error.
      p.max_abs_error = std::max(p.max_abs_error, std::isnan(abs_err) ? INFINITY : abs_err);
      p.max_rel_error = std::max(p.max_rel_error, std::isnan(rel_err) ? INFINITY : rel_err);
    }
  });
  for (const validation_result& p : part) {  // slices are in index order
    if (p.failures && r.first_bad < 0) {
      r.first_bad = p.first_bad;
      r.first_bad_got = p.first_bad_got;
      r.first_bad_expected = p.first_bad_expected;
    }
    r.failures += p.failures;
    r.unwritten += p.unwritten;
    r.max_abs_error = std::max(r.max_abs_error, p.max_abs_error);
    r.max_rel_error = std::max(r.max_rel_error, p.max_rel_error);
  }
  r.checked = n;
  r.passed = r.failures == 0;
  return r;
}

template validation_result validate<float>(std::span<const float>, std::span<const reference_value>, double);
template validation_result validate<double>(std::span<const double>, std::span<const reference_value>,
                                            double);

}  // namespace cdl
