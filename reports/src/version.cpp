#include "bitparity/reports/version.hpp"

#include <ctime>

#include "bitparity_version_info.hpp"  // generated at build time by cmake/WriteVersion.cmake

namespace bitparity::reports {
std::string version_string() { return std::string("bitparity ") + BITPARITY_VERSION + " (git " + BITPARITY_GIT_COMMIT + ")"; }

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace bitparity::reports
