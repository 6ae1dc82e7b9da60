// `bitparity mutants`: each selected mutant is hunted until a property kills it; a failure on a
// target the mutant does not alter is a harness error. Stops cleanly on SIGINT/SIGTERM.
#include <algorithm>
#include <cstdio>

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

namespace bitparity::reports {

namespace {

std::vector<const fixtures::MutantInfo*> selected_mutants(const std::vector<std::string>& only) {
  refuse_repeats("--only", only);
  std::vector<const fixtures::MutantInfo*> chosen;
  for (std::string name : only) {
    if (name.starts_with("mutant:")) name.erase(0, 7);  // as `bitparity list` prints them
    const auto& catalogue = fixtures::mutant_catalogue();
    const auto found = std::find_if(catalogue.begin(), catalogue.end(), [&](const auto& m) { return m.name == name; });
    if (found == catalogue.end()) {
      throw UsageError("unknown mutant '" + name + "'; `bitparity list` names the " + std::to_string(catalogue.size()) +
                       " catalogued mutants");
    }
    chosen.push_back(&*found);
  }
  if (only.empty()) {
    for (const auto& mutant : fixtures::mutant_catalogue()) chosen.push_back(&mutant);
  }
  return chosen;
}

}  // namespace

void add_mutants_command(CLI::App& app, MutantsCommand& command) {
  auto* mutants = app.add_subcommand("mutants", "run the properties against every catalogued mutant");
  mutants->add_option("--seconds", command.seconds, "time budget per mutant (default 30)")->check(seconds_in(86400));
  mutants->add_option("--seed", command.seed, "hunt seed (default 1)")->check(seed_value());
  mutants->add_option("--json", command.json_path, "write the results as JSON to this file (checked before the run)")
      ->each([&command](const std::string&) { command.json_given = true; });
  mutants->add_option("--only", command.only, "run only these mutants, NAME or mutant:NAME (repeatable)");
}

int run_mutants_command(const MutantsCommand& command) {
  if (command.seconds <= 0) throw UsageError("--seconds must be above 0 for mutants, got 0");
  const auto chosen = selected_mutants(command.only);
  if (command.json_given) check_result_path("--json", command.json_path);
  std::printf("bitparity mutants: %zu mutants, up to %s each, seed %llu\n", chosen.size(),
              format_duration(command.seconds).c_str(), static_cast<unsigned long long>(command.seed));
  std::fflush(stdout);
  nlohmann::json list = nlohmann::json::array();
  int survivors = 0, harness_errors = 0, killed = 0;
  Progress progress("mutants", static_cast<std::int64_t>(chosen.size()));
  for (std::size_t index = 0; index < chosen.size() && !interrupted(); ++index) {
    const fixtures::MutantInfo& mutant = *chosen[index];
    progress.update(static_cast<std::int64_t>(index), 0.0, mutant.name);
    const auto hunt = properties::hunt_mutant(mutant, command.seconds, command.seed);
    progress.finish();
    const std::string replay = program_name() + " mutants --only " + mutant.name + " --seed " + std::to_string(command.seed);
    if (hunt.killed) {
      ++killed;
      std::printf("KILLED   %-30s by %-24s (expected %s) in %6.2f s on %s\n  %s\n  replay: %s\n\n", mutant.name.c_str(),
                  hunt.property.c_str(), mutant.killer.c_str(), hunt.seconds, hunt.target.c_str(),
                  hunt.counterexample.c_str(), replay.c_str());
    } else if (hunt.harness_error) {
      ++harness_errors;
      std::printf("HARNESS  %-30s failed %s on %s, which it does not alter: the harness disagrees with the kernel\n  %s\n  replay: %s\n\n",
                  mutant.name.c_str(), hunt.property.c_str(), hunt.target.c_str(), hunt.counterexample.c_str(),
                  replay.c_str());
    } else if (interrupted()) {
      std::printf("STOPPED  %-30s by %s after %.1f s\n\n", mutant.name.c_str(), interrupt_name(), hunt.seconds);
      break;
    } else {
      ++survivors;
      std::printf("SURVIVED %-30s after %.1f s (%s)\n\n", mutant.name.c_str(), hunt.seconds, mutant.description.c_str());
    }
    std::fflush(stdout);
    list.push_back({{"name", mutant.name},
                    {"description", mutant.description},
                    {"killed", hunt.killed},
                    {"harness_error", hunt.harness_error},
                    {"expected_killer", mutant.killer},
                    {"property", hunt.property},
                    {"target", hunt.target},
                    {"seconds", hunt.seconds},
                    {"counterexample", hunt.counterexample},
                    {"replay", replay}});
  }
  const bool complete = !interrupted() && list.size() == chosen.size();
  std::printf("summary: %zu of %zu mutants run, %d killed, %d survived, %d harness errors\n", list.size(), chosen.size(),
              killed, survivors, harness_errors);
  if (command.json_given) {
    nlohmann::json document = {{"schema", "bitparity.mutants/2"},
                               {"bitparity", version_string()},
                               {"seed", command.seed},
                               {"complete", complete},
                               {"mutants", list}};
    if (interrupted()) document["interrupted"] = interrupt_name();
    write_result_file(command.json_path, document.dump(2) + "\n");
    std::printf("results: %s\n", command.json_path.c_str());
  }
  if (interrupted()) return interrupted_exit_code();
  return survivors == 0 && harness_errors == 0 ? exit_passed : exit_failed;
}

}  // namespace bitparity::reports
