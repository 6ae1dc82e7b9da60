// `bitparity replay PATH...`: re-runs saved cases from their files, without the generators. A case
// saved on a real implementation is a regression: it must hold now. A case saved on a mutant is a
// kill: it must still fail there (and hold with --implementation cpu).
#include <cstdio>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/saved_case.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"

namespace bitparity::reports {

namespace {

struct Loaded {
  std::string path;
  properties::SavedCase saved;
};

std::string target_of(const properties::SavedCase& saved) {
  std::string target = saved.property + " " + (saved.entry.empty() ? "" : saved.entry + "/") + dtype_name(saved.dtype);
  if (saved.blocksize > 0) target += " blocksize " + std::to_string(saved.blocksize);
  return target;
}

}  // namespace

void add_replay_command(CLI::App& app, ReplayCommand& command) {
  auto* replay = app.add_subcommand("replay", "re-run saved cases (files, or corpus folders) from their inputs, without the generators");
  replay->add_option("paths", command.paths, "case files or corpus folders")->required();
  replay->add_option("--implementation", command.implementation,
                     "run every case on this implementation (cpu, cuda:N, mutant:NAME) instead of its own; then every case must hold");
  replay->add_option("--json", command.json_path, "write the outcomes as JSON to this file (checked before the run)")
      ->each([&command](const std::string&) { command.json_given = true; });
}

int run_replay_command(const ReplayCommand& command) {
  if (command.json_given) check_result_path("--json", command.json_path);
  if (!command.implementation.empty()) {
    try {
      fixtures::make_implementation(command.implementation);
    } catch (const Error& error) {
      throw UsageError("--implementation " + command.implementation + ": " + error.what());
    }
  }
  // Every file is read and checked before any case runs.
  std::vector<Loaded> cases;
  for (const auto& path : command.paths) {
    try {
      for (const auto& file : properties::corpus_case_files(path)) cases.push_back({file.string(), properties::read_saved_case(file)});
    } catch (const properties::CaseFileError& error) {
      throw UsageError(error.what());
    }
  }
  if (cases.empty()) throw UsageError("no case files (*.json) in " + command.paths.front() + "; save some with `bitparity fuzz --corpus DIR`");
  const auto cpu = fixtures::make_implementation("cpu");
  nlohmann::json results = nlohmann::json::array();
  std::int64_t held = 0, kills = 0, unexpected = 0, skipped = 0, invalid = 0;
  for (const auto& [path, saved] : cases) {
    if (interrupted()) break;
    const std::string implementation = command.implementation.empty() ? saved.implementation : command.implementation;
    const bool is_mutant = fixtures::parse_implementation_id(implementation).kind == fixtures::ImplementationKind::mutant;
    nlohmann::json entry = {{"file", path}, {"property", saved.property}, {"target", target_of(saved)}, {"implementation", implementation}};
    std::string verdict;
    bool as_expected = true;
    try {
      const auto iut = fixtures::make_implementation(implementation);
      properties::ReplayOutcome outcome = properties::replay_saved_case(saved, *iut, *cpu);
      // A failure that needs earlier calls (hidden state in the implementation) shows on the second.
      if (outcome.passed && is_mutant && saved.found.value("reproduction", "") == "needs-earlier-calls") {
        outcome = properties::replay_saved_case(saved, *iut, *cpu);
      }
      if (outcome.not_applicable) {
        verdict = "not applicable: " + outcome.not_applicable_reason;
        as_expected = false;
      } else if (is_mutant) {
        verdict = outcome.passed ? "SURVIVES: the case no longer fails on " + implementation : "kills " + implementation;
        as_expected = !outcome.passed;
        kills += as_expected ? 1 : 0;
      } else {
        verdict = outcome.passed ? "holds" : "FAILS: " + outcome.violation;
        as_expected = outcome.passed;
        held += as_expected ? 1 : 0;
      }
      entry["passed"] = outcome.passed;
      if (!outcome.passed) entry["violation"] = outcome.violation;
    } catch (const properties::CaseFileError& error) {
      verdict = std::string("INVALID: ") + error.what();
      ++invalid;
      as_expected = false;
      entry["invalid"] = error.what();
    } catch (const Error& error) {
      if (error.code() == ErrorCode::device_unavailable || std::string(error.what()).find("not available") != std::string::npos) {
        verdict = std::string("skipped: ") + error.what();
        ++skipped;
        entry["skipped"] = error.what();
      } else {
        verdict = std::string("ERROR: ") + error.what();
        as_expected = false;
      }
    } catch (const std::exception& error) {
      verdict = std::string("ERROR: ") + error.what();
      as_expected = false;
    }
    unexpected += as_expected || entry.contains("invalid") ? 0 : 1;
    entry["verdict"] = verdict;
    entry["as_expected"] = as_expected;
    results.push_back(entry);
    std::printf("%-40s %-14s %s\n  %s\n", target_of(saved).c_str(), implementation.c_str(), path.c_str(), verdict.c_str());
  }
  std::printf("\nreplay: %zu cases: %lld hold, %lld kill their mutant, %lld unexpected, %lld skipped, %lld invalid%s\n",
              cases.size(), static_cast<long long>(held), static_cast<long long>(kills), static_cast<long long>(unexpected),
              static_cast<long long>(skipped), static_cast<long long>(invalid),
              interrupted() ? (std::string(", interrupted by ") + interrupt_name()).c_str() : "");
  if (command.json_given) {
    write_result_file(command.json_path, nlohmann::json({{"schema", "bitparity.replay/1"}, {"bitparity", version_string()},
                                                         {"complete", !interrupted()}, {"results", results}})
                                                 .dump(2) + "\n");
    std::printf("results: %s\n", command.json_path.c_str());
  }
  if (interrupted()) return interrupted_exit_code();
  if (invalid > 0) return exit_bad_input;
  if (unexpected > 0) return exit_failed;
  if (skipped > 0 && gpu_required(false)) return exit_gpu_missing;
  return exit_passed;
}

}  // namespace bitparity::reports
