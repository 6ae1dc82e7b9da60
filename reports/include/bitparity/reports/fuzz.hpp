#pragma once
// `bitparity fuzz`: every property x implementation x registry entry x dtype of the run planner,
// round-robin with fresh seeds until a time budget ends. A supervisor starts --jobs worker
// processes (the same program, `--worker K`), reads their events (JSON lines on a pipe), prints
// progress and the summary, and keeps the corpus state; workers run visits and save each failure,
// shrunk, to the corpus. Visit v runs unit v mod U with seed mix(seed, v), so a run replays from
// its printed seed and first visit on the same build.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/reports/check_run.hpp"

namespace bitparity::reports {

struct FuzzOptions {
  CheckOptions selection;                    // suites, properties, entries, dtypes, block sizes, devices
  std::vector<std::string> maps;             // --map as given (names or files), handed on to the workers
  std::vector<std::string> implementations;  // every implementation fuzzed: devices, then mutants
  double budget_seconds = 60;
  std::int64_t visits = 0;       // stop after this many visits (0: only the budget stops)
  std::int64_t first_visit = 0;  // the round-robin position to start at
  std::string corpus;
  int jobs = 1;
  std::uint64_t seed = 0;
  bool stop_on_failure = false;
  int cases_per_visit = 10;
};

// The units in visiting order: the planner's rows (property x target x implementation, P5 only off
// the cpu, a mutant only where it alters the target), interleaved so that consecutive visits meet
// different properties. A row its implementation does not offer is no unit: its reason goes to
// `not_applicable` when given (the supervisor refuses a selection of nothing but such rows).
std::vector<PlannedRow> plan_fuzz(const FuzzOptions& options, std::vector<std::string>* not_applicable = nullptr);

struct FuzzVisit {
  const PlannedRow* unit = nullptr;
  std::int64_t round = 0;         // completed passes over the units
  std::int64_t blocksize = 0;
  std::uint64_t seed = 0;
  std::int64_t size_scale = 1;    // 1, 2, 4, 8, 16 as rounds complete
  bool skipped = false;           // an exhaustive sweep outside its one round
};
FuzzVisit fuzz_visit(const std::vector<PlannedRow>& units, std::uint64_t seed, std::int64_t visit);

// A worker: runs the visits first_visit + worker + k*jobs, writing one JSON event per line to
// `report_fd`. Returns its exit code.
int run_fuzz_worker(const FuzzOptions& options, int worker, int report_fd);

}  // namespace bitparity::reports
