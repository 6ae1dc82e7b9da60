#include "fuzz_over_ranks.hpp"
#include "fuzz_saving.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <utility>

#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/reports/check_over_ranks.hpp"
#include "bitparity/reports/check_run.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/progress.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"
#include "fuzz_state.hpp"
#include "rank_case.hpp"
#include "rank_case_shrink.hpp"
#include "rank_mutants.hpp"
#include "rank_runs.hpp"
#include "shell_words.hpp"
#include "temporary_folder.hpp"
#if BITPARITY_HAS_MPI
#include "sharded_plan.hpp"
#endif

namespace bitparity::reports {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStateSchema = "bitparity.fuzz-over-ranks-state/1";
constexpr int kWorlds[] = {2, 3, 4, 5};  // uneven shards, a middle rank, and more ranks than cores
constexpr int kMostCases = 8;          // cases per row in a round, reached after eight turns of the worlds
constexpr int kShrinkRuns = 100;  // runs over ranks to shrink one failing case with inputs (and --shrink-budget)

struct Selection {
  ShardedCommand sharded;              // properties, targets, dtypes, maps, implementation, mutant
  std::vector<std::string> properties;  // those with rows, in the round-robin's order
  std::vector<std::string> extra;       // further `sharded` options (a fault's maps)
  std::string implementation;           // as saved cases name it: cpu, cuda:N, mutant:NAME
};

Selection resolve_selection(const FuzzCommand& command) {
  CheckCommand check = command.selection;
  for (const auto& name : check.suite_names) {
    if (!is_suite_over_ranks(name)) {
      throw UsageError("suite " + name + " runs in one process, and suites storage, resume and sharded run over ranks; fuzz "
                       "them in two runs (`fuzz --suite " + name + "`, then `fuzz --suite sharded ...`)");
    }
  }
  if (command.jobs != 1) {
    throw UsageError("--jobs " + std::to_string(command.jobs) + ": each round over ranks already runs 2 to 5 processes; drop --jobs");
  }
  if (command.implementations.size() > 1) throw UsageError("the suites over ranks fuzz one implementation per run; give one --implementation");
  if (!command.implementations.empty() && !check.requested.devices.empty()) {
    throw UsageError("the suites over ranks run one implementation on every rank; give --device or --implementation, not both");
  }
  Selection selection;
  selection.implementation = check.requested.devices.empty() ? "cpu" : check.requested.devices.front();
  const RankMutant* fault = nullptr;
  if (!command.implementations.empty()) {
    selection.implementation = command.implementations.front();
    const std::string& name = selection.implementation;
    if (name.starts_with("mutant:")) fault = find_rank_mutant(name.substr(7));
    if (fault != nullptr && !fault->not_over_ranks.empty()) throw UsageError("--implementation " + name + ": " + fault->not_over_ranks);
    if (fault == nullptr) {
      try {
        fixtures::make_implementation(fixtures::parse_implementation_id(name));
      } catch (const Error& error) {
        throw UsageError("--implementation " + name + ": " + error.message());
      }
    }
  }
  if (fault != nullptr && check.suite_names.empty()) {
    for (const auto& property : fault->alters) check.suite_names.push_back(suite_over_ranks_of(property));
  }
  selection.sharded = sharded_command_of_check(check);
  ShardedCommand& sharded = selection.sharded;
  if (fault != nullptr) {
    std::erase_if(sharded.properties, [&](const std::string& p) {
      return std::find(fault->alters.begin(), fault->alters.end(), p) == fault->alters.end();
    });
    if (sharded.properties.empty()) {
      std::string suites;
      for (const auto& p : fault->alters) suites += (suites.empty() ? "" : " or ") + suite_over_ranks_of(p);
      throw UsageError("--implementation " + selection.implementation + " alters only what suite " + suites +
                       " checks; select that suite (or no suite)");
    }
    sharded.mutant = fault->name;
    // The maps a fault needs to show, unless the user chose maps: theirs then (both were given, and
    // were refused as a clash or as a map given twice).
    const bool maps_chosen = !sharded.maps.empty();
    for (std::size_t i = 0; i < fault->options.size(); ++i) {
      if (fault->options[i] == "--map" && i + 1 < fault->options.size()) {
        if (!maps_chosen) sharded.maps.push_back(fault->options[i + 1]);
        ++i;
      } else {
        selection.extra.push_back(fault->options[i]);
      }
    }
  } else if (!command.implementations.empty()) {
    sharded.implementation = selection.implementation;
  }
#if BITPARITY_HAS_MPI
  // The options as `sharded` will read them: all together (a bad one is refused here), then each
  // property alone, as a round runs it. One without rows, or that the fault cannot run with (a
  // driver fault needs P6 in the same run), is dropped.
  plan_sharded(sharded);
  for (const auto& property : sharded.properties) {
    ShardedCommand one = sharded;
    one.properties = {property};
    try {
      if (!plan_sharded(one).rows.empty()) selection.properties.push_back(property);
    } catch (const NoRowTheMutantAlters&) {
      // The mutant alters none of this property's rows: it is not fuzzed there.
    } catch (const UsageError&) {
      if (fault == nullptr) throw;
    }
  }
#endif
  if (selection.properties.empty()) throw UsageError("the selection fuzzes nothing over ranks: no property has a row for it");
  return selection;
}

// The `sharded` options of one round.
std::vector<std::string> round_arguments(const Selection& selection, const std::string& property, int cases, std::uint64_t seed) {
  const ShardedCommand& s = selection.sharded;
  std::vector<std::string> args = {"sharded", "--property", property, "--cases", std::to_string(cases), "--seed", std::to_string(seed)};
  // Each round runs one property: it takes only the options that property reads (sharded refuses the others).
  if (property != "P10") {
    for (const auto& name : s.optimizers) args.insert(args.end(), {"--optimizer", name});
  }
  if (property == "P10" || property == "P2r") {
    for (const auto& name : s.formats) args.insert(args.end(), {"--format", name});
  }
  for (const auto& name : s.dtypes) args.insert(args.end(), {"--dtype", name});
  if (property == "P6" || property == "P11") {
    for (const auto& spec : s.maps) args.insert(args.end(), {"--map", spec});
  }
  if (s.implementation != "cpu") args.insert(args.end(), {"--implementation", s.implementation});
  if (!s.mutant.empty()) args.insert(args.end(), {"--mutant", s.mutant});
  args.insert(args.end(), selection.extra.begin(), selection.extra.end());
  return args;
}

struct Tally {
  std::int64_t rounds = 0, cases = 0, elements = 0;
  double seconds = 0;
};

nlohmann::json tally_json(const Tally& tally) {
  return {{"visits", tally.rounds},
          {"cases", tally.cases},
          {"elements", tally.elements},
          {"seconds", tally.seconds},
          {"cases_per_second", tally.seconds > 0 ? tally.cases / tally.seconds : 0.0}};
}

fs::path state_path(const std::string& corpus) { return fs::path(corpus) / "fuzz-state-over-ranks.json"; }

nlohmann::json read_state(const std::string& corpus, bool first_round_given) {
  return read_fuzz_state(state_path(corpus), kStateSchema, "next_round", first_round_given);
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// "shrunk from 4 ranks, 3 steps, 7 parameters, 1520 elements to 2 ranks, 1 step, 1 parameter, 1 element in 31 runs".
std::string shrinking_text(const nlohmann::json& shrinking) {
  if (shrinking.contains("not_shrunk")) return "not shrunk, saved to regenerate from its seeds: " + shrinking.value("not_shrunk", "");
  const auto size = [](const nlohmann::json& s) {
    const auto count = [&s](const char* key, const char* one, const char* many) {
      const std::int64_t n = s.value(key, std::int64_t{0});
      return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    if (s.contains("dimensions")) {  // P2r
      return count("world_size", "rank", "ranks") + ", " + count("steps", "step", "steps") + ", " +
             count("dimensions", "dimension", "dimensions") + ", " + count("elements", "element", "elements") + ", " +
             count("pieces", "piece", "pieces");
    }
    if (s.contains("storage_elements")) {
      return count("world_size", "rank", "ranks") + ", " + count("storage_elements", "storage element", "storage elements") + ", " +
             count("columns", "column", "columns") + ", " + count("adapter_elements", "adapter element", "adapter elements");
    }
    return count("world_size", "rank", "ranks") + ", " + count("steps", "step", "steps") + ", " +
           count("microbatches", "microbatch", "microbatches") + ", " + count("parameters", "parameter", "parameters") + ", " +
           count("elements", "element", "elements");
  };
  const std::string signal = shrinking.value("ended_by", "allowance");
  const std::string ended_by = signal == "allowance" ? "allowance ended" : "cut short by " + signal;
  return "shrunk from " + size(shrinking.value("from", nlohmann::json::object())) + " to " + size(shrinking.value("to", nlohmann::json::object())) +
         " in " + std::to_string(shrinking.value("runs", 0)) + " runs over ranks" +
         (!shrinking.value("complete", false)          ? " (" + ended_by + ")"
          : !shrinking.value("values_complete", false) ? " (" + ended_by + " before the values were simplest)"
                                                       : std::string());
}

}  // namespace

bool fuzzes_over_ranks(const FuzzCommand& command) {
  for (const auto& name : command.selection.suite_names) {
    if (is_suite_over_ranks(name)) return true;
  }
  for (const auto& name : command.implementations) {
    if (name.starts_with("mutant:") && find_rank_mutant(name.substr(7)) != nullptr) return true;
  }
  return false;
}

int run_fuzz_over_ranks(const FuzzCommand& command, double budget_seconds, double shrink_seconds,
                        const std::function<void()>& prepare_corpus) {
#if !BITPARITY_HAS_MPI
  (void)command, (void)budget_seconds, (void)shrink_seconds, (void)prepare_corpus;
  throw UsageError("this build has no Open MPI, so it cannot fuzz the suites over ranks; run ./scripts/install-deps and build again");
#else
  const Selection selection = resolve_selection(command);
  if (command.json_given) {
    check_result_apart_from_input("--json", command.json_path, command.corpus, "the corpus");
    check_result_path("--json", command.json_path);
  }
  std::string why;
  const std::string launcher = mpi_launcher(why);
  if (launcher.empty()) throw UsageError("fuzzing the suites over ranks needs mpirun: " + why);
  std::unique_ptr<TemporaryFolder> folder;
  try {
    folder = std::make_unique<TemporaryFolder>("bitparity-fuzz-over-ranks");
  } catch (const std::exception& error) {
    throw UsageError(error.what());  // it names the folder and the fix
  }
  prepare_corpus();
  const nlohmann::json state = read_state(command.corpus, command.first_visit >= 0);
  const std::int64_t first_round = command.first_visit >= 0 ? command.first_visit : state.value("next_round", std::int64_t{0});
  // From there no round runs: it ended as "no round finished within the budget", which it was not.
  if (first_round >= kLastFirstVisit) {
    throw UsageError(std::string(command.first_visit >= 0 ? "--first-visit" : "the corpus state " + state_path(command.corpus).string()) +
                     " is at round 2^50, where the round-robin stops (a run from there runs no round); start again with --first-visit 0");
  }
  const std::uint64_t seed =
      command.seed_given ? command.seed : (std::random_device{}() * 0x100000001ull ^ std::random_device{}()) >> 1;
  const std::size_t known_cases = rank_case_files(command.corpus).size();
  const auto& properties = selection.properties;
  std::printf("bitparity fuzz over ranks: %s on %s over 2 to 5 ranks (%s), budget %s%s, seed %llu, first round %lld, corpus "
              "%s (%zu cases over ranks)\n",
              joined(properties).c_str(), selection.implementation.c_str(), launcher.c_str(), format_duration(budget_seconds).c_str(),
              command.visits > 0 ? (" or " + std::to_string(command.visits) + " rounds").c_str() : "",
              static_cast<unsigned long long>(seed), static_cast<long long>(first_round), command.corpus.c_str(), known_cases);
  std::fflush(stdout);

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(budget_seconds));
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  double last_print = 0;
  std::map<std::string, Tally> by_property;
  Tally all;
  std::vector<nlohmann::json> failures;
  std::int64_t new_cases = 0, round = first_round;
  const std::string rows_file = folder->path() + "/rows.json", output = folder->path() + "/output.txt";
  // The state after every round (atomically), so that a killed run resumes at the next one.
  const nlohmann::json earlier_runs = state.value("runs", nlohmann::json::array());
  bool state_warned = false;
  std::string state_not_saved;  // the last save's error: the run then ends with exit 3, as in one process
  const auto save_state = [&](std::int64_t next_round, double seconds) {
    nlohmann::json runs = earlier_runs;
    runs.push_back({{"seed", std::to_string(seed)}, {"first_round", first_round}, {"next_round", next_round}, {"cases", all.cases},
                    {"failures", failures.size()}, {"seconds", seconds}, {"build", version_string()}});
    try {
      fixtures::write_file_atomically(state_path(command.corpus).string(),
                                      json_file_text(nlohmann::json({{"schema", kStateSchema}, {"next_round", next_round}, {"runs", runs}}), 1));
      state_not_saved.clear();
    } catch (const fixtures::WriteFailure& error) {
      if (!std::exchange(state_warned, true)) std::fprintf(stderr, "warning: the fuzz state was not saved: %s\n", error.what());
      state_not_saved = error.what();
    }
  };
  const auto properties_count = static_cast<std::int64_t>(properties.size());
  std::set<std::string> failed_properties;
  for (;; ++round) {
    if (command.visits > 0 && round - first_round >= command.visits) break;
    if (round >= kLastFirstVisit) break;  // the last position a state may hold (a later run would refuse it)
    if (std::chrono::steady_clock::now() >= deadline || interrupted()) break;
    if (command.stop_on_failure && !failures.empty()) break;
    if (failed_properties.size() == properties.size()) break;
    const std::string& property = properties[static_cast<std::size_t>(round % properties_count)];
    if (failed_properties.count(property) != 0) continue;
    const int world = kWorlds[(round / properties_count) % std::size(kWorlds)];
    const int cases = static_cast<int>(std::min<std::int64_t>(kMostCases, 1 + round / (properties_count * std::ssize(kWorlds))));
    const std::uint64_t round_seed = mix_seed(seed ^ mix_seed(static_cast<std::uint64_t>(round))) >> 1;
    std::vector<std::string> args = round_arguments(selection, property, cases, round_seed);
    const std::string rerun = "mpirun -np " + std::to_string(world) + " " + shell_word(program_name()) + " " + shell_words(args);
    args.insert(args.end(), {"--json", rows_file});
    fs::remove(rows_file);
    const double round_start = elapsed();
    const RankRun run = run_over_ranks(launcher, world, args, output, deadline);
    if (run.exit_code < 0 && run.failure.empty()) break;  // stopped at the budget or by a signal: not counted
    const RankRows rows = run.exit_code < 0 ? RankRows{nlohmann::json::array(), run.failure} : read_rank_rows(rows_file, run, output);
    Tally& tally = by_property[property];
    const double seconds = elapsed() - round_start;
    ++tally.rounds, ++all.rounds;
    tally.seconds += seconds, all.seconds += seconds;
    // The first failing row of a round is saved; the others are counted (one bug fails many rows).
    std::int64_t failing_rows = 0;
    for (const auto& row : rows.results) {
      const std::int64_t row_cases = row.value("cases", std::int64_t{0}), row_elements = row.value("elements", std::int64_t{0});
      tally.cases += row_cases, all.cases += row_cases;
      tally.elements += row_elements, all.elements += row_elements;
      if (row.value("wrong_elements", std::int64_t{0}) == 0 || failing_rows++ > 0) continue;
      RankCase saved = rank_case_of_row(row, world, selection.implementation);
      nlohmann::json failure = {{"property", saved.property},        {"target", saved.target_text().substr(saved.property.size() + 1)},
                                {"implementation", saved.implementation}, {"violation", saved.violation},
                                {"visit", round},                      {"world_size", world},
                                {"rerun", rerun}};
      try {
        if (saved.carries_inputs()) {
          std::fprintf(stderr, "%sshrinking the failing %s case (at most %d runs over ranks, %.0f s)%s", terminal ? "\r\033[K" : "",
                       saved.property.c_str(), kShrinkRuns, shrink_seconds, terminal ? "" : "\n");
          const auto shrink_deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                              std::chrono::duration<double>(shrink_seconds));
          saved = shrink_rank_case(saved, launcher, folder->path(), {kShrinkRuns, shrink_deadline});
          failure["violation"] = saved.violation;
        }
        if (!saved.shrinking.is_null()) failure["shrinking"] = saved.shrinking;
        failure["reproduction"] = saved.carries_inputs() ? "its inputs, recorded and shrunk: no generator" : "regenerated from the row's seeds (same build)";
        const SavedRankCase file = save_rank_case(command.corpus, saved, {{"seed", std::to_string(seed)}, {"round", round}});
        failure["file"] = file.file;
        failure["added"] = file.added;
        new_cases += file.added ? 1 : 0;
      } catch (const std::exception& error) {
        failure["save_error"] = error.what();
      }
      failures.push_back(failure);
    }
    if (failing_rows > 1) failures.back()["more_failing_rows"] = failing_rows - 1;
    const bool failed_row = failing_rows > 0;
    // 130 or 143 without a signal of its own: SIGINT or SIGTERM reached the round's mpirun or one of
    // its ranks from outside this fuzz. The round stopped as asked; that is not a failure.
    // A signal to the round's mpirun (which passes SIGTERM on, and exits 1) leaves rows that say so.
    const bool stopped_from_outside =
        run.exit_code == 128 + SIGINT || run.exit_code == 128 + SIGTERM || run.exit_code == 128 + SIGHUP || !rows.interrupted.empty();
    if (stopped_from_outside && !interrupted()) {
      const std::string signal = !rows.interrupted.empty()          ? rows.interrupted
                                 : run.exit_code == 128 + SIGINT ? "SIGINT"
                                 : run.exit_code == 128 + SIGHUP ? "SIGHUP"
                                                                 : "SIGTERM";
      std::fprintf(stderr, "%snote: round %lld (%s on %d ranks) was stopped from outside this fuzz (%s, to its mpirun or a rank; "
                   "exit %d); its finished rows count, the stop is not a failure\n", terminal ? "\r\033[K" : "",
                   static_cast<long long>(round), property.c_str(), world, signal.c_str(), run.exit_code);
    }
    const bool broken_run = !stopped_from_outside && (!rows.broken.empty() || (!failed_row && run.exit_code != 0));
    if (broken_run) {
      // A run that breaks is a failure too (a rank crashed, hung or refused): nothing to save.
      failures.push_back({{"property", property},
                          {"target", "on " + std::to_string(world) + " ranks"},
                          {"implementation", selection.implementation},
                          {"violation", rows.broken.empty() ? "the run over ranks ended with exit " + std::to_string(run.exit_code) + ": " +
                                                                  what_the_run_said(output)
                                                            : rows.broken},
                          {"visit", round},
                          {"world_size", world},
                          {"reproduction", "none saved: the run broke"},
                          {"rerun", rerun}});
    }
    save_state(round + 1, elapsed());
    // As in the one-process fuzzer, a property that failed is not visited again in this run.
    if (failed_row || broken_run) failed_properties.insert(property);
    if (elapsed() - last_print >= (terminal ? 0.5 : command.log_every)) {
      last_print = elapsed();
      char line[512];
      std::snprintf(line, sizeof line, "%s / %s, round %lld (%s on %d ranks, %d cases per row), %lld cases, %.1f cases/s, %zu failures",
                    format_duration(elapsed()).c_str(), format_duration(budget_seconds).c_str(), static_cast<long long>(round),
                    property.c_str(), world, cases, static_cast<long long>(all.cases), all.seconds > 0 ? all.cases / all.seconds : 0.0,
                    failures.size());
      std::fprintf(stderr, terminal ? "\r\033[K%s" : "%s\n", terminal ? fit_to_terminal(line).c_str() : line);
    }
  }
  if (terminal && last_print > 0) std::fprintf(stderr, "\r\033[K");
  const double wall = elapsed();

  save_state(round, wall);

  std::printf("\n%-9s %8s %10s %10s %12s\n", "property", "rounds", "cases", "seconds", "cases/s");
  for (const auto& [property, tally] : by_property) {
    std::printf("%-9s %8lld %10lld %10.1f %12.2f\n", property.c_str(), static_cast<long long>(tally.rounds),
                static_cast<long long>(tally.cases), tally.seconds, tally.seconds > 0 ? tally.cases / tally.seconds : 0.0);
  }
  for (const auto& failure : failures) {
    std::printf("\nFAILED %s %s on %s (round %lld)\n  %s\n", failure.value("property", "?").c_str(), failure.value("target", "?").c_str(),
                failure.value("implementation", "?").c_str(), static_cast<long long>(failure.value("visit", std::int64_t{0})),
                failure.value("violation", "").c_str());
    if (failure.contains("more_failing_rows")) {
      std::printf("  and %lld more rows of that round failed (not saved)\n", static_cast<long long>(failure.value("more_failing_rows", 0)));
    }
    if (failure.contains("shrinking")) std::printf("  %s\n", shrinking_text(failure.at("shrinking")).c_str());
    if (failure.contains("file")) {
      std::printf("  saved: %s%s\n  replay: %s replay %s\n", failure.value("file", "").c_str(),
                  failure.value("added", false) ? "" : " (already in the corpus)", shell_word(program_name()).c_str(),
                  shell_word(failure.value("file", "")).c_str());
    }
    if (failure.contains("save_error")) std::printf("  NOT SAVED: %s\n", failure.value("save_error", "").c_str());
    std::printf("  rerun: %s\n", failure.value("rerun", "").c_str());
  }
  std::printf("\nsummary: %lld rounds over ranks, %lld cases in %s (%.2f cases/s), %zu failures, %lld new corpus cases (%zu before), "
              "seed %llu, next round %lld%s\n",
              static_cast<long long>(all.rounds), static_cast<long long>(all.cases), format_duration(wall).c_str(),
              wall > 0 ? all.cases / wall : 0.0, failures.size(), static_cast<long long>(new_cases), known_cases,
              static_cast<unsigned long long>(seed), static_cast<long long>(round),
              interrupted() ? (std::string(", interrupted by ") + interrupt_name()).c_str() : "");
  if (command.json_given) {
    nlohmann::json suites = nlohmann::json::object(), properties_json = nlohmann::json::object();
    std::map<std::string, Tally> by_suite;  // sharded: P6 and P2r together
    for (const auto& [property, tally] : by_property) {
      properties_json[property] = tally_json(tally);
      Tally& suite = by_suite[suite_over_ranks_of(property)];
      suite.rounds += tally.rounds, suite.cases += tally.cases, suite.elements += tally.elements, suite.seconds += tally.seconds;
    }
    for (const auto& [suite, tally] : by_suite) suites[suite] = tally_json(tally);
    const nlohmann::json document = {{"schema", "bitparity.fuzz/1"},
                                     {"bitparity", version_string()},
                                     {"over_ranks", {{"worlds", kWorlds}, {"launcher", launcher}}},
                                     {"seed", std::to_string(seed)},
                                     {"budget_seconds", budget_seconds},
                                     {"shrink_budget_seconds", shrink_seconds},
                                     {"jobs", 1},
                                     {"implementations", {selection.implementation}},
                                     {"first_visit", first_round},
                                     {"next_visit", round},
                                     {"wall_seconds", wall},
                                     {"complete", !interrupted()},
                                     {"total", tally_json(all)},
                                     {"suites", suites},
                                     {"properties", properties_json},
                                     {"failures", failures},
                                     {"new_corpus_cases", new_cases},
                                     {"corpus", command.corpus}};
    std::printf("results: %s\n", printable_text(write_results_document(command.json_path, document)).c_str());
  }
  if (interrupted()) return interrupted_exit_code();
  if (const auto lost = exit_for_unsaved_fuzz_results(failures, command.corpus, "rounds", state_not_saved)) return *lost;
  // The rule of check and replay: a run that checked nothing does not pass.
  if (failures.empty() && all.rounds == 0) {
    print_error("no round over ranks finished within the budget of " + format_duration(budget_seconds) +
                " (a round takes seconds), so nothing was checked; give a longer --budget");
    return exit_failed;
  }
  return failures.empty() ? exit_passed : exit_failed;
#endif
}

}  // namespace bitparity::reports
