#include "fuzz_state.hpp"

#include <fstream>
#include <sstream>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

nlohmann::json read_fuzz_state(const std::filesystem::path& path, const std::string& schema, const std::string& position_key) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return nlohmann::json::object();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json state = nlohmann::json::parse(text.str(), nullptr, false);
  if (state.is_discarded() || !state.is_object() || state.value("schema", "") != schema || !state.contains(position_key) ||
      !state.at(position_key).is_number_unsigned()) {
    throw UsageError(path.string() + " is not a fuzz state (" + schema + "); remove it to start the round-robin from the beginning");
  }
  return state;
}

}  // namespace bitparity::reports
