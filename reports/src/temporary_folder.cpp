#include "temporary_folder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bitparity/reports/errors.hpp"

extern char** environ;

namespace bitparity::reports {

namespace {

// The reaper reads its standard input to the end, then removes the folder named by its first
// argument. The pid returned is the shell that started it, which ends at once. posix_spawn, not fork: no copy of an MPI rank's address space, and no fork warning
// from Open MPI transports that register memory.
pid_t start_reaper(int read_end, const std::string& folder) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, read_end, STDIN_FILENO);  // read_end > 2: dup2 clears close-on-exec
  // No pipe of a caller stays open in it (ctest waits for those), nor the write end or MPI's sockets.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);  // mpirun signals the rank's process group
  // The shell starts the reaper in the background and ends, so that the reaper is nobody's
  // descendant: a runner that kills a run's whole process tree (ctest at its timeout) leaves it to
  // remove the folder. An asynchronous list reads /dev/null unless redirected: fd 3 carries the pipe.
  std::string script = "exec 3<&0; (exec <&3 3<&-; cat >/dev/null; exec rm -rf -- \"$0\") & exit 0";
  std::string shell = "sh", dash_c = "-c", path = folder;
  char* argv[] = {shell.data(), dash_c.data(), script.data(), path.data(), nullptr};
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return error == 0 ? pid : -1;
}

constexpr const char* kOwnerFile = ".owner";

std::string first_line(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// A process's state and start time (clock ticks since boot): fields 3 and 22 of /proc/PID/stat,
// empty when it is gone.
struct ProcessStat {
  std::string state, start;
};
ProcessStat process_stat(pid_t pid) {
  const std::string stat = first_line("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t name_end = stat.rfind(')');  // the name may hold spaces and parentheses
  if (name_end == std::string::npos) return {};
  std::istringstream fields(stat.substr(name_end + 1));
  ProcessStat found;
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3) found.state = field;
    if (i == 22) found.start = field;
  }
  return found;
}

std::string start_time(pid_t pid) { return process_stat(pid).start; }

std::string boot_id() { return first_line("/proc/sys/kernel/random/boot_id"); }

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// "PID START BOOT HOST": who made the folder, so that a later run can tell when it is gone.
std::string owner_line() {
  return std::to_string(::getpid()) + " " + start_time(::getpid()) + " " + boot_id() + " " + host_name();
}

// Whether the owner a folder names has ended: on this host, another boot, no such process, a
// zombie (killed, not yet reaped: its parent was killed too), or another process under that pid
// since. A process of another user is alive (kill answers EPERM). A folder made on another host
// (a temporary folder shared between nodes) is not ours to judge.
bool owner_gone(const std::string& owner) {
  std::istringstream fields(owner);
  long long pid = 0;
  std::string started, boot, host;
  if (!(fields >> pid >> started >> boot >> host) || pid <= 0 || host != host_name()) return false;
  if (boot != boot_id()) return true;
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  const ProcessStat now = process_stat(static_cast<pid_t>(pid));
  return now.state == "Z" || (!now.start.empty() && now.start != started);
}

// Removes this user's folders <base>/bitparity-NAME.XXXXXX (any of ours: rows, checkpoints) whose
// owner has ended: their reaper was killed with them. Folders without an owner file (being made,
// or by an older build) are kept.
void remove_stale_folders(const std::filesystem::path& base) {
  std::error_code error;
  std::filesystem::directory_iterator entries(base, error);
  if (error) return;
  for (const auto& entry : entries) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("bitparity-") || name.size() < 8 || name[name.size() - 7] != '.') continue;
    struct stat info {};
    if (::lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::getuid()) continue;
    const std::string owner = first_line((entry.path() / kOwnerFile).string());
    if (!owner.empty() && owner_gone(owner)) std::filesystem::remove_all(entry.path(), error);
  }
}

}  // namespace

TemporaryFolder::TemporaryFolder(const std::string& prefix) {
  std::error_code error;
  const std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error) throw WriteError("no temporary folder for " + prefix + ": " + error.message() + "; set TMPDIR to a writable folder");
  remove_stale_folders(base);
  std::string pattern = (base / (prefix + ".XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw WriteError("cannot make a temporary folder " + pattern + ": " + std::strerror(errno) + "; set TMPDIR to a writable folder");
  }
  path_ = pattern;
  {
    std::ofstream owner(path_ + "/" + kOwnerFile);
    owner << owner_line() << "\n";  // best effort: without it the folder is only never swept
  }
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return;  // no reaper: the destructor still removes it on a normal end
  if (ends[0] <= STDERR_FILENO) {  // a caller without standard input: keep the read end off fd 0
    const int moved = ::fcntl(ends[0], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    ::close(ends[0]);
    ends[0] = moved;
  }
  const pid_t pid = ends[0] < 0 ? -1 : start_reaper(ends[0], path_);
  if (ends[0] >= 0) ::close(ends[0]);
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
