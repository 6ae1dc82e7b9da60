#pragma once
// The mutants that only multi-rank properties can kill: the sharded driver's faults (P6), the
// quantized-storage faults (P10) and the checkpoint faults (P11). `bitparity mutants` hunts each
// over real ranks by starting `mpirun -np 3 bitparity sharded --mutant NAME` itself and reading
// the rows it writes, so that one command proves every catalogued mutant killed.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "rank_runs.hpp"  // mpi_launcher

namespace bitparity::reports {

inline constexpr int kRankMutantWorld = 3;  // ranks per hunt: uneven shards, and a middle rank
// A hunt's first round may run ten budgets, but no longer than this unless the budget itself is.
inline constexpr std::chrono::seconds kFirstRoundLimit{300};

struct RankMutant {
  std::string name;         // as `sharded --mutant` takes it
  std::string description;  // the bug it models
  std::string killer;       // the property expected to kill it: P6, P10 or P11
  // The properties whose rows the fault reaches: a failing row of any other property is a harness
  // error (the fault cannot have caused it).
  std::vector<std::string> alters;
  std::vector<std::string> options;  // further `sharded` options the hunt needs (maps for the maps fault)
  std::string not_over_ranks;        // non-empty: why the ranks cannot hunt it, and what does
};

// Empty when this build has no Open MPI (`bitparity list` says so).
const std::vector<RankMutant>& rank_mutant_catalogue();
const RankMutant* find_rank_mutant(const std::string& name);

struct RankHunt {
  bool killed = false;
  bool harness_error = false;  // a property the fault does not reach failed, or the run broke
  bool stopped = false;        // SIGINT/SIGTERM arrived during the hunt
  std::string property;        // the first failing row's property
  std::string target;          // "8-bit step adam/bf16 zero-3 on 3 ranks"
  std::string counterexample;  // that row's finding, or why the run broke
  std::string replay;          // the command that reruns the killing round
  double seconds = 0.0;
  int rounds = 0;              // runs over ranks (seed, seed + 1, ...) until one killed it
};

// Runs rounds of `sharded --mutant NAME --seed S` (S = seed, seed + 1, ...) over
// kRankMutantWorld ranks until one kills the mutant or `budget_seconds` pass; a later round still
// running at the budget is stopped (the first may run ten budgets, up to kFirstRoundLimit), and
// the rows it finished still count. The rounds write their rows and output in `folder`.
RankHunt hunt_over_ranks(const RankMutant& mutant, const std::string& launcher, const std::string& folder,
                         double budget_seconds, std::uint64_t seed);

}  // namespace bitparity::reports
