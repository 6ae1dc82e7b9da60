#include "fuzz_state.hpp"

#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/text_file.hpp"

namespace bitparity::reports {

nlohmann::json read_fuzz_state(const std::filesystem::path& path, const std::string& schema, const std::string& position_key,
                               bool position_given) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return nlohmann::json::object();
  const std::string what = "a fuzz state (" + schema + "), or remove it to start the round-robin from the beginning";
  const nlohmann::json state = read_json_file(path, 64 * kMiB, what);
  const bool valid = read_json_fields(path.string(), what, [&] {
    return state.is_object() && state.contains("schema") && state.at("schema") == schema;
  });
  if (!valid) throw UsageError(path.string() + " is not a fuzz state (" + schema + "); remove it to start the round-robin from the beginning");
  // The schema is right: a wrong field is named, and undoing the edit keeps the history.
  if (!state.contains(position_key) || !state.at(position_key).is_number_unsigned()) {
    // JSON's -0 reads as a signed 0 and dumps as "0": shown as written, it does not contradict the rule.
    const bool minus_zero = state.contains(position_key) && state.at(position_key).is_number_integer() && state.at(position_key) == 0;
    throw UsageError(path.string() + ": '" + position_key + "' is " +
                     (minus_zero ? std::string("-0") : state.contains(position_key) ? state.at(position_key).dump() : "missing") +
                     ", not a position from 0 on (a whole number written without a sign or a point); undo the edit, or remove the "
                     "file to start the round-robin from the beginning");
  }
  if (state.contains("runs") && !state.at("runs").is_array()) {
    throw UsageError(path.string() + ": 'runs' is not a list of runs; undo the edit, or remove the file to start the round-robin from the beginning");
  }
  // The history of runs is carried into every later state: junk in it would be kept for good.
  const nlohmann::json& runs = state.contains("runs") ? state.at("runs") : nlohmann::json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& run = runs[i];
    std::string wrong;
    if (!run.is_object()) wrong = "is " + run.dump() + ", not an object";
    for (const char* count : {"first_visit", "next_visit", "first_round", "next_round", "cases", "failures"}) {
      if (wrong.empty() && run.contains(count) && !run.at(count).is_number_unsigned()) wrong = "'" + std::string(count) + "' is not a count";
    }
    for (const char* text : {"seed", "build"}) {
      if (wrong.empty() && run.contains(text) && !run.at(text).is_string()) wrong = "'" + std::string(text) + "' is not text";
    }
    if (wrong.empty() && run.contains("seconds") && !(run.at("seconds").is_number() && run.at("seconds").get<double>() >= 0)) {
      wrong = "'seconds' is not a number of at least 0";
    }
    if (!wrong.empty()) {
      throw UsageError(path.string() + ": run " + std::to_string(i + 1) + " of its history " + wrong +
                       "; undo the edit, or remove the file to start the round-robin from the beginning");
    }
  }
  // The workers and the rerun hints take the position as --first-visit, which stops at 2^50 (a
  // larger one failed every visit as "visit -1", and one near 2^63 overflowed when saved).
  if (!position_given && state.at(position_key).get<std::uint64_t>() > kLastFirstVisit) {
    throw UsageError(path.string() + ": its " + position_key + " " + std::to_string(state.at(position_key).get<std::uint64_t>()) +
                     " is past 2^50, the last position --first-visit takes; give --first-visit N, or remove the file to start afresh");
  }
  return state;
}

}  // namespace bitparity::reports
