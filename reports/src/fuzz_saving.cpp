#include "fuzz_saving.hpp"

#include <algorithm>

#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"

namespace bitparity::reports {

std::optional<int> exit_for_unsaved_fuzz_results(const std::vector<nlohmann::json>& failures, const std::string& cases_folder,
                                                 const std::string& rerun_what, const std::string& state_error) {
  const auto unsaved = std::count_if(failures.begin(), failures.end(), [](const nlohmann::json& f) { return f.contains("save_error"); });
  if (unsaved > 0) {
    print_error(std::to_string(unsaved) + " failing case" + (unsaved == 1 ? " was" : "s were") + " not saved in " + cases_folder +
                " (NOT SAVED above); free the disk or fix the folder, and rerun the " + rerun_what + " shown");
    return exit_write_failed;
  }
  if (!state_error.empty()) {
    print_error("the fuzz state was not saved (" + state_error + "); the next run starts where the previous state left off");
    return exit_write_failed;
  }
  return std::nullopt;
}

}  // namespace bitparity::reports
