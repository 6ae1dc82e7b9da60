#include "temporary_folder.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

namespace {

// The reaper: between fork and exec only async-signal-safe calls (the parent may have threads).
// It reads its standard input to the end, then removes the folder named by its first argument.
[[noreturn]] void become_reaper(int read_end, const char* folder) {
  ::setsid();
  if (read_end == STDIN_FILENO) {
    ::fcntl(read_end, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec, and exec close it
  } else if (::dup2(read_end, STDIN_FILENO) < 0) {
    ::_exit(127);
  }
  const int null = ::open("/dev/null", O_WRONLY);  // holds no pipe of a caller (ctest waits for those)
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  }
  // The write end (and MPI's sockets) must not stay open here.
  if (::syscall(SYS_close_range, 3u, ~0u, 0u) != 0) {
    for (int fd = 3; fd < 65536; ++fd) ::close(fd);
  }
  ::execl("/bin/sh", "sh", "-c", "cat >/dev/null; exec rm -rf -- \"$0\"", folder, static_cast<char*>(nullptr));
  ::_exit(127);
}

}  // namespace

TemporaryFolder::TemporaryFolder(const std::string& prefix) {
  std::error_code error;
  const std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error) throw WriteError("no temporary folder for " + prefix + ": " + error.message() + "; set TMPDIR to a writable folder");
  std::string pattern = (base / (prefix + ".XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw WriteError("cannot make a temporary folder " + pattern + ": " + std::strerror(errno) + "; set TMPDIR to a writable folder");
  }
  path_ = pattern;
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return;  // no reaper: the destructor still removes it on a normal end
  const pid_t pid = ::fork();
  if (pid == 0) become_reaper(ends[0], path_.c_str());
  ::close(ends[0]);
  if (pid < 0) {
    ::close(ends[1]);
    return;
  }
  reaper_pipe_ = ends[1];
  reaper_ = pid;
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  if (reaper_pipe_ >= 0) ::close(reaper_pipe_);
  if (reaper_ > 0) ::waitpid(reaper_, nullptr, 0);
}

}  // namespace bitparity::reports
