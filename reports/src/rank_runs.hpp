#pragma once
// Runs of `bitparity sharded` over real ranks that this process starts through mpirun and waits
// for: `mutants` hunts the multi-rank faults with them, `fuzz` fuzzes the suites over ranks with
// them, and `replay` re-runs the cases those saved.
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bitparity::reports {

// The launcher: BITPARITY_MPIRUN, else the mpiexec CMake found, else `mpirun` on PATH. Returns
// "" and sets `why` when none can be run.
std::string mpi_launcher(std::string& why);

struct RankRun {
  int exit_code = -1;   // -1: stopped (the deadline or an interrupt) or not started
  std::string failure;  // why it could not start or was lost; empty otherwise
};

// `launcher -np world <this program> sharded_arguments...`, its output (both streams) in `output`,
// in a process group of its own; stopped with SIGTERM (then SIGKILL) to that group at `deadline`
// or on SIGINT/SIGTERM. Open MPI's oversubscribe and run-as-root variables are set where the
// caller has not set them. The ranks end with 0 when their rows hold findings (--findings-exit-zero):
// the caller reads the rows, and mpirun takes two seconds longer to end a job whose ranks returned 1.
RankRun run_over_ranks(const std::string& launcher, int world, const std::vector<std::string>& sharded_arguments,
                       const std::string& output, std::chrono::steady_clock::time_point deadline);

// The rows a finished run wrote with `--json rows_file` (schema bitparity.sharded/1), or, in
// `broken`, why there are none: what it exited with and the last line it printed.
struct RankRows {
  nlohmann::json results = nlohmann::json::array();
  std::string broken;
  std::string interrupted;  // the signal that stopped the ranks ("SIGTERM", "SIGINT to another rank"), or ""
};
RankRows read_rank_rows(const std::string& rows_file, const RankRun& run, const std::string& output);

// Why a run's output (`file`) says it ended: bitparity's refusal ("error: ...") where there is one,
// else its last line that is not a banner of dashes, else "(it printed nothing)".
std::string what_the_run_said(const std::string& file);

}  // namespace bitparity::reports
