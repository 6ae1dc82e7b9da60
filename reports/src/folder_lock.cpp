#include "bitparity/reports/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

namespace {

// This process's command line, words separated by spaces (for the message another run prints).
std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text) c = c == '\0' ? ' ' : c;
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string holder_of(int fd) {
  char text[1024] = {};
  const ssize_t got = ::pread(fd, text, sizeof text - 1, 0);
  std::string holder(text, got > 0 ? static_cast<std::size_t>(got) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder.empty() ? "another bitparity run" : printable_text(holder);
}

}  // namespace

FolderLock::FolderLock(const std::string& folder, const std::string& option) {
  const std::string path = (std::filesystem::path(folder) / kLockFileName).string();
  // The run writes into the folder from here on: it is made now (check_result_path, which probed
  // it, made none that stays), and an error making it shows in the open below.
  std::error_code ignored;
  std::filesystem::create_directories(folder, ignored);
  // Never through a link: a .bitparity.lock that points elsewhere (report.json, /etc/passwd) would
  // have that file truncated and overwritten with the holder's line.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd_ < 0) {
    const int code = errno;
    if (code == ELOOP) {
      throw UsageError(option + " " + folder + ": its lock file " + kLockFileName +
                       " is a symbolic link, which bitparity does not write through; remove it");
    }
    throw UsageError(option + " " + folder + ": cannot open its lock file " + kLockFileName + " (" + std::strerror(code) +
                     "); give a folder this user can write");
  }
  struct stat status {};
  if (::fstat(fd_, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw UsageError(option + " " + folder + ": its lock file " + kLockFileName + " is not a regular file; remove it");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int code = errno;
    const std::string holder = code == EWOULDBLOCK ? holder_of(fd_) : std::string();
    ::close(fd_);
    fd_ = -1;
    if (code == EWOULDBLOCK) {
      throw UsageError(option + " " + folder + " is in use by another run (" + holder +
                       "), and two runs writing one folder lose each other's state; wait for it to end, or give another folder");
    }
    throw UsageError(option + " " + folder + ": cannot lock " + kLockFileName + " (" + std::strerror(code) + ")");
  }
  // Who holds it, for the refusal another run prints; best effort (the lock is what counts).
  const std::string holder = "pid " + std::to_string(::getpid()) + ": " + own_command_line() + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd_, holder.data(), holder.size(), 0);
  }
}

FolderLock::FolderLock(FolderLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the only descriptor releases the lock
}

}  // namespace bitparity::reports
