#pragma once
// Results files are never half-written: the text goes to a temporary file in the same folder,
// every write is checked, the file is fsynced and renamed over the target. An earlier good file
// survives a kill, a full disk or a refused write.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace bitparity::reports {

// Checks before any work starts that `path` (given to `option`) can be written: not empty, not a
// folder or a device, its folder exists or can be made, a file can be created there. Throws UsageError.
// Folders it made to probe are removed again; write_result_file(s) make them when they write.
void check_result_path(const std::string& option, const std::string& path);
// Refuses (UsageError) a results `path` that is the file `input`, or lies inside it where `input` is
// a folder: the results would replace an input of the same run (a case file, a checkpoint, a fuzz
// state) or be read as one later (a case folder). `what` names the input in the message.
void check_result_apart_from_input(const std::string& option, const std::string& path, const std::string& input,
                                   const std::string& what);
// The same for the files a run reads through --map (FILE.json, FILE.safetensors[:TENSOR]; a map's
// name reads none) and --implementation plugin:PATH: check --map m.json --json m.json destroyed the map.
void check_result_apart_from_map_and_plugin_files(const std::string& option, const std::string& path,
                                                  const std::vector<std::string>& maps, const std::vector<std::string>& implementations);

// A JSON document as a results file's text (indented, newline-terminated). Bytes that are not UTF-8
// (a path's name in another encoding) become U+FFFD instead of failing the dump after the work.
std::string json_file_text(const nlohmann::json& document, int indent = 2);

// Writes `text` to `path` atomically. Throws WriteError naming the path and the reason.
void write_result_file(const std::string& path, const std::string& text);
// Writes a run's results document (its "complete" says whether the run finished) and returns the
// path written, for the "results:" line. An incomplete one (interrupted, or written along the way)
// never replaces a complete result an earlier run left at `path`: it goes beside it, to
// partial_result_path(path), and the earlier file stays whole. A complete one goes to `path`.
std::string write_results_document(const std::string& path, const nlohmann::json& document);
// Whether `path` holds a complete results document: a regular file, JSON, "complete": true. Read once
// per path and process (sharded writes its rows after each one).
bool holds_complete_result(const std::string& path);
// Where an incomplete document goes beside a complete one: out.json -> out.partial.json.
std::string partial_result_path(const std::string& path);
// Writes several files of one result (a report's JSON, Markdown and HTML) so that they change
// together or not at all. Throws WriteError naming the path and the reason.
void write_result_files(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace bitparity::reports
