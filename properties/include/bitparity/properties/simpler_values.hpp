#pragma once
// Making a failing case's values simpler, the last step of shrinking (a case that carries its
// values: one-process saved cases, and the cases over ranks). First each magnitude rounded down to
// its power of two, then each value that is a power of two set to its sign times 1. Zeros and
// non-finite values stay (a planted infinity is part of the case). Either is representable in every
// float dtype that held the value: a power of two no larger than a representable magnitude is.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace bitparity::properties {

enum class SimplerValues { powers_of_two, ones };
inline constexpr SimplerValues kSimplerValues[] = {SimplerValues::powers_of_two, SimplerValues::ones};

inline float simpler_value(float v, SimplerValues how) {
  if (v == 0.0f || !std::isfinite(v)) return v;
  int exponent = 0;
  std::frexp(v, &exponent);
  return how == SimplerValues::ones ? std::copysign(1.0f, v) : std::ldexp(std::copysign(0.5f, v), exponent);
}

// Whether a step makes v simpler. A value becomes -1 or 1 only once it is a power of two: one that a
// fault needs odd stays odd either way, and each try costs a run.
inline bool changes(float v, SimplerValues how) {
  if (how == SimplerValues::ones && simpler_value(v, SimplerValues::powers_of_two) != v) return false;
  const float simpler = simpler_value(v, how);
  return std::memcmp(&simpler, &v, sizeof v) != 0;
}

// The runs of `count` values simplified apart, coarsest first: all of them, then halves, then
// quarters (single values where there are fewer). Each step runs over the values still not simple,
// so a fault that needs a few odd values among simple ones ends with little more than those: every
// run without one simplifies. Finer runs would cost a run each in every pass that confirms a case
// can shrink no further.
inline std::vector<std::pair<std::size_t, std::size_t>> simplification_runs(std::size_t count) {
  constexpr std::size_t kFinestRuns = 4;
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for (std::size_t level = 1; count > 0; level *= 2) {
    const std::size_t parts = std::min(level, count);
    for (std::size_t k = 0; k < parts; ++k) runs.emplace_back(count * k / parts, count * (k + 1) / parts);
    if (parts == count || level >= kFinestRuns) break;
  }
  return runs;
}

// "values rounded down to powers of two", "values 3 to 4 of the 8 not yet simple set to -1 or 1".
inline std::string simpler_values_change(SimplerValues how, std::size_t first, std::size_t last, std::size_t count) {
  const char* what = how == SimplerValues::powers_of_two ? "rounded down to powers of two" : "set to -1 or 1";
  if (last - first == count) return std::string("values ") + what;
  return "values " + std::to_string(first + 1) + (last - first == 1 ? "" : " to " + std::to_string(last)) + " of the " +
         std::to_string(count) + " not yet simple " + what;
}

}  // namespace bitparity::properties
