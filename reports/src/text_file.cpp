#include "bitparity/reports/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

std::string read_text_file(const std::filesystem::path& path, std::uintmax_t limit_bytes, const std::string& what) {
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

}  // namespace bitparity::reports
