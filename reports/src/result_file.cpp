#include "bitparity/reports/result_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/properties/json_document.hpp"
#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

namespace {

namespace fs = std::filesystem;

std::string reason(int error) { return std::strerror(error); }

fs::path folder_of(const fs::path& target) { return target.has_parent_path() ? target.parent_path() : fs::path("."); }

// The folders check_result_path made to probe a result path and removed again: the writer makes them.
std::set<std::string>& folders_to_make() {
  static std::set<std::string> folders;
  return folders;
}

}  // namespace

namespace {
// The options that name a folder (their results are files in it) get a folder as the example.
std::string fix_for(const std::string& option) {
  if (option == "--corpus") return "; give a writable folder, e.g. --corpus bitparity-corpus";
  if (option.ends_with(": its fuzz state")) return "; move it away: fuzz keeps its state in that file (without it, fuzz starts at visit 0)";
  if (option == "--out") return "; give a writable folder, e.g. --out reports/out";
  if (option == "--checkpoint-dir") return "; give a writable folder, e.g. --checkpoint-dir checkpoints";
  return "; give a file path in a writable folder, e.g. " + option + " reports/out/results.json";
}
}  // namespace

void check_result_path(const std::string& option, const std::string& given) {
  const std::string fix = fix_for(option);
  if (given.empty()) throw UsageError(option + " was given an empty path" + fix);
  // "-" usually means standard output; a result is written to a file by rename, so it would be a
  // file named "-" instead.
  if (given == "-") throw UsageError(option + " '-' would name a path called '-', not standard output: results are written whole to a file, then renamed" + fix);
  // A link is written through (its target replaced): the target is what must be writable. A link
  // to a missing folder passed this check and failed the write after the whole run.
  const std::string path = fixtures::written_through_links(given);
  const fs::path target(path);
  if (!target.has_filename()) throw UsageError(option + " '" + path + "' names a folder, not a file" + fix);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) throw UsageError(option + " '" + path + "' is a folder, not a file" + fix);
    if (!S_ISREG(info.st_mode)) {
      throw UsageError(option + " '" + path + "' is not a regular file (a device or a pipe): results are written by rename" + fix);
    }
  } else if (errno != ENOENT) {
    throw UsageError(option + " '" + path + "' cannot be used: " + reason(errno) + fix);
  }
  const fs::path folder = folder_of(target);
  // The folders made for the probe go again: a run refused after this check (a later option, a
  // missing input) leaves nothing behind, and the writer makes them when it writes (those only: a
  // folder that existed and went, such as a killed fuzz's round folder its reaper removed, is
  // not made again by a rank still writing into it).
  std::vector<fs::path> made;  // deepest first
  std::error_code error;
  for (fs::path p = folder; !p.empty() && !fs::exists(p, error) && !error; p = p.parent_path()) {
    made.push_back(p);
    if (p == p.parent_path()) break;
  }
  const auto remove_made = [&made] {
    std::error_code ignored;
    for (const fs::path& p : made) fs::remove(p, ignored);  // only an empty folder goes
  };
  fs::create_directories(folder, error);
  if (error) {
    remove_made();
    throw UsageError(option + " '" + path + "': cannot make its folder '" + folder.string() + "': " + error.message() + fix);
  }
  std::string probe;
  const int fd = fixtures::make_temporary_beside(target.string(), probe);
  const int probe_error = errno;
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
  remove_made();
  if (!made.empty()) folders_to_make().insert(folder.lexically_normal().string());
  if (fd < 0) throw UsageError(option + " '" + path + "': cannot create a file in '" + folder.string() + "': " + reason(probe_error) + fix);
}

namespace {
// The result's folder, where check_result_path made it to probe and removed it again.
void make_folder_of(const std::string& path) {
  const std::string folder = folder_of(fs::path(fixtures::written_through_links(path))).lexically_normal().string();
  if (folders_to_make().count(folder) == 0) return;
  std::error_code ignored;  // a folder that cannot be made fails the write, which says why
  fs::create_directories(folder, ignored);
}
}  // namespace

void check_result_apart_from_input(const std::string& option, const std::string& path, const std::string& input,
                                   const std::string& what) {
  std::error_code error;
  const fs::path result = fs::weakly_canonical(path, error);
  if (error) return;  // check_result_path judges a path that cannot be resolved
  const fs::path source = fs::weakly_canonical(input, error);
  if (error) return;
  const auto [end, ignored] = std::mismatch(source.begin(), source.end(), result.begin(), result.end());
  if (end != source.end()) return;  // not the input, nor inside it
  const bool same = result == source;
  throw UsageError(option + " '" + path + "' " + (same ? "is " : "lies inside ") + what + " '" + input + "', which " +
                   (same ? "the results would replace" : "holds this run's own files") + "; write the results elsewhere");
}

void check_result_apart_from_map_and_plugin_files(const std::string& option, const std::string& path,
                                                  const std::vector<std::string>& maps, const std::vector<std::string>& implementations) {
  std::error_code error;
  for (const std::string& map : maps) {
    std::string file = map;
    // FILE.safetensors:TENSOR names a file and a tensor in it.
    if (!fs::exists(file, error)) {
      if (const auto colon = file.rfind(':'); colon != std::string::npos) file.resize(colon);
    }
    if (fs::exists(file, error)) check_result_apart_from_input(option, path, file, "the --map file");
  }
  for (const std::string& implementation : implementations) {
    if (implementation.starts_with("plugin:")) check_result_apart_from_input(option, path, implementation.substr(7), "the plugin");
  }
}

std::string json_file_text(const nlohmann::json& document, int indent) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void write_result_file(const std::string& path, const std::string& text) {
  make_folder_of(path);
  try {
    fixtures::write_file_atomically(path, text);
  } catch (const fixtures::WriteFailure& e) {
    throw WriteError(e.what());
  }
}

std::string partial_result_path(const std::string& path) {
  const fs::path target(path);
  return (target.parent_path() / (target.stem().string() + ".partial" + target.extension().string())).string();
}

bool holds_complete_result(const std::string& path) {
  // Read again whenever the file changed since it was last read: another run may have finished it
  // while this one wrote its rows along the way (once a second, so the rows are not read each time).
  struct Seen {
    fs::file_time_type modified;
    std::uintmax_t size = 0;
    bool complete = false;
  };
  static std::map<std::string, Seen> known;
  std::error_code error;
  const fs::file_time_type modified = fs::last_write_time(path, error);
  const std::uintmax_t size = error ? 0 : fs::file_size(path, error);
  if (const auto found = known.find(path); found != known.end() && !error && found->second.modified == modified && found->second.size == size) {
    return found->second.complete;
  }
  bool complete = false;
  if (fs::is_regular_file(path, error) && fs::file_size(path, error) <= (std::uintmax_t{1} << 30) && !error) {
    try {
      std::ifstream in(path, std::ios::binary);
      const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      const nlohmann::json earlier = properties::parse_json_document(text);
      complete = earlier.is_object() && earlier.value("complete", nlohmann::json()) == true;
    } catch (const std::exception&) {
      complete = false;  // not a results document: replacing it loses no result
    }
  }
  if (error) return complete;  // no file (yet): nothing to keep
  known[path] = {modified, size, complete};
  return complete;
}

std::string write_results_document(const std::string& path, const nlohmann::json& document) {
  const bool complete = document.is_object() && document.value("complete", nlohmann::json(true)) == true;
  static std::set<std::string> partials_written;  // rows written along the way beside a complete file
  const std::string target = !complete && holds_complete_result(path) ? partial_result_path(path) : path;
  write_result_file(target, json_file_text(document));
  if (target != path) partials_written.insert(target);
  if (complete && partials_written.erase(partial_result_path(path)) > 0) {
    std::error_code ignored;
    fs::remove(partial_result_path(path), ignored);  // this run's own rows along the way, now in `path`
  }
  return target;
}

void write_result_files(const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [path, text] : files) make_folder_of(path);
  try {
    fixtures::write_files_together(files);
  } catch (const fixtures::WriteFailure& e) {
    throw WriteError(e.what());
  }
}

}  // namespace bitparity::reports
