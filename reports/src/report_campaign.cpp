// The release campaign: drift runs, device parity and the check summary, as one JSON document.
#include <unistd.h>

#include <algorithm>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/properties/drift.hpp"
#include "bitparity/properties/registry.hpp"
#include "bitparity/reports/check_run.hpp"
#include "bitparity/reports/drift_render.hpp"
#include "bitparity/reports/report.hpp"
#include "bitparity/reports/version.hpp"

#ifndef BITPARITY_CXX_COMPILER
#define BITPARITY_CXX_COMPILER "unknown"
#endif
#ifndef BITPARITY_CUDA_COMPILER
#define BITPARITY_CUDA_COMPILER ""
#endif

namespace bitparity::reports {

namespace {

struct DriftRun {
  OptimizerKind kind;
  DType dtype;
  bool eight_bit;
};

std::vector<DriftRun> drift_runs() {
  std::vector<DriftRun> runs;
  for (const auto& info : optimizers()) {
    for (DType dtype : properties::float_dtypes()) {
      runs.push_back({info.kind, dtype, false});
      if (has_8bit_variant(info.kind)) runs.push_back({info.kind, dtype, true});
    }
  }
  return runs;
}

std::string run_label(const DriftRun& run) {
  return std::string(optimizer_info(run.kind).name) + "/" + dtype_name(run.dtype) + (run.eight_bit ? " 8-bit" : "");
}

// The last step's figures and the largest of every figure over the steps.
nlohmann::json drift_summary(const properties::DriftReport& report) {
  nlohmann::json final_step = nlohmann::json::object(), largest = nlohmann::json::object();
  if (report.steps.empty()) return {{"final", final_step}, {"max", largest}};
  const auto& last = report.steps.back();
  final_step = {{"max_abs_error", last.max_abs_error}, {"max_rel_error", last.max_rel_error},
                {"median_abs_error", last.median_abs_error}, {"median_rel_error", last.median_rel_error},
                {"max_ulps", last.max_ulps}, {"max_state_error", last.max_state_error}, {"nonfinite", last.nonfinite}};
  double abs = 0, rel = 0, med_abs = 0, med_rel = 0, ulps = 0, state = 0;
  std::int64_t nonfinite = 0;
  for (const auto& s : report.steps) {
    abs = std::max(abs, s.max_abs_error);
    rel = std::max(rel, s.max_rel_error);
    med_abs = std::max(med_abs, s.median_abs_error);
    med_rel = std::max(med_rel, s.median_rel_error);
    ulps = std::max(ulps, s.max_ulps);
    state = std::max(state, s.max_state_error);
    nonfinite = std::max(nonfinite, s.nonfinite);
  }
  largest = {{"max_abs_error", abs}, {"max_rel_error", rel}, {"median_abs_error", med_abs}, {"median_rel_error", med_rel},
             {"max_ulps", ulps}, {"max_state_error", state}, {"nonfinite", nonfinite}};
  return {{"final", final_step}, {"max", largest}};
}


nlohmann::json build_info(const ReportOptions& options) {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  nlohmann::json devices = nlohmann::json::array({"cpu " + cpu_device_description()});
  for (int i = 0; i < cuda_device_count(); ++i) devices.push_back("cuda:" + std::to_string(i) + " " + cuda_device_description(i));
  const std::string version = version_string();
  const auto git = version.find("(git ");
  return {{"bitparity", version},
          {"commit", git == std::string::npos ? "" : version.substr(git + 5, version.find(')', git) - git - 5)},
          {"compiler", BITPARITY_CXX_COMPILER},
          {"cuda", cuda_built() ? std::string("built with nvcc ") + BITPARITY_CUDA_COMPILER : "not built"},
          {"devices", devices},
          {"host", host},
          {"date", utc_timestamp()},
          {"seed", options.seed}};
}

}  // namespace

nlohmann::json run_report_campaign(const ReportOptions& options, const ReportCallbacks& callbacks) {
  const auto cancelled = [&] { return callbacks.cancelled && callbacks.cancelled(); };
  const std::vector<DriftRun> runs = drift_runs();
  // The check summary's rows count one unit each, as the drift runs do: counted as one unit, the
  // check (most of the campaign) sat at 99 %, ETA 2 s, for its last minutes.
  CheckOptions check_options;
  // Fixed case counts, not a time budget: the same build checks the same cases, so the gate can
  // compare ill-conditioned counts row by row.
  for (fixtures::Suite suite : fixtures::kSuites) {
    if (suite != fixtures::Suite::conversions || options.sweeps) check_options.suites.push_back(suite);
  }
  check_options.devices = {options.implementation};
  check_options.cases_per_block_size = options.check_cases;
  check_options.seed = options.seed;
  const std::vector<PlannedRow> plan = plan_check(check_options);
  const std::int64_t total = static_cast<std::int64_t>(runs.size() * (1 + options.devices.size()) + plan.size());
  std::int64_t done = 0;
  std::string current_run;
  const auto progress = [&](const std::string& current, double fraction = 0.0) {
    current_run = current;
    if (callbacks.progress) callbacks.progress(done, fraction, total, current);
  };
  nlohmann::json report = {{"schema", kReportSchema},
                           {"build", build_info(options)},
                           {"settings",
                            {{"steps", options.steps},
                             {"elements", options.elements},
                             {"blocksize", options.blocksize},
                             {"seed", options.seed},
                             {"check_cases", options.check_cases},
                             {"sweeps", options.sweeps},
                             {"implementation", options.implementation},
                             {"devices", options.devices}}}};
  bool complete = true;

  // Drift of the implementation against the exact trajectory, every optimizer x dtype x state width.
  const auto iut = fixtures::make_implementation(options.implementation);
  nlohmann::json drift = nlohmann::json::array();
  std::vector<std::vector<std::uint64_t>> hashes;  // per run, per step: the parity reference
  properties::DriftOptions drift_options;
  drift_options.elements = options.elements;
  drift_options.steps = options.steps;
  drift_options.seed = options.seed;
  drift_options.blocksize = options.blocksize;
  drift_options.on_step = [&](std::int64_t step) {
    if (callbacks.progress && options.steps > 0) {
      callbacks.progress(done, static_cast<double>(step) / static_cast<double>(options.steps), total, current_run);
    }
    return !cancelled();
  };
  for (const auto& run : runs) {
    if (cancelled()) break;
    progress("drift " + run_label(run));
    drift_options.eight_bit = run.eight_bit;
    const properties::DriftReport result = properties::run_drift(*iut, run.kind, run.dtype, drift_options);
    if (static_cast<std::int64_t>(result.steps.size()) < options.steps) complete = false;
    nlohmann::json entry = drift_json(result);
    entry["summary"] = drift_summary(result);
    drift.push_back(entry);
    std::vector<std::uint64_t> run_hashes;
    for (const auto& s : result.steps) run_hashes.push_back(s.parameter_hash);
    hashes.push_back(run_hashes);
    ++done;
  }
  report["drift"] = drift;

  // Device parity: the same trajectories on every CUDA device, bitwise against the implementation's.
  nlohmann::json parity = {{"measured", !options.devices.empty()}, {"against", options.implementation}};
  if (options.devices.empty()) parity["reason"] = cuda_built() ? "no CUDA device is usable" : "this build has no CUDA launchers";
  nlohmann::json parity_runs = nlohmann::json::array();
  for (const auto& device : options.devices) {
    const auto on_device = fixtures::make_implementation(device);
    for (std::size_t r = 0; r < hashes.size() && !cancelled(); ++r) {
      progress("parity " + run_label(runs[r]) + " on " + device);
      drift_options.eight_bit = runs[r].eight_bit;
      const properties::DriftReport result = properties::run_drift(*on_device, runs[r].kind, runs[r].dtype, drift_options);
      std::int64_t first_difference = 0;
      for (std::size_t s = 0; s < result.steps.size() && s < hashes[r].size(); ++s) {
        if (result.steps[s].parameter_hash != hashes[r][s]) {
          first_difference = static_cast<std::int64_t>(s) + 1;
          break;
        }
      }
      parity_runs.push_back({{"device", device}, {"optimizer", std::string(optimizer_info(runs[r].kind).name)},
                             {"dtype", dtype_name(runs[r].dtype)}, {"eight_bit", runs[r].eight_bit},
                             {"steps", result.steps.size()}, {"bitwise_equal", first_difference == 0},
                             {"first_different_step", first_difference}});
      ++done;
    }
  }
  parity["runs"] = parity_runs;
  report["device_parity"] = parity;

  // The check summary: every property, entry and dtype on the implementation, in the budget.
  nlohmann::json check = {{"cases_per_block_size", options.check_cases}, {"sweeps", options.sweeps},
                          {"implementation", options.implementation}};
  nlohmann::json rows_json = nlohmann::json::array();
  std::int64_t violations = 0, failed = 0, ill_conditioned = 0, incomplete = 0, rows_run = 0;
  if (!cancelled()) {
    progress("check summary");
    CheckCallbacks check_callbacks;
    check_callbacks.cancelled = callbacks.cancelled;
    check_callbacks.progress = [&](std::size_t row, double fraction, const PlannedRow& planned) {
      if (callbacks.progress) {
        callbacks.progress(done + static_cast<std::int64_t>(row), fraction, total,
                           "check " + planned.property->id + " " + planned.spec.label() + " (" + std::to_string(row + 1) + "/" +
                               std::to_string(plan.size()) + ")");
      }
    };
    const std::vector<CheckRow> rows = run_check(plan, check_options, check_callbacks);
    for (const auto& row : rows) {
      nlohmann::json entry = check_row_json(row, options.seed);
      entry["property_id"] = row.property_id;
      rows_json.push_back(entry);
      violations += row.violations;
      failed += row.passed ? 0 : 1;
      ill_conditioned += row.ill_conditioned;
      incomplete += row.incomplete ? 1 : 0;
    }
    rows_run = static_cast<std::int64_t>(rows.size());
    if (rows.size() < plan.size()) complete = false;
    check["rows_planned"] = plan.size();
    ++done;
  } else {
    complete = false;
  }
  check["rows"] = rows_json;
  check["summary"] = {{"rows_run", rows_run}, {"failed_rows", failed}, {"violations", violations},
                      {"ill_conditioned", ill_conditioned}, {"incomplete_rows", incomplete}};
  report["check"] = check;
  report["complete"] = complete && !cancelled();
  return report;
}

}  // namespace bitparity::reports
