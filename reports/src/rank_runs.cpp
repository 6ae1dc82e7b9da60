#include "rank_runs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "bitparity/properties/json_document.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "temporary_folder.hpp"

extern char** environ;

namespace bitparity::reports {

namespace {

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path); }

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream folders(path ? path : "");
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    const std::string candidate = (folder.empty() ? std::string(".") : folder) + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return "";
}

std::string own_executable() {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("/proc/self/exe") : path.string();
}

void set_unless_given(std::vector<std::string>& environment, const std::string& name, const std::string& value) {
  if (std::getenv(name.c_str()) == nullptr) environment.push_back(name + "=" + value);
}

// The environment of the run: ours, plus what Open MPI needs to run 3 ranks on fewer cores (and
// as root, where CI runs), unless the caller set those already.
std::vector<std::string> run_environment() {
  std::vector<std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) variables.emplace_back(*entry);
  for (const char* name : {"OMPI_MCA_rmaps_base_oversubscribe", "OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"}) {
    set_unless_given(variables, name, "1");
  }
  return variables;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// Starts the launcher in a process group of its own (so that a stop reaches mpirun and its ranks)
// with no terminal input (a background group that reads the terminal would be stopped by SIGTTIN)
// and its output in `output`. The launcher gets SIGTERM when this process ends, however it ends:
// mpirun then stops its ranks, so a fuzz run that is killed leaves no round running. Between fork
// and exec only async-signal-safe calls; an exec that fails sends its errno back through a pipe.
// Returns the pid, or -1 with `failure` set.
pid_t start_launcher(std::vector<std::string>& args, std::vector<std::string>& environment, const std::string& output,
                     std::string& failure) {
  auto argv = pointers(args);
  auto envp = pointers(environment);
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    failure = std::string("cannot start ") + args.front() + ": " + std::strerror(errno);
    return -1;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    int error = 0;
    if (::setpgid(0, 0) != 0 || ::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) error = errno;
    if (error == 0 && ::getppid() != parent) ::_exit(127);  // the caller ended before the death signal was set
    const int in = error == 0 ? ::open("/dev/null", O_RDONLY) : -1;
    const int out = in >= 0 ? ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    if (error == 0 && (in < 0 || out < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 ||
                       ::dup2(out, STDERR_FILENO) < 0)) {
      error = errno;
    }
    if (error == 0) {
      ::execve(args.front().c_str(), argv.data(), envp.data());
      error = errno;
    }
    (void)!::write(status_pipe[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(status_pipe[1]);
  if (pid > 0) ::setpgid(pid, pid);  // as the child does: a stop sent before it ran still finds the group
  if (pid < 0) {
    failure = std::string("cannot start ") + args.front() + ": " + std::strerror(errno);
    ::close(status_pipe[0]);
    return -1;
  }
  int child_error = 0;
  ssize_t got = -1;
  do got = ::read(status_pipe[0], &child_error, sizeof child_error); while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof child_error)) {  // exec failed: nothing runs
    ::waitpid(pid, nullptr, 0);
    failure = "cannot start " + args.front() + ": " + std::strerror(child_error);
    return -1;
  }
  return pid;
}

}  // namespace

std::string what_the_run_said(const std::string& file) {
  // bitparity's own refusal ("error: ...", said once by rank 0) names the cause; mpirun's notice after
  // it ends in a banner of dashes that names none, so the last line is only the fallback.
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.starts_with("error: ")) return line;
    const bool banner = line.find_first_not_of("-*= \t\r") == std::string::npos;
    if (!banner) last = line;
  }
  return last.empty() ? "(it printed nothing)" : last;
}

RankRun run_over_ranks(const std::string& launcher, int world, const std::vector<std::string>& sharded_arguments,
                       const std::string& output, std::chrono::steady_clock::time_point deadline) {
  std::vector<std::string> args = {launcher, "-np", std::to_string(world), own_executable()};
  args.insert(args.end(), sharded_arguments.begin(), sharded_arguments.end());
  args.push_back("--findings-exit-zero");  // the callers read the rows; mpirun is 2 s slower to end a failed job
  std::vector<std::string> environment = run_environment();
  // Open MPI's session folder goes however mpirun ends: a SIGKILL (ours after a stop it ignored, or
  // a runner's) leaves it behind in the system's temporary folder otherwise.
  const TemporaryFolder session("bitparity-mpirun");
  set_unless_given(environment, "OMPI_MCA_orte_tmpdir_base", session.path());
  std::string failure;
  const pid_t pid = start_launcher(args, environment, output, failure);
  if (pid < 0) return {-1, failure};
  int status = 0;
  bool stopping = false;
  auto kill_at = std::chrono::steady_clock::time_point::max();
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return {-1, std::string("lost the run over ranks: ") + std::strerror(errno)};
    const auto now = std::chrono::steady_clock::now();
    if (!stopping && (now >= deadline || interrupted())) {
      ::kill(-pid, SIGTERM);  // mpirun passes it on to its ranks
      stopping = true;
      kill_at = now + std::chrono::seconds(5);
    } else if (stopping && now >= kill_at) {
      ::kill(-pid, SIGKILL);
      kill_at = std::chrono::steady_clock::time_point::max();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (stopping) return {-1, ""};
  if (WIFEXITED(status)) return {WEXITSTATUS(status), ""};
  return {-1, "the run over ranks ended by signal " + std::to_string(WTERMSIG(status))};
}

std::string mpi_launcher(std::string& why) {
  if (const char* chosen = std::getenv("BITPARITY_MPIRUN"); chosen != nullptr && *chosen != '\0') {
    const std::string path = std::string(chosen).find('/') == std::string::npos ? on_path(chosen) : std::string(chosen);
    if (!path.empty() && executable(path)) return path;
    why = std::string("BITPARITY_MPIRUN=") + chosen + " is not an executable; point it at Open MPI's mpirun";
    return "";
  }
#ifdef BITPARITY_MPIEXEC
  if (executable(BITPARITY_MPIEXEC)) return BITPARITY_MPIEXEC;
#endif
  if (std::string found = on_path("mpirun"); !found.empty()) return found;
  why = "no mpirun on PATH (./scripts/install-deps installs Open MPI; or set BITPARITY_MPIRUN)";
  return "";
}

RankRows read_rank_rows(const std::string& rows_file, const RankRun& run, const std::string& output) {
  RankRows rows;
  std::string unreadable = " and wrote no rows";
  if (std::ifstream in(rows_file); in) {
    try {
      const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      const nlohmann::json document = properties::parse_json_document(text);
      if (document.contains("results") && document.at("results").is_array()) {
        rows.results = document.at("results");
        unreadable.clear();
        if (document.contains("interrupted") && document.at("interrupted").is_string()) rows.interrupted = document.at("interrupted");
        // Rows written along the way by a run that did not reach its end: it broke after them.
        if (document.contains("in_progress")) {
          unreadable = " after " + std::to_string(rows.results.size()) + " of its rows";
        }
      }
    } catch (const std::exception& e) {
      unreadable = std::string(" and unreadable rows (") + e.what() + ")";
    }
  }
  if (!unreadable.empty()) {
    rows.broken = "the run over ranks ended with exit " + std::to_string(run.exit_code) + unreadable + ": " + what_the_run_said(output);
  }
  return rows;
}

}  // namespace bitparity::reports
