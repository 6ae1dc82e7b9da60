#include "bitparity/reports/version.hpp"

#include "bitparity_version_info.hpp"  // generated at build time by cmake/WriteVersion.cmake

namespace bitparity::reports {
std::string version_string() { return std::string("bitparity ") + BITPARITY_VERSION + " (git " + BITPARITY_GIT_COMMIT + ")"; }
}
