// `bitparity fuzz`: options checked before anything runs, the corpus state read and resumed, the
// supervisor started, and the summary printed and written.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <sched.h>

#include "bitparity/fixtures/plugin_notes.hpp"
#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/saved_case.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/folder_lock.hpp"
#include "bitparity/reports/fuzz.hpp"
#include "shell_words.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/progress.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"
#include "fuzz_over_ranks.hpp"
#include "fuzz_saving.hpp"
#include "fuzz_state.hpp"
#include "fuzz_supervisor.hpp"
#include "rank_case.hpp"

namespace bitparity::reports {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStateSchema = "bitparity.fuzz-state/1";

// "60", "60s", "10m", "8h", "1h30m": seconds. Each unit once, from days down to seconds ("1h1h"
// and "30m1h" are typing slips, not durations), and each number a plain decimal ("1.2.3" is not).
double parse_duration(const std::string& option, const std::string& text) {
  const std::string usage = option + " " + text + ": use a duration such as 60s, 10m, 8h or 1h30m, each unit once from d, h, m to s (at most 30 days)";
  if (text.empty()) throw UsageError(usage);
  double total = 0;
  double last_unit = std::numeric_limits<double>::infinity();
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = at;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
    if (end == at) throw UsageError(usage);
    const std::string digits = text.substr(at, end - at);
    char* parsed = nullptr;
    const double number = std::strtod(digits.c_str(), &parsed);
    if (*parsed != '\0') throw UsageError(usage);
    double unit = 1;
    if (end < text.size()) {
      const char c = text[end++];
      unit = c == 's' ? 1 : c == 'm' ? 60 : c == 'h' ? 3600 : c == 'd' ? 86400 : -1;
      if (unit < 0 || unit >= last_unit) throw UsageError(usage);
      last_unit = unit;
    } else if (at != 0) {
      throw UsageError(usage);  // "1h30": the last number needs its unit
    }
    total += number * unit;
    at = end;
  }
  if (!std::isfinite(total) || total <= 0 || total > 30 * 86400) throw UsageError(usage);
  return total;
}

// The hardware threads this process may run on (its affinity, as nproc counts them).
int hardware_threads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

fs::path state_path(const std::string& corpus) { return fs::path(corpus) / "fuzz-state.json"; }

nlohmann::json read_state(const std::string& corpus, bool first_visit_given) {
  return read_fuzz_state(state_path(corpus), kStateSchema, "next_visit", first_visit_given);
}

// Every case the corpus already holds must be readable: a file that is not would make its replay
// (and ctest's corpus label) refuse the whole corpus after a night of fuzzing. Said before the run.
void check_corpus_cases(const std::string& corpus) {
  std::error_code error;
  const fs::path cases = fs::path(corpus) / "cases";
  const auto refuse = [&](const std::string& why) {
    throw UsageError("--corpus " + corpus + ": " + why + "; fix the file or move it out of the corpus");
  };
  if (fs::is_directory(cases, error)) {
    try {
      for (const fs::path& file : properties::corpus_case_files(cases)) properties::read_saved_case(file);
    } catch (const properties::CaseFileError& bad) {
      refuse(bad.what());
    }
  }
  try {
    for (const fs::path& file : rank_case_files(corpus)) read_rank_case(file);
  } catch (const UsageError& bad) {
    refuse(bad.what());
  }
}

// Checks the corpus and takes its lock, held until the returned lock goes.
FolderLock check_corpus(const std::string& corpus) {
  if (corpus.empty()) throw UsageError("--corpus is empty; give a folder for the saved cases");
  std::error_code error;
  if (fs::exists(corpus, error) && !fs::is_directory(corpus, error)) {
    throw UsageError("--corpus " + corpus + " is not a folder; give a folder for the saved cases");
  }
  check_corpus_cases(corpus);
  fs::create_directories(fs::path(corpus) / "cases", error);
  if (error) throw UsageError("--corpus " + corpus + ": cannot create its cases folder (" + error.message() + "); give a writable folder");
  check_result_path("--corpus " + corpus + ": its fuzz state", state_path(corpus).string());
  // The failures found are saved in cases/: a folder that takes no file would lose them.
  check_result_path("--corpus", (fs::path(corpus) / "cases" / "probe.json").string());
  return FolderLock(corpus, "--corpus");
}

// Devices from --device (or cpu when neither --device nor --implementation is given), then each
// --implementation, checked and each once.
std::vector<std::string> fuzzed_implementations(const FuzzCommand& command, const CheckOptions& selection) {
  std::vector<std::string> names;
  if (!command.selection.requested.devices.empty() || command.implementations.empty()) names = selection.devices;
  for (const auto& name : command.implementations) {
    fixtures::ImplementationId id;
    try {
      id = fixtures::parse_implementation_id(name);
      fixtures::make_implementation(id);  // refuses unknown mutants and absent devices, naming them
    } catch (const Error& error) {
      if (error.code() == ErrorCode::implementation_fault) throw;  // a library that crashed loading: exit 5
      throw UsageError(std::string("--implementation ") + name + ": " + error.message());
    }
    names.push_back(name);
  }
  refuse_repeats("--device/--implementation", names);
  return names;
}

std::string joined(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

nlohmann::json tally_json(const FuzzTally& tally) {
  return {{"visits", tally.visits},
          {"cases", tally.cases},
          {"elements", tally.elements},
          {"incomplete_visits", tally.incomplete_visits},
          {"seconds", tally.seconds},
          {"cases_per_second", tally.seconds > 0 ? tally.cases / tally.seconds : 0.0},
          {"reference_seconds", tally.reference_seconds},
          {"reference_share", tally.seconds > 0 ? tally.reference_seconds / tally.seconds : 0.0}};
}

// The resolved selection as options: every implementation by --implementation.
std::vector<std::string> selection_arguments(const FuzzOptions& options) {
  std::vector<std::string> args;
  for (const auto& suite : options.selection.suites) args.insert(args.end(), {"--suite", std::string(fixtures::suite_name(suite))});
  for (const auto& id : options.selection.properties) args.insert(args.end(), {"--property", id});
  // A map read from a file is registered by the worker too, from the same file.
  for (const auto& spec : options.maps) args.insert(args.end(), {"--map", spec});
  for (const auto& name : options.selection.formats) args.insert(args.end(), {"--format", name});
  for (const auto& name : options.selection.optimizers) args.insert(args.end(), {"--optimizer", name});
  for (const auto& name : options.selection.dtypes) args.insert(args.end(), {"--dtype", name});
  for (const auto size : options.selection.block_sizes) args.insert(args.end(), {"--block-size", std::to_string(size)});
  for (const auto& name : options.implementations) args.insert(args.end(), {"--implementation", name});
  return args;
}

// The worker command line.
std::vector<std::string> worker_command(const FuzzOptions& options, int worker, std::int64_t first_visit, double budget) {
  std::vector<std::string> args = {program_name(), "fuzz", "--worker", std::to_string(worker), "--report-fd", "3",
                                   "--jobs", std::to_string(options.jobs), "--seed", std::to_string(options.seed),
                                   "--first-visit", std::to_string(first_visit), "--budget", std::to_string(budget) + "s",
                                   "--corpus", options.corpus};
  if (options.visits > 0) args.insert(args.end(), {"--visit-end", std::to_string(options.first_visit + options.visits)});
  const std::vector<std::string> selection = selection_arguments(options);
  args.insert(args.end(), selection.begin(), selection.end());
  if (options.stop_on_failure) args.push_back("--stop-on-failure");
  return args;
}

// The command that runs one visit again, alone (the same build gives the same cases).
std::string rerun_command(const FuzzOptions& options, std::int64_t visit) {
  std::vector<std::string> words = {program_name(), "fuzz", "--jobs", "1", "--seed", std::to_string(options.seed), "--first-visit",
                                    std::to_string(visit), "--visits", "1", "--budget", "1h", "--corpus", options.corpus};
  const std::vector<std::string> selection = selection_arguments(options);
  words.insert(words.end(), selection.begin(), selection.end());
  return shell_words(words);
}

void print_summary(const FuzzTotals& totals, const FuzzOptions& options, std::size_t known_cases) {
  std::printf("\n%-12s %8s %10s %10s %12s %10s\n", "suite", "visits", "cases", "seconds", "cases/s", "reference");
  for (const auto& [suite, tally] : totals.by_suite) {
    std::printf("%-12s %8lld %10lld %10.1f %12.1f %9.0f%%\n", suite.c_str(), static_cast<long long>(tally.visits),
                static_cast<long long>(tally.cases), tally.seconds, tally.seconds > 0 ? tally.cases / tally.seconds : 0.0,
                tally.seconds > 0 ? 100.0 * tally.reference_seconds / tally.seconds : 0.0);
  }
  std::string per_property;
  for (const auto& [property, tally] : totals.by_property) per_property += " " + property + ":" + std::to_string(tally.cases);
  std::printf("cases per property:%s\n", per_property.c_str());
  // The first failure of each property on each implementation in full; the others counted.
  std::map<std::string, int> shown, not_saved, caseless;
  for (const auto& failure : totals.failures) {
    const std::string key = failure.value("property", "?") + " on " + failure.value("implementation", "?");
    if (shown[key]++ > 0) {
      not_saved[key] += failure.contains("save_error") ? 1 : 0;
      // A worker's crash, error or hang leaves no case: only the visit can be rerun.
      caseless[key] += !failure.contains("file") && !failure.contains("save_error") ? 1 : 0;
      continue;
    }
    std::printf("\nFAILED %s %s on %s (visit %lld)\n  %s\n", failure.value("property", "?").c_str(),
                failure.value("target", "?").c_str(), failure.value("implementation", "?").c_str(),
                static_cast<long long>(failure.value("visit", std::int64_t{-1})), failure.value("violation", "").c_str());
    if (failure.contains("file")) {
      std::printf("  saved: %s%s\n  replay: %s replay %s\n", failure.value("file", "").c_str(),
                  failure.value("added", false) ? "" : " (already in the corpus)", shell_word(program_name()).c_str(),
                  shell_word(failure.value("file", "")).c_str());
      if (failure.value("reproduction", "") != properties::kReproduces) {
        std::printf("  note: on a fresh instance the saved case %s\n", failure.value("reproduction", "").c_str());
      }
    }
    if (failure.contains("save_error")) std::printf("  NOT SAVED: %s\n", failure.value("save_error", "").c_str());
    std::printf("  rerun this visit: %s\n", rerun_command(options, failure.value("visit", std::int64_t{0})).c_str());
  }
  for (const auto& [key, count] : shown) {
    if (count <= 1) continue;
    // A full disk saved none of them: the line said they were in the corpus.
    const int unsaved = not_saved[key], without_case = caseless[key];
    std::string where = unsaved == 0 ? "their cases are in the corpus"
                        : unsaved == count - 1 ? "their cases were NOT SAVED"
                                               : std::to_string(unsaved) + " of their cases were NOT SAVED";
    if (without_case == count - 1) {
      where = "a worker crashed, failed or hung on each, so they have no case; rerun their visits";
    } else if (without_case > 0) {
      const int saved = count - 1 - unsaved - without_case;
      where = std::to_string(saved) + " of their cases are in the corpus" +
              (unsaved > 0 ? ", " + std::to_string(unsaved) + " were NOT SAVED" : std::string()) + ", " +
              std::to_string(without_case) + " have no case (a worker crashed, failed or hung): rerun their visits";
    }
    std::printf("%s failed on %d more targets (%s)\n", key.c_str(), count - 1, where.c_str());
  }
  // A sweep cut at its share of the budget checked a prefix: said, so a short run claims no more.
  const std::string cut = totals.all.incomplete_visits == 0
                              ? ""
                              : " (" + std::to_string(totals.all.incomplete_visits) + " stopped before their end: " +
                                    (interrupted() ? "the signal" : "an exhaustive sweep checks what its share of the budget allows") + ")";
  std::printf("\nsummary: %lld visits%s, %lld cases in %s (%.1f cases/s), %zu failures, %lld new corpus cases (%zu before), seed %llu, "
              "next visit %lld%s\n",
              static_cast<long long>(totals.all.visits), cut.c_str(), static_cast<long long>(totals.all.cases),
              format_duration(totals.wall_seconds).c_str(), totals.wall_seconds > 0 ? totals.all.cases / totals.wall_seconds : 0.0,
              totals.failures.size(), static_cast<long long>(totals.new_cases), known_cases,
              static_cast<unsigned long long>(options.seed), static_cast<long long>(totals.next_visit),
              interrupted() ? (std::string(", interrupted by ") + interrupt_name()).c_str() : "");
}

}  // namespace

void add_fuzz_command(CLI::App& app, FuzzCommand& command) {
  auto* fuzz = app.add_subcommand("fuzz", "run every property x implementation x entry x dtype round-robin with fresh seeds until the budget ends; failures go to the corpus");
  CheckCommand& s = command.selection;
  fuzz->add_option("--budget", command.budget, "how long: 60s, 10m, 8h, 1h30m (default 60s)");
  fuzz->add_option("--shrink-budget", command.shrink_budget,
                   "over ranks: how long to shrink each failure through mpirun, past the budget if need be (default 30s; at most "
                   "100 runs)");
  fuzz->add_option("--visits", command.visits, "stop after this many visits (a reproducible length; default: only the budget)")
      ->transform(integer_in(1, std::int64_t{1} << 40));
  fuzz->add_option("--suite", s.suite_names,
                   "quant, optim32, optim8 or conversions (repeatable; default all); or the suites over ranks, fuzzed apart "
                   "through mpirun over 2 to 5 ranks: sharded, storage, resume");
  fuzz->add_option("--property", s.requested.properties, "only these property ids (repeatable)");
  fuzz->add_option("--format", s.requested.formats, "only these quantization formats (repeatable)");
  fuzz->add_option("--map", s.maps,
                   "only these code maps: a name, FILE.json or FILE.safetensors[:TENSOR] (repeatable); an 8-bit one is "
                   "also the map of the 8-bit optimizers' states (one with negative values for momenta, one without for "
                   "second moments)");
  fuzz->add_option("--optimizer", s.requested.optimizers, "only these optimizers (repeatable)");
  fuzz->add_option("--dtype", s.requested.dtypes, "only these input dtypes: f32, f16, bf16 (repeatable)");
  fuzz->add_option("--block-size", s.requested.block_sizes, "only these block sizes (repeatable)")->transform(integer_in(1, 1 << 20));
  fuzz->add_option("--device", s.requested.devices, "cpu, cuda:N or all (repeatable; default cpu unless --implementation is given)");
  fuzz->add_option("--implementation", command.implementations, "also fuzz this implementation: cpu, cuda:N or mutant:NAME (repeatable)");
  fuzz->add_option("--corpus", command.corpus, "folder of saved failing cases and the run state (default bitparity-corpus)");
  fuzz->add_option("--jobs", command.jobs, "worker processes (default 1)")->transform(integer_in(1, 256));
  fuzz->add_option("--seed", command.seed, "run seed (default: a fresh one, printed)")
      ->transform(seed_value())
      ->each([&command](const std::string&) { command.seed_given = true; });
  fuzz->add_option("--first-visit", command.first_visit, "start the round-robin here (default: where the corpus state left off)")
      ->transform(integer_in(0, kLastFirstVisit));
  fuzz->add_flag("--stop-on-failure", command.stop_on_failure, "stop at the first failure");
  fuzz->add_option("--json", command.json_path, "write the summary as JSON to this file (checked before the run)")
      ->each([&command](const std::string&) { command.json_given = true; });
  // Below a second the supervisor's polls, not the option, would set the rate: a flood of lines.
  fuzz->add_option("--log-every", command.log_every, "seconds between progress lines when stderr is not a terminal (default 60)")
      ->check(seconds_in(86400, 1));
  fuzz->add_flag("--require-gpu", command.require_gpu, "fail (exit 4) when no CUDA device is usable; also BITPARITY_REQUIRE_GPU=1");
  // Worker processes: started by the supervisor with the resolved options.
  fuzz->add_option("--worker", command.worker)->group("")->transform(integer_in(0, 255));
  fuzz->add_option("--report-fd", command.report_fd)->group("")->transform(integer_in(3, 1 << 20));
  fuzz->add_option("--visit-end", command.visit_end)->group("")->transform(integer_in(0, std::int64_t{1} << 52));
}

int run_fuzz_command(const FuzzCommand& command) {
  if (command.worker >= 0) fixtures::quiet_plugin_notes();  // the supervisor said what a plugin's library lacks
  for (const auto& device : command.selection.requested.devices) {
    if (device.starts_with("mutant:")) throw UsageError("--device " + device + " is a mutant; fuzz it with --implementation " + device);
  }
  if (command.worker < 0 && fuzzes_over_ranks(command)) {
    const double budget = parse_duration("--budget", command.budget);
    const double shrink = command.shrink_budget.empty() ? 30 : parse_duration("--shrink-budget", command.shrink_budget);
    if (gpu_required(command.require_gpu)) require_usable_gpu();
    std::optional<FolderLock> lock;
    return run_fuzz_over_ranks(command, budget, shrink, [&command, &lock] { lock.emplace(check_corpus(command.corpus)); });
  }
  if (!command.shrink_budget.empty()) {
    throw UsageError("--shrink-budget is for the suites over ranks (sharded, storage, resume), whose failures shrink through "
                     "mpirun; drop it here");
  }
  // Before the devices are resolved: a required GPU that is missing is exit 4, whichever device was named.
  if (command.worker < 0 && gpu_required(command.require_gpu)) require_usable_gpu();
  bool asked_all = false;
  const CheckOptions selection = resolve_check_selection(command.selection, asked_all);
  FuzzOptions options;
  options.selection = selection;
  options.maps = command.selection.maps;
  options.implementations = fuzzed_implementations(command, selection);
  options.budget_seconds = parse_duration("--budget", command.budget);
  options.corpus = command.corpus;
  options.jobs = command.jobs;
  options.stop_on_failure = command.stop_on_failure;
  if (command.worker >= 0) {
    if (command.report_fd < 0) throw UsageError("--worker needs --report-fd");
    options.seed = command.seed;
    options.first_visit = std::max<std::int64_t>(0, command.first_visit);
    options.visits = command.visit_end > 0 ? command.visit_end - options.first_visit : 0;
    if (command.visit_end > 0 && options.visits <= 0) return exit_passed;
    return run_fuzz_worker(options, command.worker, command.report_fd);
  }
  // More workers than hardware threads wait for a core, and a worker that waits past its visit's
  // allowance is reported hung: a failure blamed on the implementation for the machine's load.
  const int threads = hardware_threads();
  if (options.jobs > threads) {
    throw UsageError("--jobs " + std::to_string(options.jobs) + " is more than this machine's " + std::to_string(threads) +
                     " hardware threads, where waiting workers would be reported hung; use --jobs " + std::to_string(threads) + " or fewer");
  }
  if (command.json_given) {
    check_result_apart_from_input("--json", command.json_path, command.corpus, "the corpus");
    check_result_apart_from_map_and_plugin_files("--json", command.json_path, command.selection.maps, command.implementations);
    check_result_path("--json", command.json_path);
  }
  // The workers keep quiet about what a plugin's library lacks: it is said here, once.
  for (const auto& name : options.implementations) {
    if (name.starts_with("plugin:")) fixtures::make_implementation(name);
  }
  CheckOptions every_size = selection;
  every_size.block_sizes.clear();
  every_size.devices = options.implementations;
  check_block_sizes(selection, plan_check(every_size));
  std::vector<std::string> not_applicable;
  const std::vector<PlannedRow> units = plan_fuzz(options, &not_applicable);
  if (units.empty() && !not_applicable.empty()) refuse_when_nothing_applies(not_applicable, "units (property x target x implementation)");
  if (units.empty()) throw UsageError("the selection fuzzes nothing: " + why_empty(selection));
  const FolderLock lock = check_corpus(options.corpus);  // last of the checks: it makes the corpus folder
  const nlohmann::json state = read_state(options.corpus, command.first_visit >= 0);
  options.first_visit = command.first_visit >= 0 ? command.first_visit : state.value("next_visit", std::int64_t{0});
  options.visits = command.visits;
  if (options.first_visit + options.visits > kLastFirstVisit) {
    const std::string start = command.first_visit >= 0 ? "--first-visit " + std::to_string(options.first_visit)
                                                        : "the corpus state " + state_path(options.corpus).string() + "'s next_visit " +
                                                              std::to_string(options.first_visit);
    throw UsageError(start + " with --visits " + std::to_string(options.visits) +
                     " ends past visit 2^50, where the round-robin stops (the next run could not resume); start earlier (--first-visit N) "
                     "or visit fewer");
  }
  if (options.first_visit >= kLastFirstVisit) {
    throw UsageError(std::string(command.first_visit >= 0 ? "--first-visit" : "the corpus state " + state_path(options.corpus).string()) +
                     " is at visit 2^50, where the round-robin stops (a run from there visits nothing); start again with --first-visit 0");
  }
  options.seed = command.seed_given ? command.seed : (std::random_device{}() * 0x100000001ull ^ std::random_device{}()) >> 1;
  const std::size_t known_cases = properties::corpus_case_files(options.corpus).size();
  std::printf("bitparity fuzz: %zu units (property x target x implementation) on %s, budget %s%s, %d job%s, seed %llu, "
              "first visit %lld, corpus %s (%zu cases)\n",
              units.size(), joined(options.implementations).c_str(), format_duration(options.budget_seconds).c_str(),
              options.visits > 0 ? (" or " + std::to_string(options.visits) + " visits").c_str() : "", options.jobs,
              options.jobs == 1 ? "" : "s", static_cast<unsigned long long>(options.seed),
              static_cast<long long>(options.first_visit), options.corpus.c_str(), known_cases);
  std::fflush(stdout);
  fixtures::print_plugin_notes();
  if (!not_applicable.empty()) {
    std::printf("not fuzzed: %zu row(s) the implementations do not offer (%s)\n", not_applicable.size(), not_applicable.front().c_str());
  }
  if (command.selection.suite_names.empty() && command.worker < 0) {
    std::fprintf(stderr, "note: the suites over ranks are fuzzed apart, through mpirun: %s fuzz --suite sharded --suite storage "
                 "--suite resume\n", shell_word(program_name()).c_str());
  }
  if (asked_all && std::none_of(options.implementations.begin(), options.implementations.end(),
                                [](const std::string& name) { return name.starts_with("cuda:"); })) {
    std::fprintf(stderr, "%s\n", no_gpu_notice().c_str());
  }
  std::fflush(stdout);

  nlohmann::json runs = state.value("runs", nlohmann::json::array());
  std::string state_not_saved;  // the last failure to save the state, if any
  const auto save_state = [&](const FuzzTotals& totals) {
    nlohmann::json run = {{"seed", std::to_string(options.seed)}, {"first_visit", options.first_visit},
                          {"next_visit", totals.next_visit},      {"cases", totals.all.cases},
                          {"failures", totals.failures.size()},   {"seconds", totals.wall_seconds},
                          {"build", version_string()}};
    nlohmann::json all_runs = runs;
    all_runs.push_back(run);
    const nlohmann::json document = {{"schema", kStateSchema}, {"next_visit", totals.next_visit}, {"runs", all_runs}};
    try {
      fixtures::write_file_atomically(state_path(options.corpus).string(), json_file_text(document, 1));
      state_not_saved.clear();
    } catch (const fixtures::WriteFailure& error) {
      state_not_saved = error.what();
      std::fprintf(stderr, "warning: the fuzz state was not saved: %s\n", error.what());
    }
  };
  const FuzzTotals totals = supervise_fuzz(
      options, [&](int worker, std::int64_t first, double budget) { return worker_command(options, worker, first, budget); },
      command.log_every, save_state);
  print_summary(totals, options, known_cases);
  if (command.json_given) {
    nlohmann::json suites = nlohmann::json::object(), properties_json = nlohmann::json::object();
    for (const auto& [name, tally] : totals.by_suite) suites[name] = tally_json(tally);
    for (const auto& [name, tally] : totals.by_property) properties_json[name] = tally_json(tally);
    const nlohmann::json document = {{"schema", "bitparity.fuzz/1"},
                                     {"bitparity", version_string()},
                                     {"seed", std::to_string(options.seed)},
                                     {"budget_seconds", options.budget_seconds},
                                     {"jobs", options.jobs},
                                     {"implementations", options.implementations},
                                     {"first_visit", options.first_visit},
                                     {"next_visit", totals.next_visit},
                                     {"wall_seconds", totals.wall_seconds},
                                     {"complete", !interrupted() && !totals.cut_short},
                                     {"total", tally_json(totals.all)},
                                     {"suites", suites},
                                     {"properties", properties_json},
                                     {"failures", [&] {
                                       nlohmann::json failures = nlohmann::json::array();
                                       for (nlohmann::json failure : totals.failures) {
                                         failure["rerun"] = rerun_command(options, failure.value("visit", std::int64_t{0}));
                                         failures.push_back(failure);
                                       }
                                       return failures;
                                     }()},
                                     {"new_corpus_cases", totals.new_cases},
                                     {"corpus", options.corpus}};
    std::printf("results: %s\n", printable_text(write_results_document(command.json_path, document)).c_str());
  }
  if (interrupted()) return interrupted_exit_code();
  if (const auto lost = exit_for_unsaved_fuzz_results(totals.failures, options.corpus + "/cases", "visits", state_not_saved)) return *lost;
  // The rule of check and replay: a run that checked nothing does not pass.
  if (totals.failures.empty() && totals.all.visits == 0) {
    const auto stopped_by = [&](const char* reason) {
      return std::find(totals.stop_reasons.begin(), totals.stop_reasons.end(), reason) != totals.stop_reasons.end();
    };
    print_error(std::string("no visit ran, so nothing was checked: ") +
                (stopped_by("budget") ? "the budget of " + format_duration(options.budget_seconds) + " ended first; give a longer --budget"
                 : stopped_by("visits") ? std::string("the visits asked (--visits) fell on exhaustive sweeps an earlier visit ran; "
                                                      "give more --visits, or --first-visit 0")
                                        : std::string("every unit left is an exhaustive sweep an earlier visit ran; start again with --first-visit 0")));
    return exit_failed;
  }
  // A worker that ended with exit 5 (an implementation or the machine failed mid-run: a plugin in
  // process that called exit or crashed) makes the campaign's exit 5, as in check and replay.
  const bool run_error = std::any_of(totals.failures.begin(), totals.failures.end(), [](const nlohmann::json& failure) {
    return failure.value("exit_code", 0) == exit_run_error;
  });
  if (run_error) return exit_run_error;
  return totals.failures.empty() ? exit_passed : exit_failed;
}

}  // namespace bitparity::reports
