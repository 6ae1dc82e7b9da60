#pragma once
// What the saved cases over ranks (sharded_case.cpp, storage_case.cpp) share: reading a whole-number
// field, and the sizes a shrinking step tries.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/simpler_values.hpp"

namespace bitparity::distributed::case_fields {

inline std::int64_t whole_number(const nlohmann::json& object, const char* key, std::int64_t lo, std::int64_t hi) {
  if (!object.contains(key) || !object.at(key).is_number_integer()) {
    throw properties::CaseFileError(std::string("'") + key + "' must be a whole number");
  }
  // 2^64 - 1 is an unsigned JSON number that reads as -1 through int64: it is judged, and named, as written.
  const nlohmann::json& field = object.at(key);
  const bool past_int64 = field.is_number_unsigned() && field.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX);
  const std::int64_t value = past_int64 ? INT64_MAX : field.get<std::int64_t>();
  if (past_int64 || value < lo || value > hi) {
    throw properties::CaseFileError(std::string("'") + key + "' is " + field.dump() + ", outside " + std::to_string(lo) + ".." +
                                    std::to_string(hi));
  }
  return value;
}

// A field the case format does not have (a typo, or an edit meant for another format) would be
// ignored silently: it is refused, named, with the fields the format has.
inline void refuse_unknown_fields(const nlohmann::json& object, std::initializer_list<const char*> fields) {
  for (const auto& [key, value] : object.items()) {
    if (std::find_if(fields.begin(), fields.end(), [&](const char* f) { return key == f; }) != fields.end()) continue;
    std::string names;
    for (const char* f : fields) names += (names.empty() ? "" : ", ") + std::string(f);
    throw properties::CaseFileError("the case has no field '" + (key.size() > 64 ? key.substr(0, 64) + "..." : key) + "'; its fields are " + names);
  }
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

using properties::changes;
using properties::kSimplerValues;
using properties::simpler_value;
using properties::simpler_values_change;
using properties::SimplerValues;
using properties::simplification_runs;

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
