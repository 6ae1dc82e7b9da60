#include "fuzz_state.hpp"

#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/text_file.hpp"

namespace bitparity::reports {

nlohmann::json read_fuzz_state(const std::filesystem::path& path, const std::string& schema, const std::string& position_key) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return nlohmann::json::object();
  const std::string what = "a fuzz state (" + schema + "), or remove it to start the round-robin from the beginning";
  const nlohmann::json state = read_json_file(path, 64 * kMiB, what);
  const bool valid = read_json_fields(path.string(), what, [&] {
    return state.is_object() && state.contains("schema") && state.at("schema") == schema && state.contains(position_key) &&
           state.at(position_key).is_number_unsigned() && (!state.contains("runs") || state.at("runs").is_array());
  });
  if (!valid) throw UsageError(path.string() + " is not a fuzz state (" + schema + "); remove it to start the round-robin from the beginning");
  // The workers and the rerun hints take the position as --first-visit, which stops at 2^50 (a
  // larger one failed every visit as "visit -1", and one near 2^63 overflowed when saved).
  if (state.at(position_key).get<std::uint64_t>() > kLastFirstVisit) {
    throw UsageError(path.string() + ": its " + position_key + " " + std::to_string(state.at(position_key).get<std::uint64_t>()) +
                     " is past 2^50, the last position --first-visit takes; give --first-visit N, or remove the file to start afresh");
  }
  return state;
}

}  // namespace bitparity::reports
