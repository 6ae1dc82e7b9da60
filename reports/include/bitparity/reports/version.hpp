#pragma once
#include <string>

namespace bitparity::reports {
// "bitparity 0.1.0 (git 1a2b3c4d5e6f)": the version and the commit this binary was built from.
std::string version_string();
// Now, in UTC: "2026-11-23T15:05:56Z" (reports and saved cases record when they were made).
std::string utc_timestamp();
}
