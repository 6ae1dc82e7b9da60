#pragma once
// What the saved cases over ranks (sharded_case.cpp, storage_case.cpp) share: reading a whole-number
// field, and the sizes a shrinking step tries.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"

namespace bitparity::distributed::case_fields {

inline std::int64_t whole_number(const nlohmann::json& object, const char* key, std::int64_t lo, std::int64_t hi) {
  if (!object.contains(key) || !object.at(key).is_number_integer()) {
    throw properties::CaseFileError(std::string("'") + key + "' must be a whole number");
  }
  const std::int64_t value = object.at(key).get<std::int64_t>();
  if (value < lo || value > hi) {
    throw properties::CaseFileError(std::string("'") + key + "' is " + std::to_string(value) + ", outside " + std::to_string(lo) + ".." +
                                    std::to_string(hi));
  }
  return value;
}

// Smaller sizes than n, at least `least`, most shrinking first: least, n/2, then n less a quarter,
// an eighth, ... down to n-1, so that a case that needs most of its size still shrinks in few steps.
inline std::vector<std::int64_t> smaller_sizes(std::int64_t n, std::int64_t least) {
  std::vector<std::int64_t> out;
  const auto add = [&](std::int64_t size) {
    if (size >= least && size < n && std::find(out.begin(), out.end(), size) == out.end()) out.push_back(size);
  };
  add(least);
  add(n / 2);
  for (std::int64_t cut = n / 4; cut >= 1; cut /= 2) add(n - cut);
  add(n - 1);
  return out;
}

// A kernel refusal as a saved case's finding: its message without the code name ("invalid_argument: ").
inline properties::CaseFileError case_file_error(const std::string& prefix, const Error& error) {
  return properties::CaseFileError(prefix + error.message());
}

// The last shrinking steps make values simpler, all of a case's at once: first each magnitude
// rounded down to its power of two, then each value to its sign times 1. Zeros and non-finite
// values stay (a planted infinity is part of the case). Either is representable in every float
// dtype that held the value: a power of two no larger than a representable magnitude is.
enum class SimplerValues { powers_of_two, ones };
inline constexpr SimplerValues kSimplerValues[] = {SimplerValues::powers_of_two, SimplerValues::ones};

inline const char* simpler_values_change(SimplerValues how) {
  return how == SimplerValues::powers_of_two ? "values rounded down to powers of two" : "values set to -1 or 1";
}

// Makes `values` simpler; whether any changed.
inline bool simplify_values(std::vector<float>& values, SimplerValues how) {
  bool changed = false;
  for (float& v : values) {
    if (v == 0.0f || !std::isfinite(v)) continue;
    int exponent = 0;
    std::frexp(v, &exponent);
    const float simpler = how == SimplerValues::ones ? std::copysign(1.0f, v) : std::ldexp(std::copysign(0.5f, v), exponent);
    changed = changed || std::memcmp(&simpler, &v, sizeof v) != 0;
    v = simpler;
  }
  return changed;
}

// "1 step", "3 steps".
inline std::string counted(std::int64_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace bitparity::distributed::case_fields
