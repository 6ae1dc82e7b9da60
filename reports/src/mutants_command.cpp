// `bitparity mutants`: each selected mutant is hunted until a property kills it; a failure on a
// target the mutant does not alter is a harness error. The mutants that only multi-rank properties
// can kill are hunted over ranks (rank_mutants.hpp). Stops cleanly on SIGINT/SIGTERM.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/properties/mutant_hunt.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/progress.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"
#include "rank_mutants.hpp"
#include "shell_words.hpp"
#include "temporary_folder.hpp"

namespace bitparity::reports {

namespace {

struct Selection {
  std::vector<const fixtures::MutantInfo*> in_process;
  std::vector<const RankMutant*> over_ranks;
  std::size_t size() const { return in_process.size() + over_ranks.size(); }
};

Selection selected_mutants(const std::vector<std::string>& given) {
  // NAME and mutant:NAME are one mutant: a repeat either way is refused (it was hunted twice).
  std::vector<std::string> only;
  for (const auto& name : given) only.push_back(name.starts_with("mutant:") ? name.substr(7) : name);
  refuse_repeats("--only", only);
  const auto& catalogue = fixtures::mutant_catalogue();
  Selection chosen;
  for (std::string name : only) {
    if (name.starts_with("mutant:")) name.erase(0, 7);  // as `bitparity list` prints them
    const auto found = std::find_if(catalogue.begin(), catalogue.end(), [&](const auto& m) { return m.name == name; });
    if (found != catalogue.end()) {
      chosen.in_process.push_back(&*found);
    } else if (const RankMutant* over_ranks = find_rank_mutant(name)) {
      if (!over_ranks->not_over_ranks.empty()) throw UsageError("mutant " + name + " is not hunted here: " + over_ranks->not_over_ranks);
      chosen.over_ranks.push_back(over_ranks);
    } else {
      throw UsageError("unknown mutant '" + name + "'; `bitparity list` names the " +
                       std::to_string(catalogue.size() + rank_mutant_catalogue().size()) + " catalogued mutants");
    }
  }
  if (only.empty()) {
    for (const auto& mutant : catalogue) chosen.in_process.push_back(&mutant);
    for (const auto& mutant : rank_mutant_catalogue()) chosen.over_ranks.push_back(&mutant);
  }
  return chosen;
}

// What one hunt printed and recorded, whichever runner hunted it.
struct Outcome {
  bool killed = false, harness_error = false, stopped = false;
  std::string property, target, counterexample, replay;
  double seconds = 0.0;
};

}  // namespace

void add_mutants_command(CLI::App& app, MutantsCommand& command) {
  auto* mutants = app.add_subcommand("mutants", "run the properties against every catalogued mutant; those of the sharded driver, quantized storage "
                                                "and checkpoints over 3 ranks (mpirun, or BITPARITY_MPIRUN)");
  mutants->add_option("--seconds", command.seconds, "time budget per mutant (default 30)")->check(budget_seconds(86400));
  mutants->add_option("--seed", command.seed, "hunt seed (default 1)")->transform(seed_value());
  mutants->add_option("--json", command.json_path, "write the results as JSON to this file (checked before the run)")
      ->each([&command](const std::string&) { command.json_given = true; });
  mutants->add_option("--only", command.only, "run only these mutants, NAME or mutant:NAME (repeatable)");
}

int run_mutants_command(const MutantsCommand& command) {
  const Selection chosen = selected_mutants(command.only);
  std::string no_launcher;
  const std::string launcher = chosen.over_ranks.empty() ? std::string() : mpi_launcher(no_launcher);
  if (launcher.empty() && !command.only.empty() && !chosen.over_ranks.empty()) {
    throw UsageError("mutant " + chosen.over_ranks.front()->name + " is hunted over ranks, and " + no_launcher);
  }
  if (command.json_given) check_result_path("--json", command.json_path);
  // The hunts over ranks write their rows there (and the runs under mpirun need it): refused now,
  // before any hunt, when the temporary folder is unusable.
  std::optional<TemporaryFolder> rows_folder;
  if (!launcher.empty()) {
    try {
      rows_folder.emplace("bitparity-rank-hunt");
    } catch (const WriteError& e) {
      throw UsageError(e.what());
    }
  }
  std::printf("bitparity mutants: %zu mutants (%zu in one process, %zu over %d ranks), up to %s each, seed %llu\n", chosen.size(),
              chosen.in_process.size(), chosen.over_ranks.size(), kRankMutantWorld, format_duration(command.seconds).c_str(),
              static_cast<unsigned long long>(command.seed));
  std::fflush(stdout);
  nlohmann::json list = nlohmann::json::array();
  int survivors = 0, harness_errors = 0, killed = 0, not_run = 0;
  std::vector<std::pair<double, std::string>> kill_seconds;  // design.md: each under 30 s, the median under 2 s
  Progress progress("mutants", static_cast<std::int64_t>(chosen.size()));
  // Prints and records one hunt; false once the run was interrupted.
  auto record = [&](const std::string& name, const std::string& description, const std::string& killer, const Outcome& hunt,
                    const nlohmann::json& over_ranks) {
    if (hunt.killed) {
      ++killed;
      kill_seconds.emplace_back(hunt.seconds, name);
      std::printf("KILLED   %-30s by %-24s (expected %s) in %6.2f s on %s\n  %s\n  replay: %s\n\n", name.c_str(), hunt.property.c_str(),
                  killer.c_str(), hunt.seconds, hunt.target.c_str(), hunt.counterexample.c_str(), hunt.replay.c_str());
    } else if (hunt.harness_error && hunt.property.empty()) {
      ++harness_errors;
      std::printf("HARNESS  %-30s its run broke, so nothing was proven\n  %s\n  replay: %s\n\n", name.c_str(),
                  hunt.counterexample.c_str(), hunt.replay.c_str());
    } else if (hunt.harness_error) {
      ++harness_errors;
      std::printf("HARNESS  %-30s failed %s on %s, which it does not alter: the harness disagrees with the kernel\n  %s\n  replay: %s\n\n",
                  name.c_str(), hunt.property.c_str(), hunt.target.c_str(), hunt.counterexample.c_str(), hunt.replay.c_str());
    } else if (hunt.stopped || interrupted()) {
      std::printf("STOPPED  %-30s by %s after %.1f s\n\n", name.c_str(), interrupt_name(), hunt.seconds);
      return false;
    } else {
      ++survivors;
      std::printf("SURVIVED %-30s after %.1f s (%s)\n\n", name.c_str(), hunt.seconds, description.c_str());
    }
    std::fflush(stdout);
    list.push_back({{"name", name},
                    {"description", description},
                    {"killed", hunt.killed},
                    {"harness_error", hunt.harness_error},
                    {"expected_killer", killer},
                    {"property", hunt.property},
                    {"target", hunt.target},
                    {"seconds", hunt.seconds},
                    {"counterexample", hunt.counterexample},
                    {"replay", hunt.replay},
                    {"over_ranks", over_ranks}});
    return true;
  };
  std::size_t index = 0;
  for (const fixtures::MutantInfo* mutant : chosen.in_process) {
    if (interrupted()) break;
    progress.update(static_cast<std::int64_t>(index++), 0.0, mutant->name);
    const auto hunt = properties::hunt_mutant(*mutant, command.seconds, command.seed);
    progress.finish();
    // A hunt a signal cut short before its first case is stopped, not broken.
    const bool cut_short = hunt.altered_cases == 0 && interrupted();
    const Outcome outcome{hunt.killed, hunt.harness_error && !cut_short, cut_short, hunt.property, hunt.target, hunt.counterexample,
                          shell_words({program_name(), "mutants", "--only", mutant->name, "--seed", std::to_string(command.seed)}),
                          hunt.seconds};
    if (!record(mutant->name, mutant->description, mutant->killer, outcome, nullptr)) break;
  }
  std::vector<std::string> unhunted;
  for (const RankMutant* mutant : chosen.over_ranks) {
    if (interrupted()) break;
    const std::string why = !mutant->not_over_ranks.empty() ? mutant->not_over_ranks : no_launcher;
    if (!why.empty()) {
      ++not_run;
      unhunted.push_back(mutant->name);
      std::printf("NOT RUN  %-30s %s\n\n", mutant->name.c_str(), why.c_str());
      list.push_back({{"name", mutant->name}, {"description", mutant->description}, {"killed", false}, {"harness_error", false},
                      {"expected_killer", mutant->killer}, {"property", ""}, {"target", ""}, {"seconds", 0.0},
                      {"counterexample", ""}, {"replay", ""}, {"over_ranks", kRankMutantWorld}, {"not_run", why}});
      continue;
    }
    progress.update(static_cast<std::int64_t>(index++), 0.0, mutant->name);
    const RankHunt hunt = hunt_over_ranks(*mutant, launcher, rows_folder->path(), command.seconds, command.seed);
    progress.finish();
    const Outcome outcome{hunt.killed, hunt.harness_error, hunt.stopped, hunt.property, hunt.target, hunt.counterexample,
                          hunt.replay, hunt.seconds};
    if (!record(mutant->name, mutant->description, mutant->killer, outcome, kRankMutantWorld)) break;
  }
  const bool complete = !interrupted() && list.size() == chosen.size();
  std::printf("summary: %zu of %zu mutants run, %d killed, %d survived, %d harness errors", list.size() - static_cast<std::size_t>(not_run), chosen.size(),
              killed, survivors, harness_errors);
  if (not_run > 0) {
    std::string names;
    for (const auto& name : unhunted) names += (names.empty() ? "" : ", ") + name;
    std::printf(", %d not run (%s)", not_run, names.c_str());
  }
  std::printf("\n");
  nlohmann::json kill_times = nullptr;
  if (!kill_seconds.empty()) {
    std::sort(kill_seconds.begin(), kill_seconds.end());
    const std::size_t n = kill_seconds.size();
    const double median = n % 2 == 1 ? kill_seconds[n / 2].first : (kill_seconds[n / 2 - 1].first + kill_seconds[n / 2].first) / 2;
    std::printf("kill times: median %.2f s, slowest %.2f s (%s), over %zu kills\n", median, kill_seconds.back().first,
                kill_seconds.back().second.c_str(), n);
    kill_times = {{"median", median}, {"slowest", kill_seconds.back().first}, {"slowest_mutant", kill_seconds.back().second}};
  }
  if (command.json_given) {
    nlohmann::json document = {{"schema", "bitparity.mutants/3"},
                               {"bitparity", version_string()},
                               {"seed", command.seed},
                               {"complete", complete},
                               {"kill_seconds", kill_times},
                               {"mutants", list}};
    if (interrupted()) document["interrupted"] = interrupt_name();
    std::printf("results: %s\n", printable_text(write_results_document(command.json_path, document)).c_str());
  }
  if (interrupted()) return interrupted_exit_code();
  return survivors == 0 && harness_errors == 0 ? exit_passed : exit_failed;
}

}  // namespace bitparity::reports
