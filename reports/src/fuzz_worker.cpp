// A fuzz worker: runs its share of the visits, saves every failure (shrunk, replay-checked) to the
// corpus and reports each visit as one JSON line on the supervisor's pipe.
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <memory>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/case_values.hpp"
#include "bitparity/properties/saved_case.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/fuzz.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/version.hpp"
#include "fuzz_state.hpp"

namespace bitparity::reports {

namespace {

using properties::ReplayOutcome;
using properties::SavedCase;

// One event per line; false when the supervisor is gone (the worker then stops).
bool emit(int fd, const nlohmann::json& event) {
  const std::string line = event.dump() + "\n";
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}


// Does the saved case fail again on a fresh instance of its implementation? A failure that needs
// earlier calls (hidden state, such as a step counter kept between calls) fails only the second time.
std::string reproduction(const SavedCase& saved) {
  const auto fresh = fixtures::make_implementation(saved.implementation);
  const auto cpu = fixtures::make_implementation("cpu");
  try {
    if (!properties::replay_saved_case(saved, *fresh, *cpu).passed) return properties::kReproduces;
    if (!properties::replay_saved_case(saved, *fresh, *cpu).passed) return properties::kNeedsEarlierCalls;
    return properties::kDoesNotReproduce;
  } catch (const std::exception& error) {
    return std::string(properties::kReproductionErrorPrefix) + error.what();
  }
}

// Test hook: BITPARITY_TEST_FUZZ_FAULT=crash:V or hang:V makes the worker abort, or stop
// responding, when it starts visit V, so that a test can watch the supervisor deal with it.
void injected_fault(std::int64_t visit) {
  const char* fault = std::getenv("BITPARITY_TEST_FUZZ_FAULT");
  if (fault == nullptr) return;
  const std::string text = fault;
  const auto colon = text.find(':');
  if (colon == std::string::npos || std::strtoll(text.c_str() + colon + 1, nullptr, 10) != visit) return;
  if (text.compare(0, colon, "crash") == 0) std::abort();
  if (text.compare(0, colon, "hang") == 0) {
    while (true) ::pause();
  }
}

// The shrunk case's values made simpler (properties::simplify_case_values) where it still fails on
// the implementation with the same kind of finding, and, for an implementation other than the cpu,
// still holds on the cpu: a simpler value must not make a case that fails for another reason. The
// kept case's violation replaces the saved one. At most kSimplifyTries replays (milliseconds each).
std::vector<std::string> simpler_failing_values(SavedCase& saved, const properties::PropertyDef& property,
                                                const properties::PropertyTarget& target, fixtures::Implementation& cpu) {
  constexpr int kSimplifyTries = 200;
  const properties::PropertyTarget on_cpu = properties::make_target(property, properties::saved_case_target(saved), &cpu, &cpu, saved.blocksize);
  const bool check_cpu = saved.implementation != "cpu";
  const bool refused = saved.violation.starts_with(properties::kRefusedValidCase);
  std::string violation;
  const auto still_fails = [&](const properties::RecordedCase& trial) {
    try {
      const properties::ReplayOutcome outcome = properties::replay_property(property, target, trial);
      if (outcome.passed || outcome.not_applicable || outcome.violation.starts_with(properties::kRefusedValidCase) != refused) return false;
      if (check_cpu && !properties::replay_property(property, on_cpu, trial).passed) return false;
      violation = outcome.violation;
      return true;
    } catch (const std::exception&) {
      return false;  // a value the case's dtype cannot hold, or an input it cannot read back
    }
  };
  std::vector<std::string> kept = properties::simplify_case_values(saved.recorded, still_fails, kSimplifyTries);
  if (!kept.empty()) saved.violation = violation;
  return kept;
}

}  // namespace

int run_fuzz_worker(const FuzzOptions& options, int worker, int report_fd) {
  // The supervisor stops workers with SIGTERM; a terminal's SIGINT goes to the supervisor alone.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  // A worker whose supervisor is gone (killed: it could stop no one) has no one to report to, and
  // would notice only at its next report, after a visit that can take minutes (shrinking a launch-
  // sized case): it ends with the supervisor. One that dies before this line leaves a pipe that the
  // first report finds closed. Cases are saved by rename, so none is left half written.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return exit_failed;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const std::vector<PlannedRow> units = plan_fuzz(options);
  if (units.empty()) return exit_bad_input;
  std::map<std::string, std::unique_ptr<fixtures::Implementation>> implementations;
  const auto baseline = fixtures::make_implementation("cpu");
  std::int64_t skipped_in_a_row = 0;
  // A unit that failed is known to fail: it is not visited again in this run (the corpus has it).
  std::vector<bool> retired(units.size(), false);
  const bool only_sweeps = std::all_of(units.begin(), units.end(), [](const PlannedRow& u) { return u.property->exhaustive; });
  std::string stopped = "budget";
  for (std::int64_t visit = options.first_visit + worker;; visit += options.jobs) {
    if (interrupted()) {
      stopped = "interrupted";
      break;
    }
    if (elapsed() >= options.budget_seconds) break;
    // The last position a fuzz state may hold: a budget-only run stops there, so that the state it
    // saves can be continued (one past it would be refused).
    if ((options.visits > 0 && visit >= options.first_visit + options.visits) || visit >= kLastFirstVisit) {
      stopped = "visits";
      break;
    }
    const FuzzVisit v = fuzz_visit(units, options.seed, visit);
    const auto unit_index = static_cast<std::size_t>(v.unit - units.data());
    if (v.skipped || retired[unit_index]) {
      // A whole pass of skipped units: only sweeps that already ran, or failed units, are left.
      if (++skipped_in_a_row >= static_cast<std::int64_t>(units.size())) {
        stopped = "done";
        break;
      }
      continue;
    }
    skipped_in_a_row = 0;
    const PlannedRow& unit = *v.unit;
    const std::string target = unit.spec.label() + (v.blocksize > 0 ? " blocksize " + std::to_string(v.blocksize) : "");
    nlohmann::json event = {{"event", "start"},       {"visit", visit},           {"property", unit.property->id},
                            {"target", target},       {"implementation", unit.device}};
    if (!emit(report_fd, event)) return exit_failed;
    injected_fault(visit);
    auto& iut = implementations[unit.device];
    if (!iut) iut = fixtures::make_implementation(unit.device);
    properties::RunOptions run;
    run.seed = v.seed;
    run.max_cases = options.cases_per_visit;
    // Beside random properties an exhaustive sweep gets at most a tenth of the budget (a short run
    // checks a prefix of it, marked incomplete; a run of 5 minutes or more has time for it all).
    const double remaining = options.budget_seconds - elapsed();
    const bool capped = unit.property->exhaustive && !only_sweeps;
    run.seconds = std::max(0.001, capped ? std::min(remaining, options.budget_seconds / 10) : remaining);
    run.size_scale = v.size_scale;
    run.record_failing_case = true;
    run.cancelled = [] { return interrupted(); };
    const properties::PropertyTarget target_of_visit =
        properties::make_target(*unit.property, unit.spec, iut.get(), baseline.get(), v.blocksize);
    const properties::RunResult result = properties::run_property(*unit.property, target_of_visit, run);
    event = {{"event", "visit"},
             {"visit", visit},
             {"property", unit.property->id},
             {"suite", std::string(fixtures::suite_name(unit.property->suite))},
             {"target", target},
             {"implementation", unit.device},
             {"cases", result.stats.cases},
             {"elements", result.stats.elements},
             {"reference_seconds", result.stats.reference_seconds},
             {"seconds", result.seconds},
             {"size_scale", v.size_scale},
             {"passed", result.passed},
             {"incomplete", result.stats.incomplete},
             {"not_applicable", result.not_applicable}};
    if (!result.passed) {
      nlohmann::json failure = {{"seed", std::to_string(options.seed)}, {"visit", visit}, {"visit_seed", std::to_string(v.seed)},
                                {"size_scale", v.size_scale}, {"build", version_string()}, {"date", utc_timestamp()}};
      event["violation"] = result.counterexample;
      if (result.failing_case) {
        SavedCase saved;
        saved.property = unit.property->id;
        saved.implementation = unit.device;
        saved.entry = unit.spec.entry();
        saved.dtype = unit.spec.dtype;
        saved.blocksize = v.blocksize;
        saved.violation = result.counterexample;
        saved.recorded = *result.failing_case;
        const std::vector<std::string> simpler = simpler_failing_values(saved, *unit.property, target_of_visit, *baseline);
        if (!simpler.empty()) {
          // The violation printed is the saved case's, which replay shows; the visit's own is kept beside it.
          failure["values_simplified"] = simpler;
          event["violation"] = saved.violation;
          event["violation_as_drawn"] = result.counterexample;
        }
        failure["reproduction"] = reproduction(saved);
        saved.found = failure;
        try {
          const properties::CorpusSave save = properties::save_to_corpus(options.corpus, saved);
          event["file"] = save.path.string();
          event["added"] = save.added;
          event["fingerprint"] = properties::case_fingerprint(saved);
          event["reproduction"] = failure["reproduction"];
        } catch (const std::exception& error) {
          event["save_error"] = error.what();
        }
      }
    }
    if (!emit(report_fd, event)) return exit_failed;
    if (!result.passed) retired[unit_index] = true;
    if (!result.passed && options.stop_on_failure) {
      stopped = "failure";
      break;
    }
  }
  nlohmann::json stop_event = {{"event", "stopped"}, {"reason", stopped}, {"worker", worker}};
  if (interrupted()) stop_event["signal"] = interrupt_name();
  emit(report_fd, stop_event);
  return exit_passed;
}

}  // namespace bitparity::reports
