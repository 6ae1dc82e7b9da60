#include "bitparity/reports/check_run.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::reports {

using properties::PropertyDef;
using properties::PropertyTarget;
using properties::RunOptions;

namespace {

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return list.empty() || std::find(list.begin(), list.end(), item) != list.end();
}

bool selected(const properties::TargetSpec& spec, const CheckOptions& options) {
  if (!contains(options.dtypes, dtype_name(spec.dtype))) return false;
  if (spec.optimizer) return contains(options.formats, spec.optimizer->name);
  return spec.format == nullptr || contains(options.formats, spec.format->name);
}

std::vector<std::int64_t> selected_block_sizes(const properties::TargetSpec& spec, const CheckOptions& options) {
  if (!spec.format && !spec.quantized_state) return {0};
  std::vector<std::int64_t> sizes;
  for (auto size : spec.block_sizes()) {
    if (options.block_sizes.empty() ||
        std::find(options.block_sizes.begin(), options.block_sizes.end(), size) != options.block_sizes.end()) {
      sizes.push_back(size);
    }
  }
  return sizes;
}

}  // namespace

std::vector<CheckRow> run_check(const CheckOptions& options) {
  struct Planned {
    const PropertyDef* property;
    properties::TargetSpec spec;
    std::string device;
  };
  std::vector<Planned> plan;
  for (const auto& suite : options.suites) {
    for (const PropertyDef* property : properties::properties_of_suite(suite)) {
      for (const auto& device : options.devices) {
        if (property->needs_baseline && device == "cpu") continue;  // P5 compares a device with cpu
        for (const auto& spec : properties::suite_targets(suite)) {
          if (selected(spec, options)) plan.push_back({property, spec, device});
        }
      }
    }
  }
  std::size_t random_rows = 0;
  for (const auto& planned : plan) random_rows += planned.property->exhaustive ? 0 : 1;
  const double row_budget = options.seconds > 0 && random_rows > 0 ? options.seconds / random_rows : 0.0;

  const auto baseline = fixtures::make_implementation("cpu");
  std::vector<CheckRow> rows;
  for (const auto& [property, spec, device] : plan) {
    const auto iut = fixtures::make_implementation(device);
    CheckRow row;
    row.suite = property->suite;
    row.property = property->id + " " + property->name;
    row.format = spec.format      ? spec.format->name
                 : spec.optimizer ? spec.optimizer->name
                                  : std::string("f32<->") + dtype_name(spec.dtype);
    row.dtype = dtype_name(spec.dtype);
    row.device = device;
    const std::vector<std::int64_t> block_sizes = selected_block_sizes(spec, options);
    if (block_sizes.empty()) continue;  // this format has none of the requested block sizes
    for (std::int64_t blocksize : block_sizes) {
      const PropertyTarget target = properties::make_target(*property, spec, iut.get(), baseline.get(), blocksize);
      RunOptions run;
      run.seed = options.seed + rows.size() * 7919 + static_cast<std::uint64_t>(blocksize);
      run.max_cases = row_budget > 0 ? 1 << 30 : options.cases_per_block_size;
      run.seconds = row_budget > 0 ? row_budget / block_sizes.size() : 0.0;
      const auto result = properties::run_property(*property, target, run);
      if (blocksize > 0) row.block_sizes.push_back(blocksize);
      row.cases += result.stats.cases;
      row.elements += result.stats.elements;
      row.ill_conditioned += result.stats.ill_conditioned;
      row.violations += result.passed ? 0 : std::max<std::int64_t>(1, result.stats.violations);
      row.max_error_over_bound = std::max(row.max_error_over_bound, result.stats.max_error_over_bound);
      row.seconds += result.seconds;
      row.incomplete = row.incomplete || result.stats.incomplete;
      if (!result.passed && row.passed) {
        row.passed = false;
        row.counterexample = "blocksize " + std::to_string(blocksize) + ": " + result.counterexample;
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

nlohmann::json check_json(const std::vector<CheckRow>& rows) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& row : rows) {
    nlohmann::json entry = {{"suite", row.suite},
                            {"property", row.property},
                            {"format", row.format},
                            {"dtype", row.dtype},
                            {"device", row.device},
                            {"block_sizes", row.block_sizes},
                            {"cases", row.cases},
                            {"elements", row.elements},
                            {"violations", row.violations},
                            {"max_error_over_bound", row.max_error_over_bound},
                            {"seconds", row.seconds}};
    if (row.incomplete) entry["incomplete"] = true;
    if (row.ill_conditioned > 0) entry["ill_conditioned"] = row.ill_conditioned;
    if (!row.passed) entry["counterexample"] = row.counterexample;
    results.push_back(entry);
  }
  return {{"results", results}};
}

void print_check_table(const std::vector<CheckRow>& rows) {
  std::printf("%-26s %-22s %-5s %-7s %7s %12s %10s %10s\n", "property", "format", "dtype", "device", "cases",
              "elements", "violations", "err/bound");
  std::int64_t violations = 0;
  for (const auto& row : rows) {
    std::printf("%-26s %-22s %-5s %-7s %7lld %12lld %10lld %10.3g%s", row.property.c_str(), row.format.c_str(),
                row.dtype.c_str(), row.device.c_str(), static_cast<long long>(row.cases),
                static_cast<long long>(row.elements), static_cast<long long>(row.violations), row.max_error_over_bound,
                row.incomplete ? "  (stopped at its deadline)" : "");
    if (row.ill_conditioned > 0) std::printf("  (%lld ill-conditioned)", static_cast<long long>(row.ill_conditioned));
    std::printf("\n");
    violations += row.violations;
  }
  for (const auto& row : rows) {
    if (!row.passed) std::printf("\nFAILED %s %s/%s on %s\n%s\n", row.property.c_str(), row.format.c_str(),
                                 row.dtype.c_str(), row.device.c_str(), row.counterexample.c_str());
  }
  std::printf("\n%zu rows, %lld violations\n", rows.size(), static_cast<long long>(violations));
}

}  // namespace bitparity::reports
