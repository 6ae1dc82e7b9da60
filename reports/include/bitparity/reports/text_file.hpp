#pragma once
// The files a command reads (a code map, a saved case, a baseline report, a fuzz state, a rank
// case), read whole only after their size is checked: a file far larger than such a file can be (a
// checkpoint given by mistake, a sparse file) would otherwise take memory and time first, or end the
// process. Every JSON document goes through read_json_file and read_json_fields, so a document that
// is not JSON, or a field of the wrong type, is one refusal (exit 2) naming the file and the field.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

inline constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;

// The file's text, or a UsageError naming the path, its size, `limit_bytes` and `what` the option
// takes ("a code map", "a report.json") when it is larger, or when it cannot be read. A folder, a
// FIFO, a device or a link loop is named as what it is.
std::string read_text_file(const std::filesystem::path& path, std::uintmax_t limit_bytes, const std::string& what);

// The file parsed as JSON, or a UsageError "PATH: not valid JSON (...); give WHAT".
nlohmann::json read_json_file(const std::filesystem::path& path, std::uintmax_t limit_bytes, const std::string& what);

// nlohmann's message without its code ("[json.exception.type_error.302] "): "a field has the wrong
// type (type must be string, but is number)".
std::string json_error_text(const nlohmann::json::exception& error);

// `read()`'s value; a json exception inside it (a field of the wrong type, a missing key read with
// at()) becomes a UsageError "SOURCE: a field has the wrong type (...); give WHAT" instead of an
// internal error (exit 5). The readers check the fields they name; this is the net under them.
template <class Read>
auto read_json_fields(const std::string& source, const std::string& what, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const nlohmann::json::exception& error) {
    throw UsageError(source + ": " + json_error_text(error) + "; give " + what);
  }
}

}  // namespace bitparity::reports
