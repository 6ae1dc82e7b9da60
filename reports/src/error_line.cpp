// print_error: the one line a refusal or failure gets on stderr.
#include <cstdio>
#include <string>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

void print_error(const std::string& message) {
  std::string line = "error: ";
  for (const char c : message) {
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
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace bitparity::reports
