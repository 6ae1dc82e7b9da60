#pragma once
// What the saved cases over ranks (sharded_case.cpp, storage_case.cpp) share: reading a whole-number
// field, and the sizes a shrinking step tries.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
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

// The last shrinking steps make values simpler: first each magnitude rounded down to its power of
// two, then each value to its sign times 1. Zeros and non-finite values stay (a planted infinity is
// part of the case). Either is representable in every float dtype that held the value: a power of
// two no larger than a representable magnitude is.
enum class SimplerValues { powers_of_two, ones };
inline constexpr SimplerValues kSimplerValues[] = {SimplerValues::powers_of_two, SimplerValues::ones};

inline float simpler_value(float v, SimplerValues how) {
  if (v == 0.0f || !std::isfinite(v)) return v;
  int exponent = 0;
  std::frexp(v, &exponent);
  return how == SimplerValues::ones ? std::copysign(1.0f, v) : std::ldexp(std::copysign(0.5f, v), exponent);
}

// Whether a shrinking step makes v simpler. A value becomes -1 or 1 only once it is a power of two:
// one that a fault needs odd stays odd either way, and each try is a run over ranks.
inline bool changes(float v, SimplerValues how) {
  if (how == SimplerValues::ones && simpler_value(v, SimplerValues::powers_of_two) != v) return false;
  const float simpler = simpler_value(v, how);
  return std::memcmp(&simpler, &v, sizeof v) != 0;
}

// The runs of `count` values that shrinking simplifies apart, coarsest first: all of them, then
// halves, then quarters (single values where there are fewer). Each shrinking step runs over the values
// still not simple, so a fault that needs a few odd values among simple ones ends with little more
// than those: every run without one simplifies. Finer runs would cost a run over ranks each, in
// every pass that confirms a case can shrink no further.
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

inline std::string simpler_values_change(SimplerValues how, std::size_t first, std::size_t last, std::size_t count) {
  const char* what = how == SimplerValues::powers_of_two ? "rounded down to powers of two" : "set to -1 or 1";
  if (last - first == count) return std::string("values ") + what;
  return "values " + std::to_string(first + 1) + (last - first == 1 ? "" : " to " + std::to_string(last)) + " of the " +
         std::to_string(count) + " not yet simple " + what;
}

// The candidates that make a case's values simpler (simplification_runs of the values that would
// change, in the case's order). `lists(c)` gives pointers to a case's value lists in a fixed order;
// it may replace shared values in c by a copy it can change. `add(simpler, change)` takes each
// (the caller marks it simplifies_values).
template <class Case, class Lists, class Add>
void add_simpler_values(const Case& c, const Lists& lists, const Add& add) {
  for (SimplerValues how : kSimplerValues) {
    Case probe = c;
    std::vector<std::pair<std::size_t, std::size_t>> changing;  // (list, index)
    const std::vector<std::vector<float>*> probe_lists = lists(probe);
    for (std::size_t l = 0; l < probe_lists.size(); ++l) {
      for (std::size_t i = 0; i < probe_lists[l]->size(); ++i) {
        if (changes((*probe_lists[l])[i], how)) changing.emplace_back(l, i);
      }
    }
    for (const auto& [first, last] : simplification_runs(changing.size())) {
      Case simpler = c;
      const std::vector<std::vector<float>*> simpler_lists = lists(simpler);
      for (std::size_t k = first; k < last; ++k) {
        float& v = (*simpler_lists[changing[k].first])[changing[k].second];
        v = simpler_value(v, how);
      }
      add(std::move(simpler), simpler_values_change(how, first, last, changing.size()));
    }
  }
}

// "1 step", "3 steps".
inline std::string counted(std::int64_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace bitparity::distributed::case_fields
