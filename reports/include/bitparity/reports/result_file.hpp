#pragma once
// Results files are never half-written: the text goes to a temporary file in the same folder,
// every write is checked, the file is fsynced and renamed over the target. An earlier good file
// survives a kill, a full disk or a refused write.
#include <string>
#include <utility>
#include <vector>

namespace bitparity::reports {

// Checks before any work starts that `path` (given to `option`) can be written: not empty, not a
// folder or a device, its folder exists or can be made, a file can be created there. Throws UsageError.
void check_result_path(const std::string& option, const std::string& path);

// Writes `text` to `path` atomically. Throws WriteError naming the path and the reason.
void write_result_file(const std::string& path, const std::string& text);
// Writes several files of one result (a report's JSON, Markdown and HTML) so that they change
// together or not at all. Throws WriteError naming the path and the reason.
void write_result_files(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace bitparity::reports
