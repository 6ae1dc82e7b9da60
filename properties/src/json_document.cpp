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
  try {
    return json::parse(text, watch_keys);
  } catch (const json::parse_error& error) {
    // nlohmann quotes all it read of a token ("last read: '...'"): a line of junk made a page of
    // message. The quote is cut; the error stays a parse error (readers say "not valid JSON").
    const std::string message = error.what();
    const auto quoted = message.find("last read: '");
    if (quoted == std::string::npos || message.size() <= quoted + 12 + 80) throw;
    const auto reason = message.find(": ", message.find("parse error"));
    const std::string tail = message.substr(reason + 2, quoted + 12 + 60 - reason - 2) + "...' (" +
                             std::to_string(message.size() - quoted - 13) + " characters)";
    throw json::parse_error::create(error.id, error.byte, tail, nullptr);
  } catch (const json::out_of_range& error) {
    // 406: a number past a double's range (1e99999); said as what it is, not as nlohmann's code.
    if (error.id != 406) throw;
    std::string number = error.what();
    number = number.substr(number.find('\'') == std::string::npos ? 0 : number.find('\''));
    if (number.size() > 40) number = number.substr(0, 40) + "...'";
    throw json::other_error::create(595, "it holds a number too large for a double (" + number + "); write a smaller one", nullptr);
  }
}

std::string json_error_message(const nlohmann::json::exception& error) {
  std::string text = error.what();
  if (text.starts_with("[json.exception.")) {
    const auto end = text.find("] ");
    if (end != std::string::npos) text.erase(0, end + 2);
  }
  return text;
}

}  // namespace bitparity::properties
