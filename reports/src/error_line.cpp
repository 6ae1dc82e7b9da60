// print_error: the one line a refusal or failure gets on stderr; printable_text, its escaping.
#include <cstdio>
#include <string>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

std::string printable_text(const std::string& text) {
  std::string line;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7F) {
      line += c;
    } else if (c == '\n') {
      line += "\\n";
    } else if (c == '\t') {
      line += "\\t";
    } else {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02X", byte);
      line += escape;
    }
  }
  return line;
}

void print_error(const std::string& message) { std::fprintf(stderr, "error: %s\n", printable_text(message).c_str()); }

}  // namespace bitparity::reports
