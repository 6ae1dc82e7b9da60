#pragma once
// The fuzz supervisor: starts the worker processes, reads their events, shows progress, stops them
// on SIGINT/SIGTERM or at the budget, restarts a worker that crashed (the crash is a failure), and
// totals what they did.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/reports/fuzz.hpp"

namespace bitparity::reports {

struct FuzzTally {
  std::int64_t visits = 0, cases = 0, elements = 0;
  std::int64_t incomplete_visits = 0;  // stopped before their end: a sweep at its share of the budget, or a signal
  double seconds = 0.0, reference_seconds = 0.0;
};

struct FuzzTotals {
  std::map<std::string, FuzzTally> by_property, by_suite;
  FuzzTally all;
  std::vector<nlohmann::json> failures;  // visit events that failed, and worker crashes
  std::int64_t next_visit = 0;           // after the last visit any worker started
  std::int64_t new_cases = 0;            // corpus files added by this run
  std::vector<std::string> stop_reasons;
  bool cut_short = false;  // a worker ended before its budget and was not started again
  double wall_seconds = 0.0;
};

// `worker_arguments(k, first_visit, budget_seconds)`: the command line of worker k.
using WorkerArguments = std::function<std::vector<std::string>(int worker, std::int64_t first_visit, double budget_seconds)>;
// `save_state(totals)`: called now and then (with each log line) and at the end.
FuzzTotals supervise_fuzz(const FuzzOptions& options, const WorkerArguments& worker_arguments, double log_every,
                          const std::function<void(const FuzzTotals&)>& save_state);

}  // namespace bitparity::reports
