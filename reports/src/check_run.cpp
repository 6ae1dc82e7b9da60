#include "bitparity/reports/check_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/errors.hpp"
#include "shell_words.hpp"

namespace bitparity::reports {

using properties::PropertyDef;
using properties::PropertyTarget;
using properties::RunOptions;

namespace {

// A row whose share of the budget is spent still runs one batch per block size.
constexpr double kSmallestShare = 1e-6;

std::string row_format(const properties::TargetSpec& spec) {
  return spec.entry().empty() ? std::string("f32<->") + dtype_name(spec.dtype) : spec.entry();
}

}  // namespace

std::uint64_t mix_seed(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<PlannedRow> plan_check(const CheckOptions& options) {
  properties::PlanSelection selection;
  selection.suites = options.suites;
  selection.property_ids = options.properties;
  selection.formats = options.formats;
  selection.optimizers = options.optimizers;
  selection.dtypes = options.dtypes;
  selection.block_sizes = options.block_sizes;
  selection.state_maps = options.state_maps;
  const std::vector<properties::PlannedCase> cases = properties::plan_cases(selection);
  // Each property's rows device by device, as the table reads best.
  std::vector<PlannedRow> plan;
  for (std::size_t first = 0; first < cases.size();) {
    std::size_t last = first;
    while (last < cases.size() && cases[last].property == cases[first].property) ++last;
    for (const auto& device : options.devices) {
      if (cases[first].property->needs_baseline && device == "cpu") continue;  // P5 compares a device with cpu
      for (std::size_t k = first; k < last; ++k) plan.push_back({cases[k].property, cases[k].spec, device, cases[k].block_sizes});
    }
    first = last;
  }
  return plan;
}

std::uint64_t row_seed(std::uint64_t seed, const PlannedRow& row, std::int64_t blocksize) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a over the row's identity
  const std::string identity = row.property->id + "|" + row.spec.label() + "|" + std::to_string(blocksize);
  for (unsigned char c : identity) hash = (hash ^ c) * 0x100000001b3ull;
  return mix_seed(seed ^ mix_seed(hash)) >> 1;  // below 2^63: printable and accepted by --seed
}

std::vector<std::string> not_applicable_reasons(const std::vector<PlannedRow>& plan) {
  const auto baseline = fixtures::make_implementation("cpu");
  std::map<std::string, std::unique_ptr<fixtures::Implementation>> made;  // one instance per device
  std::vector<std::string> reasons;
  for (const PlannedRow& row : plan) {
    auto& iut = made[row.device];
    if (!iut) iut = fixtures::make_implementation(row.device);
    const PropertyTarget target =
        properties::make_target(*row.property, row.spec, iut.get(), baseline.get(), row.block_sizes.empty() ? 0 : row.block_sizes.front());
    reasons.push_back(properties::not_applicable_reason(*row.property, target));
  }
  return reasons;
}

void refuse_when_nothing_applies(const std::vector<std::string>& reasons, const std::string& what) {
  if (reasons.empty() || std::any_of(reasons.begin(), reasons.end(), [](const std::string& r) { return r.empty(); })) return;
  throw UsageError("nothing to check: none of the " + std::to_string(reasons.size()) + " " + what + " applies (" + reasons.front() +
                   "), so the run would pass having checked nothing; select what the implementation offers (bitparity list, "
                   "--suite, --property)");
}

std::vector<CheckRow> run_check(const std::vector<PlannedRow>& plan, const CheckOptions& options,
                                const CheckCallbacks& callbacks) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // What is left of the budget, shared by what is left to run: a row that overran its share (every
  // block size runs at least one batch) is paid for by the rows after it, not added to the total.
  const auto share_of_what_is_left = [&](double spent, double total, std::size_t parts_left) {
    return std::max(kSmallestShare, (total - spent) / static_cast<double>(parts_left));
  };
  const auto baseline = fixtures::make_implementation("cpu");
  // A plugin's host is started once for the run (a fresh one follows a call that killed it); every
  // other implementation is made fresh for each row.
  std::map<std::string, std::shared_ptr<fixtures::Implementation>> plugins;
  std::vector<CheckRow> rows;
  for (std::size_t index = 0; index < plan.size(); ++index) {
    if (callbacks.cancelled && callbacks.cancelled()) break;
    const PlannedRow& planned = plan[index];
    std::shared_ptr<fixtures::Implementation> iut;
    if (planned.device.starts_with("plugin:")) {
      auto& kept = plugins[planned.device];
      if (!kept) kept = fixtures::make_implementation(planned.device);
      iut = kept;
    } else {
      iut = fixtures::make_implementation(planned.device);
    }
    CheckRow row;
    row.suite = planned.property->suite;
    row.property_id = planned.property->id;
    row.property = planned.property->id + " " + planned.property->name;
    row.format = row_format(planned.spec);
    row.dtype = dtype_name(planned.spec.dtype);
    row.device = planned.device;
    // The --map arguments a replay of this row needs: those of the maps it uses.
    const auto needs_map = [&](const std::string& name) {
      const auto spec = options.map_spec_of.find(name);
      if (spec != options.map_spec_of.end() &&
          std::find(row.map_specs.begin(), row.map_specs.end(), spec->second) == row.map_specs.end()) {
        row.map_specs.push_back(spec->second);
      }
    };
    if (planned.spec.quantized_state && planned.spec.state_maps.any()) {
      const OptimizerKind kind = planned.spec.optimizer->kind;
      for (int k = 0; k < planned.spec.optimizer->states; ++k) {
        const std::optional<QuantFormat> chosen = planned.spec.state_maps.of_state(kind, k);
        row.state_maps.emplace_back(quant_format_info(state8_map(kind, k, chosen)).name);
        if (chosen) needs_map(row.state_maps.back());
      }
    }
    if (planned.spec.format != nullptr) needs_map(planned.spec.format->name);
    const std::size_t count = planned.block_sizes.size();
    const double row_budget =
        options.seconds > 0 ? share_of_what_is_left(elapsed(), options.seconds, plan.size() - index) : 0.0;
    const double row_start = elapsed();
    for (std::size_t b = 0; b < count; ++b) {
      const std::int64_t blocksize = planned.block_sizes[b];
      PropertyTarget target = properties::make_target(*planned.property, planned.spec, iut.get(), baseline.get(), blocksize);
      RunOptions run;
      run.seed = row_seed(options.seed, planned, blocksize);
      run.max_cases = row_budget > 0 ? 1 << 30 : options.cases_per_block_size;
      run.seconds = row_budget > 0 ? share_of_what_is_left(elapsed() - row_start, row_budget, count - b) : 0.0;
      run.cancelled = callbacks.cancelled;
      if (callbacks.progress) {
        callbacks.progress(index, static_cast<double>(b) / count, planned);
        run.on_batch = [&, b](std::int64_t cases) {
          const double within = row_budget > 0 ? 0.0 : static_cast<double>(cases) / run.max_cases;
          callbacks.progress(index, (static_cast<double>(b) + within) / count, planned);
        };
        // An exhaustive sweep is one case of about a minute: its chunks move the progress.
        run.on_fraction = [&, b](double within) { callbacks.progress(index, (static_cast<double>(b) + within) / count, planned); };
      }
      const auto result = properties::run_property(*planned.property, target, run);
      if (result.not_applicable) {
        row.not_applicable = result.not_applicable_reason;
        break;
      }
      if (blocksize > 0) row.block_sizes.push_back(blocksize);
      row.cases += result.stats.cases;
      row.informative_cases += result.stats.informative;
      row.elements += result.stats.elements;
      row.ill_conditioned += result.stats.ill_conditioned;
      row.max_error_over_bound = std::max(row.max_error_over_bound, result.stats.max_error_over_bound);
      row.seconds += result.seconds;
      row.incomplete = row.incomplete || result.stats.incomplete;
      if (!result.passed && row.passed) {
        row.passed = false;
        // The first failing case's, as the table's header says; a refusal or a failed call is one.
        row.violations = std::max<std::int64_t>(1, result.stats.violations);
        row.counterexample = result.counterexample;
        row.failing_block_size = blocksize;
        row.replay_cases = result.replay_cases;
      }
      if (callbacks.cancelled && callbacks.cancelled()) {
        row.incomplete = row.incomplete || b + 1 < count;
        break;
      }
    }
    if (options.verbose) {
      std::cerr << row.property << ' ' << row.format << '/' << row.dtype << " on " << row.device << ": "
                << (row.passed ? "ok" : "FAILED") << " (" << row.seconds << " s)\n";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string replay_command(const CheckRow& row, std::uint64_t seed) {
  std::string command =
      shell_word(program_name()) + " check --suite " + std::string(fixtures::suite_name(row.suite)) + " --property " + row.property_id;
  if (row.suite == fixtures::Suite::quant) command += " --format " + row.format;
  if (row.suite == fixtures::Suite::optim32 || row.suite == fixtures::Suite::optim8) command += " --optimizer " + row.format;
  // A plugin is named as check --help names it: --implementation plugin:PATH.
  command += " --dtype " + row.dtype + (row.device.starts_with("plugin:") ? " --implementation " : " --device ") + shell_word(row.device);
  if (row.failing_block_size > 0) command += " --block-size " + std::to_string(row.failing_block_size);
  command += " --seed " + std::to_string(seed);
  if (row.replay_cases > 0) command += " --cases " + std::to_string(row.replay_cases);
  for (const auto& spec : row.map_specs) command += " --map " + shell_word(spec);
  return command;
}

std::string format_ratio(double ratio) {
  if (std::isnan(ratio)) return "nan";
  if (std::isinf(ratio)) return "inf";
  char text[32];
  if (ratio > 0 && ratio < 1e-3) {
    std::snprintf(text, sizeof text, "%.1e", ratio);
  } else {
    std::snprintf(text, sizeof text, "%.6f", std::floor(ratio * 1e6) / 1e6);  // truncated: 0.99999987 -> 0.999999
  }
  return text;
}

nlohmann::json check_row_json(const CheckRow& row, std::uint64_t seed) {
  nlohmann::json entry = {{"suite", fixtures::suite_name(row.suite)},
                          {"property", row.property},
                          {"format", row.format},
                          {"dtype", row.dtype},
                          {"device", row.device},
                          {"block_sizes", row.block_sizes},
                          {"cases", row.cases},
                          {"informative_cases", row.informative_cases},
                          {"elements", row.elements},
                          {"violations", row.violations},
                          {"seconds", row.seconds}};
  // JSON has no infinity: a non-finite ratio (a kernel gave inf or NaN) is written as a string.
  if (std::isfinite(row.max_error_over_bound)) {
    entry["max_error_over_bound"] = row.max_error_over_bound;
  } else {
    entry["max_error_over_bound"] = format_ratio(row.max_error_over_bound);
  }
  if (row.incomplete) entry["incomplete"] = true;
  if (!row.state_maps.empty()) entry["state_maps"] = row.state_maps;
  if (!row.not_applicable.empty()) entry["not_applicable"] = row.not_applicable;
  if (row.ill_conditioned > 0) entry["ill_conditioned"] = row.ill_conditioned;
  if (!row.passed) {
    entry["counterexample"] = row.counterexample;
    entry["replay"] = replay_command(row, seed);
  }
  return entry;
}

void print_check_table(const std::vector<CheckRow>& rows, std::uint64_t seed) {
  std::printf("%-26s %-22s %-5s %-7s %7s %11s %12s %10s %12s\n", "property", "format", "dtype", "device", "cases",
              "informative", "elements", "violations", "err/bound");
  for (const auto& row : rows) {
    std::printf("%-26s %-22s %-5s %-7s %7lld %11lld %12lld %10lld %12s", row.property.c_str(), row.format.c_str(),
                row.dtype.c_str(), row.device.c_str(), static_cast<long long>(row.cases),
                static_cast<long long>(row.informative_cases), static_cast<long long>(row.elements),
                static_cast<long long>(row.violations), format_ratio(row.max_error_over_bound).c_str());
    if (row.incomplete) std::printf("  (incomplete)");
    if (!row.not_applicable.empty()) std::printf("  (not applicable: %s)", row.not_applicable.c_str());
    if (row.ill_conditioned > 0) std::printf("  (%lld ill-conditioned)", static_cast<long long>(row.ill_conditioned));
    std::printf("\n");
  }
  for (const auto& row : rows) {
    if (row.passed) continue;
    std::printf("\nFAILED %s %s/%s on %s%s\n", row.property.c_str(), row.format.c_str(), row.dtype.c_str(),
                row.device.c_str(), row.failing_block_size > 0 ? (", block size " + std::to_string(row.failing_block_size)).c_str() : "");
    std::printf("  %s\n  replay: %s\n", row.counterexample.c_str(), replay_command(row, seed).c_str());
  }
}

}  // namespace bitparity::reports
