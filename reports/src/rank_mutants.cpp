#include "rank_mutants.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bitparity/reports/interrupt.hpp"

#if BITPARITY_HAS_MPI
#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/quant_storage.hpp"
#include "bitparity/distributed/sharded_optimizer.hpp"
#endif

extern char** environ;

namespace bitparity::reports {

namespace {

#if BITPARITY_HAS_MPI
std::vector<RankMutant> build_catalogue() {
  std::vector<RankMutant> catalogue;
  // A driver fault reaches P6 and P11 (which steps through the driver before and after resuming).
  for (auto fault : distributed::kDriverFaults) {
    catalogue.push_back({std::string(distributed::fault_name(fault)), std::string(distributed::fault_description(fault)), "P6",
                         {"P6", "P11"}, {}, ""});
  }
  for (auto fault : distributed::kStorageFaults) {
    catalogue.push_back({std::string(distributed::storage_fault_name(fault)),
                         std::string(distributed::storage_fault_description(fault)), "P10", {"P10"}, {}, ""});
  }
  for (auto fault : distributed::kCheckpointFaults) {
    RankMutant mutant{std::string(distributed::checkpoint_fault_name(fault)),
                      std::string(distributed::checkpoint_fault_description(fault)), "P11", {"P11"}, {}, ""};
    // With the optimizers' own maps the loader's maps are the checkpoint's: other maps show it.
    if (fault == distributed::kMapsFault) mutant.options = {"--map", "dynamic8-signed-fused", "--map", "dynamic8-unsigned-fused"};
    catalogue.push_back(mutant);
  }
  const auto placement = distributed::kDevicePlacementFault;
  catalogue.push_back({std::string(distributed::checkpoint_fault_name(placement)),
                       std::string(distributed::checkpoint_fault_description(placement)), "P11", {"P11"}, {},
                       "its states stay on the host in the sharded driver; the device-placement test kills it on a GPU "
                       "(ctest -R DevicePlacement)"});
  return catalogue;
}
#else
std::vector<RankMutant> build_catalogue() { return {}; }
#endif

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

// The environment of the hunt: ours, plus what Open MPI needs to run 3 ranks on fewer cores (and
// as root, where CI runs), unless the caller set those already.
std::vector<std::string> hunt_environment() {
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

std::string last_line(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.empty() ? "(it printed nothing)" : last;
}

struct Round {
  int exit_code = -1;  // -1: stopped (budget or interrupt)
  std::string failure;  // the launch failed
};

// One run over the ranks, its output in `output`; stopped with SIGTERM (then SIGKILL) to its
// process group at `deadline` or on an interrupt.
Round run_round(std::vector<std::string> args, const std::string& output, std::chrono::steady_clock::time_point deadline) {
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
  std::vector<std::string> environment = hunt_environment();
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

std::string shell_words(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

}  // namespace

const std::vector<RankMutant>& rank_mutant_catalogue() {
  static const std::vector<RankMutant> catalogue = build_catalogue();
  return catalogue;
}

const RankMutant* find_rank_mutant(const std::string& name) {
  const auto& catalogue = rank_mutant_catalogue();
  const auto found = std::find_if(catalogue.begin(), catalogue.end(), [&](const RankMutant& m) { return m.name == name; });
  return found == catalogue.end() ? nullptr : &*found;
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

RankHunt hunt_over_ranks(const RankMutant& mutant, const std::string& launcher, const std::string& folder,
                         double budget_seconds, std::uint64_t seed) {
  RankHunt hunt;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(budget_seconds));
  const std::string rows_file = folder + "/rows.json", output = folder + "/output.txt";
  const std::string self = own_executable();
  auto finish = [&]() -> RankHunt {
    hunt.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return hunt;
  };
  for (std::uint64_t round_seed = seed;; ++round_seed) {
    if (hunt.rounds > 0 && std::chrono::steady_clock::now() >= deadline) return finish();
    std::vector<std::string> hunt_options = {"sharded", "--mutant", mutant.name, "--seed", std::to_string(round_seed)};
    hunt_options.insert(hunt_options.end(), mutant.options.begin(), mutant.options.end());
    hunt.replay = "mpirun -np " + std::to_string(kRankMutantWorld) + " bitparity " + shell_words(hunt_options);
    std::vector<std::string> args = {launcher, "-np", std::to_string(kRankMutantWorld), self};
    args.insert(args.end(), hunt_options.begin(), hunt_options.end());
    args.insert(args.end(), {"--json", rows_file});
    std::filesystem::remove(rows_file);
    ++hunt.rounds;
    const Round round = run_round(args, output, deadline);
    if (round.exit_code < 0) {
      if (interrupted()) hunt.stopped = true;
      if (!round.failure.empty()) {
        hunt.harness_error = true;
        hunt.counterexample = round.failure;
      }
      return finish();
    }
    nlohmann::json rows;
    std::string unreadable = " and wrote no rows";
    if (std::ifstream in(rows_file); in) {
      try {
        rows = nlohmann::json::parse(in);
        if (rows.contains("results")) unreadable.clear();
      } catch (const std::exception& e) {
        unreadable = std::string(" and unreadable rows (") + e.what() + ")";
      }
    }
    if (!unreadable.empty()) {
      hunt.harness_error = true;
      hunt.counterexample = "the run over ranks ended with exit " + std::to_string(round.exit_code) + unreadable + ": " + last_line(output);
      return finish();
    }
    for (const auto& row : rows.at("results")) {
      if (row.at("wrong_elements").get<std::int64_t>() == 0) continue;
      const std::string property = row.at("property").get<std::string>();
      const bool reached = std::find(mutant.alters.begin(), mutant.alters.end(), property) != mutant.alters.end();
      // The first failing row names the kill; any row the fault cannot reach makes it a harness error.
      if (hunt.property.empty() || (!reached && !hunt.harness_error)) {
        hunt.property = property;
        hunt.target = row.at("entry").get<std::string>() + " " + row.at("target").get<std::string>() + "/" +
                      row.at("dtype").get<std::string>() + " " + row.at("layout").get<std::string>() + " on " +
                      std::to_string(row.at("world_size").get<int>()) + " ranks";
        hunt.counterexample = row.value("counterexample", std::string());
        hunt.harness_error = !reached;
      }
    }
    if (hunt.harness_error) return finish();
    if (!hunt.property.empty()) {
      hunt.killed = true;
      return finish();
    }
    if (round.exit_code != 1) {  // a survived round exits 1; anything else broke
      hunt.harness_error = true;
      hunt.counterexample = "the run over ranks ended with exit " + std::to_string(round.exit_code) + ": " + last_line(output);
      return finish();
    }
  }
}

}  // namespace bitparity::reports
