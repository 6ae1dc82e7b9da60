#include "rank_runs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bitparity/reports/interrupt.hpp"

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

// The environment of the run: ours, plus what Open MPI needs to run 3 ranks on fewer cores (and
// as root, where CI runs), unless the caller set those already.
std::vector<std::string> run_environment() {
  std::vector<std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) variables.emplace_back(*entry);
  for (const char* name : {"OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}) {
    const std::string key = std::string(name).substr(0, std::string(name).find('='));
    if (std::getenv(key.c_str()) == nullptr) variables.emplace_back(name);
  }
  return variables;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

}  // namespace

std::string last_printed_line(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.empty() ? "(it printed nothing)" : last;
}

RankRun run_over_ranks(const std::string& launcher, int world, const std::vector<std::string>& sharded_arguments,
                       const std::string& output, std::chrono::steady_clock::time_point deadline) {
  std::vector<std::string> args = {launcher, "-np", std::to_string(world), own_executable()};
  args.insert(args.end(), sharded_arguments.begin(), sharded_arguments.end());
  args.push_back("--findings-exit-zero");  // the callers read the rows; mpirun is 2 s slower to end a failed job
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Its own process group, so that a stop reaches mpirun and its ranks, and no terminal input:
  // a background group that reads the terminal would be stopped by SIGTTIN.
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<std::string> environment = run_environment();
  auto argv = pointers(args);
  auto envp = pointers(environment);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, args.front().c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) return {-1, "cannot start " + args.front() + ": " + std::strerror(error)};
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
      const nlohmann::json document = nlohmann::json::parse(in);
      if (document.contains("results") && document.at("results").is_array()) {
        rows.results = document.at("results");
        unreadable.clear();
      }
    } catch (const std::exception& e) {
      unreadable = std::string(" and unreadable rows (") + e.what() + ")";
    }
  }
  if (!unreadable.empty()) {
    rows.broken = "the run over ranks ended with exit " + std::to_string(run.exit_code) + unreadable + ": " + last_printed_line(output);
  }
  return rows;
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

}  // namespace bitparity::reports
