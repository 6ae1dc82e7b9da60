#include "fuzz_state.hpp"

#include <fstream>
#include <sstream>

#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/text_file.hpp"

namespace bitparity::reports {

nlohmann::json read_fuzz_state(const std::filesystem::path& path, const std::string& schema, const std::string& position_key) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return nlohmann::json::object();
  const std::string text = read_text_file(path, 64 * kMiB, "a fuzz state (" + schema + "), or remove it to start afresh");
  const nlohmann::json state = nlohmann::json::parse(text, nullptr, false);
  if (state.is_discarded() || !state.is_object() || state.value("schema", "") != schema || !state.contains(position_key) ||
      !state.at(position_key).is_number_unsigned()) {
    throw UsageError(path.string() + " is not a fuzz state (" + schema + "); remove it to start the round-robin from the beginning");
  }
  return state;
}

}  // namespace bitparity::reports
