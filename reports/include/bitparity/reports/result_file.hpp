#pragma once
// Results files are never half-written: the text goes to a temporary file in the same folder,
// every write is checked, the file is fsynced and renamed over the target. An earlier good file
// survives a kill, a full disk or a refused write.
#include <string>

namespace bitparity::reports {

// Checks before any work starts that `path` (given to `option`) can be written: not empty, not a
// folder or a device, its folder exists or can be made, a file can be created there. Throws UsageError.
void check_result_path(const std::string& option, const std::string& path);

// Writes `text` to `path` atomically. Throws WriteError naming the path and the reason.
void write_result_file(const std::string& path, const std::string& text);

}  // namespace bitparity::reports
