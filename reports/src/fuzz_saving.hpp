#pragma once
// What a fuzz run (in one process or over ranks) failed to keep: a failing case its corpus did not
// take, or a state the next run cannot continue from. Either is a result lost, so the run ends with
// exit 3 whatever it found.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bitparity::reports {

// exit_write_failed, after one line saying what was not saved, when a failure carries "save_error"
// or `state_error` is not empty; nothing otherwise. `cases_folder` is where the cases were due and
// `rerun_what` names what to run again ("visits", "rounds").
std::optional<int> exit_for_unsaved_fuzz_results(const std::vector<nlohmann::json>& failures, const std::string& cases_folder,
                                                 const std::string& rerun_what, const std::string& state_error);

}  // namespace bitparity::reports
