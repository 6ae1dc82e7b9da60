#include "bitparity/reports/text_file.hpp"

#include "bitparity/fixtures/file_kind.hpp"
#include "bitparity/properties/json_document.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace bitparity::reports {

std::string read_text_file(const std::filesystem::path& path, std::uintmax_t limit_bytes, const std::string& what) {
  // A FIFO would block the open and /dev/zero never ends: only regular files are read.
  if (const std::string kind = fixtures::not_a_regular_file(path); !kind.empty()) throw UsageError(path.string() + ": " + kind + "; give " + what);
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  if (error) throw UsageError(path.string() + ": cannot be read (" + error.message() + "); give " + what);
  if (bytes > limit_bytes) {
    throw UsageError(path.string() + ": " + std::to_string(bytes) + " bytes, more than " + what + " can be (" +
                     std::to_string(limit_bytes / kMiB) + " MiB); give " + what);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int code = errno;
    throw UsageError(path.string() + ": cannot be read (" + std::strerror(code) + "); give " + what);
  }
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError(path.string() + ": cannot be read to the end; give " + what);
  return text.str();
}

nlohmann::json read_json_file(const std::filesystem::path& path, std::uintmax_t limit_bytes, const std::string& what) {
  const std::string text = read_text_file(path, limit_bytes, what);
  try {
    return properties::parse_json_document(text);
  } catch (const nlohmann::json::other_error& error) {
    throw UsageError(path.string() + ": " + json_error_text(error) + "; give " + what);
  } catch (const nlohmann::json::exception& error) {
    throw UsageError(path.string() + ": not valid JSON (" + json_error_text(error) + "); give " + what);
  }
}

std::string json_error_text(const nlohmann::json::exception& error) {
  const std::string text = properties::json_error_message(error);
  return error.id >= 300 && error.id < 400 ? "a field has the wrong type (" + text + ")" : text;
}

}  // namespace bitparity::reports
