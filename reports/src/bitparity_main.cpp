// The front door: parses the command line, hands over to a subcommand, and maps every failure to
// one line on stderr and a documented exit code.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <regex>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/reports/check_over_ranks.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/launch_rank.hpp"
#include "bitparity/reports/version.hpp"

namespace {

using namespace bitparity::reports;

constexpr const char* kCommands[] = {"check", "fuzz", "replay", "report", "mutants", "drift", "state-plan", "sharded", "checkpoint", "list"};

int refuse(const std::string& message, int code) {
  if (!refusal_left_to_rank_0()) print_error(message);
  return code;
}

// CLI11's words for an option given more than once, said as the other refusals say things.
std::string plain_parse_error(const std::string& text) {
  static const std::regex repeated("^(--[A-Za-z0-9-]+): At Most 1 required but received ([0-9]+)$");
  std::smatch match;
  if (std::regex_match(text, match, repeated)) return match[1].str() + " given " + match[2].str() + " times; give it once";
  // CLI11 lists the words it did not take last first ("sp.json --json"): in the order given.
  static const std::regex not_expected("^The following arguments? (?:was|were) not expected: (.*)$");
  if (std::regex_match(text, match, not_expected)) {
    std::istringstream words(match[1].str());
    std::vector<std::string> given;
    for (std::string word; words >> word;) given.insert(given.begin(), word);
    std::string listed;
    for (const std::string& word : given) listed += (listed.empty() ? "" : " ") + word;
    return (given.size() == 1 ? "this word is not an option or value the command takes: " : "these words are not options or values the command takes: ") + listed;
  }
  // CLI11 names its type ("1 required INT:INT in [1, 100000000] missing"): say what is missing.
  static const std::regex missing("^(--[A-Za-z0-9-]+): [0-9]+ required .* missing$");
  if (std::regex_match(text, match, missing)) return match[1].str() + " needs a value; give one after it";
  // An empty value (`--cases=`, or the option last but one) takes the next option as its value.
  static const std::regex option_as_value("^(--[A-Za-z0-9-]+): (.*), got '(--?[A-Za-z][A-Za-z0-9-]*)'$");
  if (std::regex_match(text, match, option_as_value)) {
    return match[1].str() + " was given no value (the next word, " + match[3].str() + ", is an option); " + match[1].str() + " " + match[2].str();
  }
  return text;
}

// The first word beside --help that names no option of the command (or of its action), or "":
// CLI11 prints the help before it judges the other words, so `check --bogus --help` passed.
std::string unknown_option_beside_help(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).starts_with("-")) return "";
  const auto named = [](CLI::App* parent, const std::string& name) -> CLI::App* {
    for (CLI::App* sub : parent->get_subcommands({})) {
      if (sub->get_name() == name) return sub;
    }
    return nullptr;
  };
  std::vector<const CLI::App*> scopes;
  CLI::App* command = named(&app, argv[1]);
  if (command == nullptr) return "";
  scopes.push_back(command);
  if (argc > 2) {
    if (const CLI::App* action = named(command, argv[2])) scopes.push_back(action);
  }
  for (int i = 2; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (!word.starts_with("-") || word == "-h" || word == "--help") continue;
    char* end = nullptr;
    (void)std::strtod(word.c_str(), &end);
    if (end != nullptr && *end == '\0') continue;  // a negative number is a value
    const std::string name = word.substr(0, word.find('='));
    const bool known = std::any_of(scopes.begin(), scopes.end(), [&](const CLI::App* scope) {
      return scope->get_option_no_throw(name) != nullptr;
    });
    if (!known) return word;
  }
  return "";
}

// For an option the command does not take but another does (`check --storage f16`, which is
// sharded's): "; --storage is an option of bitparity sharded, not of check", or "".
std::string option_of_another_command(CLI::App& app, const std::string& command, int argc, char** argv) {
  const auto knows = [](const CLI::App* scope, const std::string& name) {
    if (scope->get_option_no_throw(name) != nullptr) return true;
    const auto actions = scope->get_subcommands({});
    return std::any_of(actions.begin(), actions.end(), [&](const CLI::App* action) { return action->get_option_no_throw(name) != nullptr; });
  };
  const auto commands = app.get_subcommands({});
  const auto own = std::find_if(commands.begin(), commands.end(), [&](const CLI::App* c) { return c->get_name() == command; });
  if (own == commands.end()) return "";
  for (int i = 2; i < argc; ++i) {
    const std::string word = argv[i];
    if (!word.starts_with("--") || word == "--") continue;
    const std::string name = word.substr(0, word.find('='));
    if (knows(*own, name)) continue;
    std::string others;
    for (const CLI::App* other : commands) {
      if (other != *own && knows(other, name)) others += (others.empty() ? "" : ", ") + other->get_name();
    }
    if (!others.empty()) return "; " + name + " is an option of bitparity " + others + ", not of " + command;
  }
  return "";
}

int exit_code_of(bitparity::ErrorCode code) {
  return code == bitparity::ErrorCode::cuda_failure || code == bitparity::ErrorCode::implementation_fault ? exit_run_error
                                                                                                  : exit_bad_input;
}

// Whether stdout is a pipe or a socket: there, a failed write means the reader has gone (EPIPE; SIGPIPE
// is ignored), which `| head` does on purpose. Anywhere else (a file, /dev/full, a terminal) it
// means lost output: a full disk, a file-size limit, a device error.
bool stdout_is_a_pipe() {
  struct stat status {};
  return ::fstat(STDOUT_FILENO, &status) == 0 && (S_ISFIFO(status.st_mode) || S_ISSOCK(status.st_mode));
}

// The command's exit code, unless stdout lost a write it should not have: then one line and exit 3
// (a run that had already failed keeps its own code).
int with_stdout_checked(int code) {
  std::cout.flush();
  const bool lost = (std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout.good()) && !stdout_is_a_pipe();
  if (!lost) return code;
  // Only a run that ended with its results (passed, or with findings) wrote its files; a refused run
  // wrote none, and one whose file failed said so already.
  const bool files_written = code == exit_passed || code == exit_failed;
  print_error(std::string("standard output could not be written (a full disk, a file-size limit or a device error), so the printed "
                          "results were lost; send stdout to a writable place") +
              (files_written ? " (files named by --json or --out were written)" : ""));
  return code == exit_passed ? exit_write_failed : code;
}

int run_command(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) { return with_stdout_checked(run_command(argc, argv)); }

namespace {

int run_command(int argc, char** argv) {
  // Lines reach a log (or a pipe) as they are printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // A reader that closes stdout early (`| head`) must not end the run before its results file is
  // written: the failed writes to stdout are ignored instead.
  std::signal(SIGPIPE, SIG_IGN);
  // Past a file-size limit (`ulimit -f`) a write fails with EFBIG, which the atomic writers report
  // (exit 3, the earlier file kept, the temporary removed); SIGXFSZ would kill the run silently.
  std::signal(SIGXFSZ, SIG_IGN);
  // An empty TMPDIR means none, as it does to Open MPI and mkstemp's callers; the C++ library would
  // take it for a folder named "" and fail the first temporary folder after the work had started.
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && *tmpdir == '\0') ::unsetenv("TMPDIR");
  if (argc > 0) program_name() = argv[0];
  install_interrupt_handlers();
  try {
    CLI::App app{"bitparity: numerical-consistency harness for quantization and optimizer kernels"};
    app.set_version_flag("--version", version_string());
    app.footer(std::string("Run `bitparity COMMAND --help` for a command's options.\n") + exit_code_legend());
    CheckCommand check;
    MutantsCommand mutants;
    DriftCommand drift;
    StatePlanCommand plan;
    ShardedCommand sharded;
    CheckpointCommand checkpoint;
    FuzzCommand fuzz;
    ReplayCommand replay;
    ReportCommand report;
    ListCommand list;
    add_check_command(app, check);
    add_fuzz_command(app, fuzz);
    add_replay_command(app, replay);
    add_report_command(app, report);
    add_mutants_command(app, mutants);
    add_drift_command(app, drift);
    add_sharded_command(app, sharded);
    add_checkpoint_command(app, checkpoint);
    add_state_plan_command(app, plan);
    add_list_command(app, list);
    if (argc < 2) {
      return refuse("a command is required: check, fuzz, replay, report, mutants, drift, state-plan, sharded, checkpoint or list (bitparity --help)",
                    exit_bad_input);
    }
    const std::string first = argv[1];
    if (first == "help") {
      if (argc > 2 && std::find(std::begin(kCommands), std::end(kCommands), std::string(argv[2])) == std::end(kCommands)) {
        return refuse(std::string("unknown command '") + argv[2] + "'; the commands are check, fuzz, replay, report, mutants, drift, state-plan, sharded, checkpoint and list",
                      exit_bad_input);
      }
      if (argc > 2) {
        // `help checkpoint inspect`: the action's own help; any other word after the command is a slip.
        const CLI::App* command = app.get_subcommand(argv[2]);
        if (argc > 3) {
          const auto actions = command->get_subcommands({});
          const auto action = std::find_if(actions.begin(), actions.end(), [&](const CLI::App* a) { return a->get_name() == argv[3]; });
          if (argc > 4 || action == actions.end()) {
            return refuse(std::string("help takes one command") + (actions.empty() ? "" : " and its action") + ", not '" +
                              argv[argc > 4 && action != actions.end() ? 4 : 3] + "' (bitparity help " + argv[2] + ")",
                          exit_bad_input);
          }
          command = *action;
        }
        std::printf("%s", command->help().c_str());
      } else {
        std::printf("%s", app.help().c_str());
      }
      return exit_passed;
    }
    // Before a command the program takes --help or --version, alone: CLI11 would print the version
    // for `--version --bogus` and call `--bogus` a missing command.
    if (first.starts_with("-")) {
      for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == "--help" || word == "-h" || word == "--version") continue;
        const bool command = std::find(std::begin(kCommands), std::end(kCommands), word) != std::end(kCommands);
        return refuse(word.starts_with("-") ? "unknown option '" + word + "'; before a command bitparity takes --help or --version alone (bitparity --help)"
                      : command             ? "'" + first + "' is given alone, not before the command '" + word + "' (bitparity " + word + " --help)"
                                            : "'" + first + "' takes nothing after it, and '" + word + "' is no command (bitparity --help)",
                      exit_bad_input);
      }
      if (argc > 2) return refuse("give --help or --version alone, not both or twice", exit_bad_input);
    }
    if (!first.starts_with("-") && std::find(std::begin(kCommands), std::end(kCommands), first) == std::end(kCommands)) {
      return refuse("unknown command '" + first + "'; the commands are check, fuzz, replay, report, mutants, drift, state-plan, sharded, checkpoint and list (bitparity --help)",
                    exit_bad_input);
    }
    // `checkpoint` has actions of its own; CLI11 would call a wrong one a missing one.
    if (first == "checkpoint" && argc > 2 && !std::string(argv[2]).starts_with("-") && std::string(argv[2]) != "inspect") {
      return refuse(std::string("unknown checkpoint action '") + argv[2] + "'; the one action is inspect (bitparity checkpoint inspect FILE)",
                    exit_bad_input);
    }
    // CLI11 reads "--" as the end of a list's values, not of the options: `check --dtype f32 -- --cases 3`
    // ran three cases. Only a command that takes file names gives "--" its usual meaning.
    if (!first.starts_with("-") && std::any_of(argv + 2, argv + argc, [](const char* word) { return std::string(word) == "--"; })) {
      const auto takes_file_names = [](const CLI::App* scope) {
        return !scope->get_options([](const CLI::Option* option) { return option->get_positional(); }).empty();
      };
      CLI::App* command = app.get_subcommand(first);
      const auto actions = command->get_subcommands({});
      const bool an_action_takes_them = std::any_of(actions.begin(), actions.end(), [&](const CLI::App* action) {
        return argc > 2 && action->get_name() == argv[2] && takes_file_names(action);
      });
      if (!takes_file_names(command) && !an_action_takes_them) {
        return refuse("'--' ends the options only before file names, and bitparity " + first +
                          " takes none, so the words after it would still be read as options; remove '--'",
                      exit_bad_input);
      }
    }
    app.require_subcommand(1);
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& help) {
      if (const std::string unknown = unknown_option_beside_help(app, argc, argv); !unknown.empty()) {
        return refuse("unknown option '" + unknown + "' beside --help (bitparity " + first + " --help lists the options)", exit_bad_input);
      }
      return app.exit(help);
    } catch (const CLI::CallForAllHelp& help) {
      return app.exit(help);
    } catch (const CLI::CallForVersion& version) {
      return app.exit(version);
    } catch (const CLI::ParseError& error) {
      // After an option of its own the program has no command to name: its own help then.
      const std::string help = first.starts_with("-") ? "bitparity --help" : "bitparity " + first + " --help";
      const std::string elsewhere = first.starts_with("-") ? "" : option_of_another_command(app, first, argc, argv);
      return refuse(plain_parse_error(error.what()) + elsewhere + " (" + help + " lists the options)", exit_bad_input);
    }
    // Under mpirun every rank would run a one-process command whole and write the same files.
    const bool runs_over_ranks = app.got_subcommand("sharded") ||
                                 (app.got_subcommand("check") &&
                                  std::any_of(check.suite_names.begin(), check.suite_names.end(), is_suite_over_ranks));
    if (!runs_over_ranks && launched_world_size() > 1) {
      return refuse("bitparity " + app.get_subcommands().front()->get_name() + " runs in one process, and mpirun started " + std::to_string(launched_world_size()) +
                        " copies of it, each writing the same files; run it without mpirun (under mpirun: bitparity sharded, or "
                        "check --suite with a suite over ranks)",
                    exit_bad_input);
    }
    if (app.got_subcommand("check")) return run_check_command(check);
    if (app.got_subcommand("fuzz")) return run_fuzz_command(fuzz);
    if (app.got_subcommand("replay")) return run_replay_command(replay);
    if (app.got_subcommand("report")) return run_report_command(report);
    if (app.got_subcommand("mutants")) return run_mutants_command(mutants);
    if (app.got_subcommand("drift")) return run_drift_command(drift);
    if (app.got_subcommand("state-plan")) return run_state_plan_command(plan);
    if (app.got_subcommand("sharded")) return run_sharded_command(sharded);
    if (app.got_subcommand("checkpoint")) return run_checkpoint_command(checkpoint);
    if (app.got_subcommand("list")) return run_list_command(list);
    return refuse("a command is required: check, fuzz, replay, report, mutants, drift, state-plan, sharded, checkpoint or list", exit_bad_input);
  } catch (const UsageError& error) {
    return refuse(error.what(), exit_bad_input);
  } catch (const WriteError& error) {
    return refuse(error.what(), exit_write_failed);
  } catch (const GpuMissingError& error) {
    return refuse(error.what(), exit_gpu_missing);
  } catch (const bitparity::Error& error) {
    // A refusal of bad input says what was wrong; the code name is for a CUDA failure's report.
    const bool plain = exit_code_of(error.code()) == exit_bad_input || error.code() == bitparity::ErrorCode::implementation_fault;
    return refuse(plain ? error.message() : std::string(error.what()), exit_code_of(error.code()));
  } catch (const std::bad_alloc&) {
    return refuse("out of memory; choose a smaller run (fewer --elements, --cases or rows)", exit_run_error);
  } catch (const std::exception& error) {
    return refuse(std::string("internal error: ") + error.what(), exit_run_error);
  } catch (...) {
    return refuse("internal error: an unknown exception", exit_run_error);
  }
}

}  // namespace
