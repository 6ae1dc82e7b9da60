#pragma once
// The round-robin state a fuzz run leaves in its corpus (CORPUS/fuzz-state*.json), read back by
// the next run on that corpus so that it continues where the last one stopped.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace bitparity::reports {

// The last position --first-visit takes, and so the last one a state may hold.
inline constexpr std::int64_t kLastFirstVisit = std::int64_t{1} << 50;

// The state at `path`, or an empty object when there is none. Throws UsageError when the file is
// not of `schema`, lacks the whole-number position `position_key` (at most kLastFirstVisit), or has
// "runs" that is not a list. A position past kLastFirstVisit is refused unless the run starts
// elsewhere (`position_given`: --first-visit), which the refusal advises.
nlohmann::json read_fuzz_state(const std::filesystem::path& path, const std::string& schema, const std::string& position_key,
                               bool position_given);

}  // namespace bitparity::reports
