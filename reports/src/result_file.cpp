#include "bitparity/reports/result_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

namespace {

namespace fs = std::filesystem;

std::string reason(int error) { return std::strerror(error); }

fs::path folder_of(const fs::path& target) { return target.has_parent_path() ? target.parent_path() : fs::path("."); }

// Writes all of `text` to `fd`, retrying short writes; false with errno set on failure.
bool write_all(int fd, const std::string& text) {
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t wrote = ::write(fd, data, left);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += wrote;
    left -= static_cast<std::size_t>(wrote);
  }
  return true;
}

// A new, empty temporary file beside the target: its descriptor and path.
int make_temporary(const fs::path& target, std::string& temporary) {
  std::string pattern = (folder_of(target) / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  temporary.assign(name.data());
  return fd;
}

}  // namespace

void check_result_path(const std::string& option, const std::string& path) {
  const std::string fix = "; give a file path in a writable folder, e.g. " + option + " reports/out/results.json";
  if (path.empty()) throw UsageError(option + " was given an empty path" + fix);
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
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) throw UsageError(option + " '" + path + "': cannot make its folder '" + folder.string() + "': " + error.message() + fix);
  std::string probe;
  const int fd = make_temporary(target, probe);
  if (fd < 0) throw UsageError(option + " '" + path + "': cannot create a file in '" + folder.string() + "': " + reason(errno) + fix);
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_result_file(const std::string& path, const std::string& text) {
  const fs::path target(path);
  std::string temporary;
  const int fd = make_temporary(target, temporary);
  if (fd < 0) throw WriteError("cannot write '" + path + "': cannot create a file beside it: " + reason(errno));
  const auto fail = [&](const char* step) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    throw WriteError("cannot write '" + path + "' (" + step + "): " + reason(error) + "; the previous file, if any, is unchanged");
  };
  if (!write_all(fd, text)) fail("write");
  if (::fchmod(fd, 0644) != 0) fail("chmod");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw WriteError("cannot write '" + path + "' (close): " + reason(error) + "; the previous file, if any, is unchanged");
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw WriteError("cannot write '" + path + "' (rename): " + reason(error) + "; the previous file, if any, is unchanged");
  }
  // The rename itself is durable once the folder is synced.
  const int folder = ::open(folder_of(target).c_str(), O_RDONLY | O_DIRECTORY);
  if (folder >= 0) {
    ::fsync(folder);
    ::close(folder);
  }
}

}  // namespace bitparity::reports
