#pragma once
// The round-robin state a fuzz run leaves in its corpus (CORPUS/fuzz-state*.json), read back by
// the next run on that corpus so that it continues where the last one stopped.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace bitparity::reports {

// The state at `path`, or an empty object when there is none. Throws UsageError when the file is
// not of `schema` or lacks the whole-number position `position_key`.
nlohmann::json read_fuzz_state(const std::filesystem::path& path, const std::string& schema, const std::string& position_key);

}  // namespace bitparity::reports
