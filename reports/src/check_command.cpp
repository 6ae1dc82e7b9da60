// `bitparity check`: every input is checked before any row runs; rows report progress, stop
// cleanly on SIGINT/SIGTERM, and the JSON is written atomically with what is complete.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bitparity/fixtures/plugin_notes.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/property.hpp"
#include "bitparity/reports/check_run.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/check_over_ranks.hpp"
#include "bitparity/reports/code_map_file.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/findings.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/progress.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"
#include "rank_mutants.hpp"

namespace bitparity::reports {

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::vector<std::string> format_names() {
  std::vector<std::string> names;
  for (const auto& format : properties::quant_registry()) names.push_back(format.name);
  return names;
}

std::vector<std::string> optimizer_names() {
  std::vector<std::string> names;
  for (const auto& entry : properties::optimizer_registry()) names.push_back(entry.name);
  return names;
}

std::string joined(const std::vector<fixtures::Suite>& suites) {
  std::vector<std::string> names;
  for (fixtures::Suite suite : suites) names.emplace_back(fixtures::suite_name(suite));
  return joined(names);
}

std::vector<fixtures::Suite> suites_of_entry(const std::string& entry) {
  std::vector<fixtures::Suite> suites;
  for (fixtures::Suite suite : fixtures::kSuites) {
    for (const auto& spec : properties::suite_targets(suite)) {
      if (spec.entry() == entry) {
        suites.push_back(suite);
        break;
      }
    }
  }
  return suites;
}

// What check runs, from --device and --implementation, each refusal naming the option it came from.
std::vector<std::string> expand_devices(const std::vector<std::string>& device_values, const std::vector<std::string>& implementation_values,
                                        bool& asked_all) {
  if (device_values.empty() && implementation_values.empty()) return {"cpu"};
  std::vector<std::pair<std::string, std::string>> requested;  // (option, value)
  for (const auto& value : device_values) requested.emplace_back("--device", value);
  for (const auto& value : implementation_values) requested.emplace_back("--implementation", value);
  std::vector<std::string> devices;
  std::vector<std::string> option_of;  // the option each entry of `devices` came from
  for (const auto& [option, device] : requested) {
    if (device == "all") {
      asked_all = true;
      for (const auto& found : fixtures::device_implementation_names()) devices.push_back(found), option_of.push_back(option);
      continue;
    }
    if (!device.starts_with("mutant:") && !device.starts_with("plugin:")) {
      try {
        parse_device(device);  // names the devices
      } catch (const Error&) {
        if (option == "--device") throw;
        throw UsageError("--implementation " + device + " is not an implementation check runs; use cpu, cuda:N, all or plugin:PATH "
                         "(a mutant:NAME runs in `bitparity mutants` and `bitparity fuzz`)");
      }
    }
    const fixtures::ImplementationId id = fixtures::parse_implementation_id(device);
    if (id.kind == fixtures::ImplementationKind::mutant) {
      const bool known = fixtures::find_mutant(id.name) != nullptr || find_rank_mutant(id.name) != nullptr;
      if (!known) throw UsageError("unknown mutant '" + id.name + "'; `bitparity list` names the catalogued mutants");
      throw UsageError(device + " is a mutant; check runs cpu, cuda:N, all or plugin:PATH, and mutants run with `bitparity mutants --only " +
                       id.name + "`");
    }
    if (!id.is_device() && id.kind != fixtures::ImplementationKind::plugin) {
      throw UsageError(option + " " + device + " is not a device; use cpu, cuda:N or all");
    }
    fixtures::make_implementation(id);  // refuses absent devices with the reason
    devices.push_back(device), option_of.push_back(option);
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (devices[i] != devices[j]) continue;
      const std::string given = option_of[i] == option_of[j] ? option_of[i] + " " + devices[i] + " given twice"
                                                             : devices[i] + " given by both --device and --implementation";
      throw UsageError(given + "; give each once");
    }
  }
  return devices;
}

}  // namespace

namespace {

// A format, optimizer or property that none of the selected suites has: empty when there is none.
std::string outside_the_suites(const CheckOptions& options, const std::vector<std::string>& entries,
                               const std::vector<std::string>& property_ids) {
  for (const auto& name : entries) {
    const auto suites = suites_of_entry(name);
    bool reachable = false;
    for (const auto& suite : options.suites) reachable = reachable || std::find(suites.begin(), suites.end(), suite) != suites.end();
    if (!reachable) return "'" + name + "' is not in --suite " + joined(options.suites) + "; it is in " + joined(suites);
  }
  for (const auto& id : property_ids) {
    for (const auto& property : properties::property_catalogue()) {
      if (property.id == id && std::find(options.suites.begin(), options.suites.end(), property.suite) == options.suites.end()) {
        return "property " + id + " belongs to suite " + std::string(fixtures::suite_name(property.suite)) + ", not to " +
               joined(options.suites);
      }
    }
  }
  return "";
}

}  // namespace

// Why a selection has no rows, in terms of the options the user gave.
std::string why_empty(const CheckOptions& options) {
  std::vector<std::string> entries = options.formats;
  entries.insert(entries.end(), options.optimizers.begin(), options.optimizers.end());
  if (const std::string outside = outside_the_suites(options, entries, options.properties); !outside.empty()) return outside;
  for (const auto& id : options.properties) {
    for (const auto& property : properties::property_catalogue()) {
      if (property.id != id) continue;
      if (property.needs_baseline && options.devices == std::vector<std::string>{"cpu"}) {
        return "property " + id + " compares a GPU with the cpu; it has no rows with --device cpu";
      }
    }
  }
  return "no property, entry, dtype and block size of the suites matches all the filters together";
}

void check_block_sizes(const CheckOptions& options, const std::vector<PlannedRow>& plan) {
  // No row at any block size: the other filters are what selects nothing, and why_empty says which
  // (a property of another suite was reported as an unsupported block size).
  if (plan.empty()) return;
  const bool any_blocks = std::any_of(plan.begin(), plan.end(), [](const PlannedRow& row) { return row.block_sizes != std::vector<std::int64_t>{0}; });
  if (!any_blocks && !options.block_sizes.empty()) {
    throw UsageError("--block-size " + std::to_string(options.block_sizes.front()) +
                     ": none of the selected rows has blocks (only quantization, dequantization and 8-bit optimizer rows do); "
                     "drop --block-size, or select a suite that has them");
  }
  for (std::int64_t size : options.block_sizes) {
    const bool used = std::any_of(plan.begin(), plan.end(), [&](const PlannedRow& row) {
      return std::find(row.block_sizes.begin(), row.block_sizes.end(), size) != row.block_sizes.end();
    });
    if (!used) {
      throw UsageError("block size " + std::to_string(size) +
                       " is not supported by the selected formats; use a power of two from 64 to 4096 (or 32 for "
                       "nf4 and fp4; `bitparity list` shows each format's sizes)");
    }
  }
}

CheckOptions resolve_check_selection(const CheckCommand& command, bool& asked_all) {
  const CheckOptions& asked = command.requested;
  CheckOptions options = asked;
  refuse_repeats("--suite", command.suite_names);
  refuse_repeats("--property", asked.properties);
  refuse_repeats("--format", asked.formats);
  refuse_repeats("--optimizer", asked.optimizers);
  refuse_repeats("--dtype", asked.dtypes);
  std::vector<std::string> sizes;
  for (auto size : asked.block_sizes) sizes.push_back(std::to_string(size));
  refuse_repeats("--block-size", sizes);
  options.suites.clear();
  for (const auto& name : command.suite_names) {
    if (is_suite_over_ranks(name)) throw UsageError(runs_over_ranks_message(name));  // fuzz and report
    try {
      options.suites.push_back(fixtures::parse_suite(name));
    } catch (const Error&) {
      std::string choices;
      for (auto suite : fixtures::kSuites) choices += (choices.empty() ? "" : ", ") + std::string(fixtures::suite_name(suite));
      for (const auto& suite : suites_over_ranks()) choices += ", " + suite + " (over ranks)";
      throw UsageError("unknown suite '" + name + "'; expected one of " + choices);
    }
  }
  // No --suite but --property: the properties' suites are the selection, so that a filter none of
  // them reads (`--property P1q --format nf4`, `--property P1q --map nf4`) is refused, not ignored.
  bool suites_from_properties = false;
  if (options.suites.empty() && !asked.properties.empty()) {
    for (const fixtures::Suite suite : fixtures::kSuites) {
      for (const auto& property : properties::property_catalogue()) {
        const bool asked_for = std::find(asked.properties.begin(), asked.properties.end(), property.id) != asked.properties.end();
        if (asked_for && property.suite == suite &&
            std::find(options.suites.begin(), options.suites.end(), suite) == options.suites.end()) {
          options.suites.push_back(suite);
        }
      }
    }
    suites_from_properties = !options.suites.empty();
  }
  if (options.suites.empty()) options.suites.assign(fixtures::kSuites.begin(), fixtures::kSuites.end());
  refuse_repeats("--map", command.maps);
  const auto selected = [&](fixtures::Suite suite) {
    return std::find(options.suites.begin(), options.suites.end(), suite) != options.suites.end();
  };
  // Named suites, or all of them by default: optim8 then takes the 8-bit maps as its states' maps
  // only where that is unambiguous (one map with negative values, one without).
  const bool suites_named = !command.suite_names.empty() || suites_from_properties;
  bool ambiguous = false;
  for (const auto& spec : command.maps) {
    // A file's map is registered here, before any row runs, and selected by its name: the quant
    // rows of that map, and the 8-bit optimizers with it as the map of the states it can hold.
    const QuantFormat format = resolve_code_map(spec);
    const CodeMap& map = code_map(format);
    if (const auto earlier = options.map_spec_of.find(map.name); earlier != options.map_spec_of.end()) {
      throw UsageError("--map " + spec + " and --map " + earlier->second + " are the same map '" + map.name + "'; give it once");
    }
    if (std::find(options.formats.begin(), options.formats.end(), map.name) == options.formats.end()) options.formats.push_back(map.name);
    options.map_spec_of[map.name] = spec;
    if (!selected(fixtures::Suite::quant) && !selected(fixtures::Suite::optim8)) {
      throw UsageError("--map " + spec + ": maps are for suite quant (the map is checked) and optim8 (the 8-bit states "
                       "take it); add --suite quant or optim8");
    }
    const bool for_states = selected(fixtures::Suite::optim8) && map.bits == 8;
    if (!selected(fixtures::Suite::quant) && !for_states) {
      throw UsageError("--map " + spec + ": '" + map.name + "' is a " + std::to_string(map.bits) +
                       "-bit map and the 8-bit optimizers' states take 8-bit maps; add --suite quant to check the map itself");
    }
    if (!for_states) continue;
    if (!map.has_positive_code()) {
      // Every 8-bit state takes positive values: such a map is checked in quant only, or refused.
      if (!suites_named) continue;
      throw UsageError("--map " + spec + ": '" + map.name + "' has no code above 0, and every 8-bit state takes positive " +
                       "values; give the optimizers a map whose largest code is positive, or check this one with --suite quant alone");
    }
    std::optional<QuantFormat>& slot = state_map_slot(options.state_maps, map);
    const bool has_negative = &slot == &options.state_maps.signed_states;
    if (slot && suites_named) {
      throw UsageError("--map " + spec + ": the 8-bit optimizers take one map with negative values (for momenta) and one " +
                       "without (for second moments), and '" + std::string(quant_format_info(*slot).name) +
                       "' is already the one " + (has_negative ? "with" : "without") + "; run the other in a second check");
    }
    ambiguous = ambiguous || slot.has_value();
    slot = format;
  }
  if (ambiguous) options.state_maps = {};  // several candidates and optim8 not named: the maps are checked in quant only
  for (const auto& id : asked.properties) {
    std::vector<std::string> ids;
    for (const auto& property : properties::property_catalogue()) ids.push_back(property.id);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
      throw UsageError("unknown property '" + id + "'; expected one of " + joined(ids));
    }
  }
  const auto formats = format_names(), optimizers = optimizer_names();
  const auto known = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const auto& name : options.formats) {
    if (known(optimizers, name)) throw UsageError("'" + name + "' is an optimizer, not a format; use --optimizer " + name);
    if (!known(formats, name)) throw UsageError("unknown format '" + name + "'; formats: " + joined(formats));
  }
  for (const auto& name : asked.optimizers) {
    if (known(formats, name)) throw UsageError("'" + name + "' is a format, not an optimizer; use --format " + name);
    if (!known(optimizers, name)) throw UsageError("unknown optimizer '" + name + "'; optimizers: " + joined(optimizers));
  }
  for (const auto& name : asked.dtypes) {
    if (name != "f32" && name != "f16" && name != "bf16") {
      throw UsageError((name == "u8" || name == "packed4" ? "dtype '" + name + "' is not an input dtype"
                                                         : "unknown dtype '" + name + "'") +
                       "; use f32, f16 or bf16");
    }
  }
  // A filter no selected suite reads was ignored: `--suite quant --optimizer adam` ran every quant row.
  std::vector<std::string> entries = asked.formats;
  entries.insert(entries.end(), asked.optimizers.begin(), asked.optimizers.end());
  if (const std::string outside = outside_the_suites(options, entries, asked.properties); !outside.empty()) {
    throw UsageError(outside + " (a filter no selected suite reads would be ignored)");
  }
  options.devices = expand_devices(asked.devices, command.implementations, asked_all);
  return options;
}

namespace {

nlohmann::json check_document(const std::vector<CheckRow>& rows, const CheckOptions& options, std::size_t planned,
                              std::size_t skipped) {
  nlohmann::json results = nlohmann::json::array();
  std::int64_t violations = 0, failed = 0, incomplete = 0, not_applicable = 0;
  for (const auto& row : rows) {
    not_applicable += row.not_applicable.empty() ? 0 : 1;
    results.push_back(check_row_json(row, options.seed));
    violations += row.violations;
    failed += row.passed ? 0 : 1;
    incomplete += row.incomplete ? 1 : 0;
  }
  nlohmann::json document = {{"schema", "bitparity.check/2"},
                             {"bitparity", version_string()},
                             {"seed", options.seed},
                             {"complete", !interrupted() && rows.size() == planned && incomplete == 0},
                             {"summary",
                              {{"rows_planned", planned},
                               {"rows_run", rows.size()},
                               {"failed_rows", failed},
                               {"violations", violations},
                               {"incomplete_rows", incomplete},
                               {"not_applicable_rows", not_applicable},
                               {"skipped_gpu_rows", skipped}}},
                             {"results", results}};
  if (interrupted()) document["interrupted"] = interrupt_name();
  return document;
}

}  // namespace

void add_check_command(CLI::App& app, CheckCommand& command) {
  auto* check = app.add_subcommand("check", "run the properties over the registry and print one row per property x entry x dtype x device");
  check->add_option("--suite", command.suite_names,
                    "quant, optim32, optim8 or conversions (repeatable; default all); or, in a check of their own and under "
                    "`mpirun -np W` for W > 1, the suites over ranks: storage (P10), resume (P11), sharded (P6)");
  check->add_option("--property", command.requested.properties, "only these property ids, e.g. P1 or P5q (repeatable)");
  check->add_option("--device", command.requested.devices, "cpu, cuda:N or all (repeatable; default cpu)");
  // Its own list: bound to --device's, one option's values replaced the other's (--device nonsense
  // with --implementation cpu ran, unchecked).
  check->add_option("--implementation", command.implementations,
                    "an implementation to check besides devices: plugin:/path/lib.so (bitparity/plugin.h; "
                    "families it does not offer are not applicable) (repeatable)");
  check->add_option("--format", command.requested.formats,
                    "only these quantization formats (suite quant; repeatable; `bitparity list` names them)");
  check->add_option("--map", command.maps,
                    "only these code maps (repeatable): a map's name, or a file *.json (fp32 bit patterns) or "
                    "*.safetensors[:TENSOR] (an F32 tensor such as a state's qmap1), registered and run: suite quant "
                    "checks the map, suite optim8 runs the 8-bit optimizers with it as the map of their states (one "
                    "map with negative values for momenta, one without for second moments; without --suite only "
                    "where the maps say that unambiguously)");
  check->add_option("--optimizer", command.requested.optimizers,
                    "only these optimizers (suites optim32, optim8; repeatable; `bitparity list` names them)");
  check->add_option("--dtype", command.requested.dtypes, "only these input dtypes: f32, f16, bf16 (repeatable)");
  check->add_option("--block-size", command.requested.block_sizes, "only these block sizes (repeatable)")->transform(integer_in(1, 1 << 20));
  check->add_option("--seconds", command.requested.seconds, "total time budget shared by the rows; each row still runs one batch of cases per block size (default: fixed case counts)")
      ->check(budget_seconds(1e7));
  check->add_option("--cases", command.requested.cases_per_block_size,
                    "random cases per block size when no --seconds is given (default 3; suites over ranks: per row, default 1)")
      ->transform(integer_in(1, 100000000))
      ->each([&command](const std::string&) { command.cases_given = true; });
  check->add_option("--seed", command.requested.seed, "run seed; each row's seed derives from it and the row (default 1)")
      ->transform(seed_value());
  check->add_option("--json", command.json_path, "write the results as JSON to this file (checked before the run)")
      ->each([&command](const std::string&) { command.json_given = true; });
  check->add_flag("--verbose", command.requested.verbose, "print each row as it finishes");
  check->add_flag("--require-gpu", command.require_gpu, "fail (exit 4) when no CUDA device is usable; also BITPARITY_REQUIRE_GPU=1");
}

int run_check_command(const CheckCommand& command) {
  if (command.cases_given && command.requested.seconds > 0) {
    throw UsageError("--cases and --seconds both given: --seconds shares a time budget among the rows and --cases fixes the cases "
                     "per block size; give one of them");
  }
  if (std::any_of(command.suite_names.begin(), command.suite_names.end(), is_suite_over_ranks)) {
    const ShardedCommand sharded = sharded_command_of_check(command);
    if (gpu_required(command.require_gpu)) require_usable_gpu();
    return run_sharded_command(sharded);
  }
  // Before the devices are resolved: a required GPU that is missing is exit 4, whichever device was named.
  const bool require = gpu_required(command.require_gpu);
  if (require) require_usable_gpu();
  bool asked_all = false;
  const CheckOptions options = resolve_check_selection(command, asked_all);
  if (command.json_given) {
    check_result_apart_from_map_and_plugin_files("--json", command.json_path, command.maps, command.implementations);
    check_result_path("--json", command.json_path);
  }
  CheckOptions every_size = options;
  every_size.block_sizes.clear();
  check_block_sizes(options, plan_check(every_size));
  const std::vector<PlannedRow> plan = plan_check(options);
  if (plan.empty()) throw UsageError("the selection runs no rows: " + why_empty(options));
  const bool all_sweeps = std::all_of(plan.begin(), plan.end(), [](const PlannedRow& row) { return row.property->exhaustive; });
  if (command.cases_given && all_sweeps) {
    throw UsageError("--cases " + std::to_string(options.cases_per_block_size) +
                     ": the selected rows are exhaustive sweeps, which draw no random cases; drop --cases, or give "
                     "--seconds to bound the sweeps");
  }
  refuse_when_nothing_applies(not_applicable_reasons(plan), "selected rows");
  std::size_t skipped = 0;
  const bool has_gpu = std::any_of(options.devices.begin(), options.devices.end(), [](const std::string& d) { return d != "cpu"; });
  if (asked_all && !has_gpu) {
    CheckOptions on_gpu = options;
    on_gpu.devices = {"cuda:0"};
    skipped = plan_check(on_gpu).size();
    std::fprintf(stderr, "%s\n", no_gpu_notice().c_str());
  }
  std::printf("bitparity check: %zu rows on %s, seed %llu%s\n", plan.size(), [&] {
    std::string devices;
    for (const auto& d : options.devices) devices += (devices.empty() ? "" : ", ") + d;
    return devices;
  }().c_str(), static_cast<unsigned long long>(options.seed), options.seconds > 0 ? (", budget " + format_duration(options.seconds)).c_str() : "");
  std::fflush(stdout);
  fixtures::print_plugin_notes();

  Progress progress("check: rows", static_cast<std::int64_t>(plan.size()));
  CheckCallbacks callbacks;
  callbacks.cancelled = [] { return interrupted(); };
  callbacks.progress = [&](std::size_t row, double fraction, const PlannedRow& planned) {
    progress.update(static_cast<std::int64_t>(row), fraction,
                    planned.property->id + " " + planned.spec.label() + " on " + planned.device);
  };
  const auto started = std::chrono::steady_clock::now();
  const std::vector<CheckRow> rows = run_check(plan, options, callbacks);
  const double wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  progress.finish();
  print_check_table(rows, options.seed);

  std::int64_t violations = 0, failed = 0, incomplete = 0, not_applicable = 0;
  for (const auto& row : rows) {
    violations += row.violations;
    failed += row.passed ? 0 : 1;
    incomplete += row.incomplete ? 1 : 0;
    not_applicable += row.not_applicable.empty() ? 0 : 1;
  }
  std::printf("\nsummary: %zu of %zu rows run, %lld failed, %lld violations, %lld incomplete, %lld not applicable, %zu skipped (no GPU)\n",
              rows.size(), plan.size(), static_cast<long long>(failed), static_cast<long long>(violations),
              static_cast<long long>(incomplete), static_cast<long long>(not_applicable), skipped);
  if (interrupted()) std::printf("interrupted by %s: the rows above are what completed\n", interrupt_name());
  if (options.seconds > 0 && wall_seconds > options.seconds * 1.05 + std::min(0.5, options.seconds)) {
    std::printf("budget: took %s of --seconds %s: every row runs at least one batch of cases per block size, and "
                "these %zu rows' first batches alone took longer; raise --seconds or narrow the selection\n",
                format_duration(wall_seconds).c_str(), format_duration(options.seconds).c_str(), rows.size());
  }
  const std::vector<Finding> findings = plugin_findings(rows);
  const std::vector<DeclaredConvention> conventions = plugin_conventions(rows);
  print_conventions(conventions);
  print_findings(findings);
  if (command.json_given) {
    nlohmann::json document = check_document(rows, options, plan.size(), skipped);
    if (!conventions.empty()) document["conventions"] = conventions_json(conventions);
    if (!findings.empty()) document["findings"] = findings_json(findings);
    std::printf("results: %s\n", printable_text(write_results_document(command.json_path, document)).c_str());
  } else {
    std::printf("results: printed only (add --json FILE to keep them)\n");
  }
  if (interrupted()) return interrupted_exit_code();
  return failed == 0 ? exit_passed : exit_failed;
}

}  // namespace bitparity::reports
