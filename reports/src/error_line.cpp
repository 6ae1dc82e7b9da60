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

void print_error(const std::string& message) {
  // A value quoted from an input (a 2 MB "dtype") made a line of megabytes: its middle is cut, and
  // the start (what was wrong) and the end (how to fix it) are kept.
  std::string line = printable_text(message);
  if (line.size() > 1500) {
    line = line.substr(0, 1000) + " [... " + std::to_string(line.size() - 1400) + " characters cut ...] " + line.substr(line.size() - 400);
  }
  std::fprintf(stderr, "error: %s\n", line.c_str());
}

}  // namespace bitparity::reports
