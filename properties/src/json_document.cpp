#include "bitparity/properties/json_document.hpp"

#include <set>
#include <string>
#include <vector>

namespace bitparity::properties {

nlohmann::json parse_json_document(std::string_view text) {
  using json = nlohmann::json;
  // nlohmann reads a NUL byte as the end of its input: `[...]\0garbage` parsed as the list. JSON holds
  // none (inside a string it is written \u0000).
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw json::other_error::create(596, "it holds a NUL byte at byte " + std::to_string(nul) + ", which no JSON text does", nullptr);
  }
  std::vector<std::set<std::string>> open_objects;  // the keys seen so far in each object being read
  const json::parser_callback_t watch_keys = [&open_objects](int depth, json::parse_event_t event, json& parsed) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) && depth >= kDeepestJson) {
      throw json::other_error::create(597, "it nests lists and objects deeper than " + std::to_string(kDeepestJson) +
                                               " levels, which no bitparity file does", nullptr);
    }
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.back().insert(parsed.get<std::string>()).second) {
      throw json::other_error::create(598, "key '" + parsed.get<std::string>() + "' appears twice in one object; keep one", nullptr);
    }
    return true;
  };
  return json::parse(text, watch_keys);
}

}  // namespace bitparity::properties
