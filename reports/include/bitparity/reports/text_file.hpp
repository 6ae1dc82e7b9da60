#pragma once
// The JSON files a command reads (a code map, a saved case, a baseline report, a fuzz state), read
// whole only after their size is checked: a file far larger than such a file can be (a checkpoint
// given by mistake, a sparse file) would otherwise take memory and time first, or end the process.
#include <cstdint>
#include <filesystem>
#include <string>

namespace bitparity::reports {

inline constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;

// The file's text, or a UsageError naming the path, its size, `limit_bytes` and `what` the option
// takes ("a code map", "a report.json") when it is larger, or when it cannot be read.
std::string read_text_file(const std::filesystem::path& path, std::uintmax_t limit_bytes, const std::string& what);

}  // namespace bitparity::reports
