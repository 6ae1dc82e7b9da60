// The release gate: a report against the last release's.
#include <algorithm>
#include <iterator>
#include <vector>
#include <cmath>
#include <map>
#include <set>

#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/report.hpp"

namespace bitparity::reports {

namespace {

// The factor and why: see kGateReason.
constexpr double kGateFactor = 2.0;
constexpr const char* kGateReason =
    "The campaign is deterministic (fixed seed, inputs and gradients): the same build gives every figure bit for bit, "
    "ratio 1. A legitimate change of operation order, compiler or device moves a maximum error by a few roundings, "
    "well under a factor 2 at these sizes; a defect in an update (the catalogued optimizer mutants) moves it by a "
    "factor 10 or more. Figures below a floor (1 ulp; the dtype's unit roundoff for errors; 2^-8 for 8-bit state "
    "error) are compared as the floor, so noise at zero cannot trip the gate.";

const char* kFigures[] = {"max_abs_error", "max_rel_error", "median_abs_error", "median_rel_error", "max_ulps", "max_state_error"};

double unit_roundoff(const std::string& dtype) { return dtype == "f16" ? 0x1p-11 : dtype == "bf16" ? 0x1p-8 : 0x1p-24; }

double floor_of(const std::string& figure, const std::string& dtype) {
  if (figure == "max_ulps") return 1.0;
  if (figure == "max_state_error") return 0x1p-8;
  return unit_roundoff(dtype);
}

// A text field, or "?" where it is missing or not text (keys of an edited baseline still print).
std::string text(const nlohmann::json& object, const char* key) {
  return object.contains(key) && object.at(key).is_string() ? object.at(key).get<std::string>() : "?";
}

std::string run_key(const nlohmann::json& run) {
  const bool eight_bit = run.contains("eight_bit") && run.at("eight_bit").is_boolean() && run.at("eight_bit").get<bool>();
  return text(run, "optimizer") + "/" + text(run, "dtype") + (eight_bit ? " 8-bit" : "");
}

std::string row_key(const nlohmann::json& row) {
  return text(row, "property") + " " + text(row, "format") + "/" + text(row, "dtype");
}

double number(const nlohmann::json& object, const char* key) {
  return object.contains(key) && object.at(key).is_number() ? object.at(key).get<double>() : 0.0;
}

}  // namespace

namespace {

// A figure the gate reads: absent, or a finite number of at least 0 (a null, a text or a negative
// figure would be compared as something it is not); a count is a whole number too.
void check_figure(const nlohmann::json& object, const char* key, const std::string& where, const std::string& path,
                  bool count = false) {
  if (!object.contains(key)) return;
  const nlohmann::json& value = object.at(key);
  const bool figure = value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() >= 0;
  if (!figure || (count && !value.is_number_integer() && !value.is_number_unsigned())) {
    throw UsageError("--baseline " + path + ": " + where + " '" + key + "' is " + value.dump() + ", not " +
                     (count ? "a count" : "a figure of at least 0") + "; give the unedited report.json of an earlier `bitparity report`");
  }
}

// The text fields that name a run or a row: a missing or non-text one would leave it unmatched.
void check_names(const nlohmann::json& object, std::initializer_list<const char*> keys, const std::string& what, const std::string& path) {
  for (const char* key : keys) {
    if (!object.contains(key) || !object.at(key).is_string()) {
      throw UsageError("--baseline " + path + ": " + what + " has no text '" + key +
                       "'; give the unedited report.json of an earlier `bitparity report`");
    }
  }
}

}  // namespace

void check_baseline(const nlohmann::json& baseline, const std::string& path, const nlohmann::json& settings) {
  if (!baseline.is_object() || !baseline.contains("schema") || baseline.at("schema") != kReportSchema) {
    throw UsageError("--baseline " + path + " is not a bitparity report (schema " + kReportSchema +
                     "); give the report.json of an earlier `bitparity report`");
  }
  for (const char* key : {"drift", "check", "settings"}) {
    if (!baseline.contains(key)) throw UsageError("--baseline " + path + " has no '" + key + "'; it is not a complete report");
  }
  if (baseline.contains("complete") && !baseline.at("complete").is_boolean()) {
    throw UsageError("--baseline " + path + ": 'complete' is " + baseline.at("complete").dump() +
                     ", not true or false; give the unedited report.json of an earlier `bitparity report`");
  }
  if (!baseline.value("complete", false)) {
    throw UsageError("--baseline " + path + " is a partial report (it was interrupted); gate against a complete one");
  }
  // Every part the gate reads, checked now: a malformed one found after the campaign lost the run.
  const auto malformed = [&](const std::string& what) {
    throw UsageError("--baseline " + path + ": " + what + "; give the unedited report.json of an earlier `bitparity report`");
  };
  if (!baseline.at("drift").is_array()) malformed("'drift' is not a list of runs");
  // The gate compares each run and row with one baseline figure: a second copy of one would decide
  // which (the last), and an edited copy could loosen the gate.
  std::set<std::string> runs_seen, rows_seen;
  for (const auto& run : baseline.at("drift")) {
    if (!run.is_object() || !run.contains("summary") || !run.at("summary").is_object()) malformed("a drift run has no 'summary'");
    check_names(run, {"optimizer", "dtype"}, "a drift run", path);
    if (run.contains("eight_bit") && !run.at("eight_bit").is_boolean()) malformed("drift run " + run_key(run) + ": 'eight_bit' is not true or false");
    const std::string key = run_key(run);
    if (!runs_seen.insert(key).second) malformed("drift run " + key + " appears twice");
    for (const char* scope : {"final", "max"}) {
      if (!run.at("summary").contains(scope) || !run.at("summary").at(scope).is_object()) {
        malformed("drift run " + key + " has no summary '" + scope + "'");
      }
      for (const char* figure : kFigures) check_figure(run.at("summary").at(scope), figure, "drift run " + key + " " + scope, path);
      check_figure(run.at("summary").at(scope), "nonfinite", "drift run " + key + " " + scope, path, true);
    }
    // The report's page draws the baseline's curves from its steps after the campaign: checked now too.
    if (!run.contains("steps") || !run.at("steps").is_array()) malformed("drift run " + key + " has no list of 'steps'");
    const nlohmann::json& steps = run.at("steps");
    if (steps.empty()) malformed("drift run " + key + " has no steps");
    const nlohmann::json& made_with = baseline.at("settings");
    if (made_with.is_object() && made_with.contains("steps") && made_with.at("steps").is_number_unsigned() &&
        made_with.at("steps").get<std::uint64_t>() != steps.size()) {
      malformed("drift run " + key + " has " + std::to_string(steps.size()) + " steps, and the report was made with " +
                made_with.at("steps").dump());
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const nlohmann::json& step = steps[i];
      if (!step.is_object()) malformed("drift run " + key + ": a step is not an object");
      check_figure(step, "step", "drift run " + key + " step", path, true);
      check_figure(step, "nonfinite", "drift run " + key + " step", path, true);
      for (const char* figure : kFigures) check_figure(step, figure, "drift run " + key + " step", path);
      const nlohmann::json& bins = step.value("ulp_histogram", nlohmann::json());
      if (!bins.is_array() || bins.size() != 6 ||
          !std::all_of(bins.begin(), bins.end(), [](const nlohmann::json& n) { return n.is_number_unsigned(); })) {
        malformed("drift run " + key + ": step " + std::to_string(i + 1) + "'s 'ulp_histogram' is not 6 counts");
      }
      if (step.at("step") != i + 1) malformed("drift run " + key + ": step " + std::to_string(i + 1) + " is numbered " + step.at("step").dump());
    }
    // The summary is the steps' own: the last step's figures and the largest of each. A step cut
    // or edited, or a summary edited, no longer agrees with it.
    const std::vector<const char*> summarized = [] {
      std::vector<const char*> all(std::begin(kFigures), std::end(kFigures));
      all.push_back("nonfinite");
      return all;
    }();
    for (const char* figure : summarized) {
      // A figure a thinned baseline lacks is not compared (the gate says so); it is not an edit.
      if (!run.at("summary").at("final").contains(figure) || !run.at("summary").at("max").contains(figure)) continue;
      double largest = 0;
      for (const auto& step : steps) largest = std::max(largest, step.at(figure).get<double>());
      if (run.at("summary").at("final").at(figure) != steps.back().at(figure) || run.at("summary").at("max").at(figure).get<double>() != largest) {
        malformed("drift run " + key + ": its summary's '" + figure + "' is not its steps' (an edit, or steps cut)");
      }
    }
  }
  if (!baseline.at("check").is_object()) malformed("'check' is not an object");
  if (baseline.at("check").contains("rows")) {
    if (!baseline.at("check").at("rows").is_array()) malformed("'check' 'rows' is not a list");
    for (const auto& row : baseline.at("check").at("rows")) {
      if (!row.is_object()) malformed("a check row is not an object");
      check_names(row, {"property", "format", "dtype"}, "a check row", path);
      if (!rows_seen.insert(row_key(row)).second) malformed("check row " + row_key(row) + " appears twice");
      // Every figure a row carries, read or not: an edited one makes the whole file untrustworthy.
      for (const char* count : {"ill_conditioned", "violations", "cases", "elements", "wrong_elements"}) {
        check_figure(row, count, "check row " + row_key(row), path, true);
      }
      // A kernel that gave inf or NaN is written as the text "inf" or "nan" (JSON has neither).
      const bool nonfinite_ratio = row.contains("max_error_over_bound") && (row.at("max_error_over_bound") == "inf" || row.at("max_error_over_bound") == "nan");
      if (!nonfinite_ratio) check_figure(row, "max_error_over_bound", "check row " + row_key(row), path);
      check_figure(row, "seconds", "check row " + row_key(row), path);
      // Within its bound means a ratio of at most 1: a row that passed with more was edited.
      if (!nonfinite_ratio && row.contains("max_error_over_bound") && row.at("max_error_over_bound").get<double>() > 1 &&
          row.contains("violations") && row.at("violations") == 0) {
        malformed("check row " + row_key(row) + " has no violations and an error of " + row.at("max_error_over_bound").dump() +
                  " times its bound; a passing row is within it (at most 1)");
      }
      if (row.contains("property_id") &&
          (!row.at("property_id").is_string() || !text(row, "property").starts_with(text(row, "property_id") + " "))) {
        malformed("check row " + row_key(row) + ": 'property_id' " + row.at("property_id").dump() + " is not its property");
      }
    }
  }
  // The gate compares the same deterministic runs: figures of other settings would differ anyway.
  if (!baseline.at("settings").is_object()) malformed("'settings' is not an object");
  const nlohmann::json& before = baseline.at("settings");
  // A complete report ran every drift run again on each device its settings name: a device with
  // fewer parity runs is an edited or truncated baseline, whatever its drift says.
  if (const nlohmann::json devices = before.value("devices", nlohmann::json::array()); devices.is_array() && !devices.empty()) {
    const nlohmann::json* runs = nullptr;
    if (baseline.contains("device_parity") && baseline.at("device_parity").is_object() && baseline.at("device_parity").contains("runs")) {
      runs = &baseline.at("device_parity").at("runs");
    }
    if (runs == nullptr || !runs->is_array()) malformed("its settings name devices, and it has no list of 'device_parity' 'runs'");
    for (const auto& device : devices) {
      if (!device.is_string()) malformed("'settings' 'devices' holds " + device.dump() + ", not a device name");
      const auto on_device = std::count_if(runs->begin(), runs->end(), [&](const nlohmann::json& run) {
        return run.is_object() && run.value("device", nlohmann::json()) == device;
      });
      if (static_cast<std::size_t>(on_device) != baseline.at("drift").size()) {
        malformed("its settings name device " + device.get<std::string>() + ", and 'device_parity' holds " + std::to_string(on_device) +
                  " runs on it, not one per drift run (" + std::to_string(baseline.at("drift").size()) + ")");
      }
    }
  }
  for (const auto& [key, now] : settings.items()) {
    if (before.value(key, nlohmann::json()) != now) {
      const nlohmann::json then = before.value(key, nlohmann::json());
      // "1" and 1 print alike to a reader: say which is a text.
      const std::string kind = then.is_string() != now.is_string() ? std::string(" (a ") + then.type_name() + ")" : "";
      throw UsageError("--baseline " + path + " was made with " + key + " " + then.dump() + kind + ", this run has " +
                       now.dump() + ": the gate compares the same runs; rerun with the baseline's settings, or make a new baseline");
    }
  }
}

bool apply_gate(nlohmann::json& report, const nlohmann::json* baseline, const std::string& baseline_name) {
  nlohmann::json regressions = nlohmann::json::array(), unmatched = nlohmann::json::array();
  std::int64_t comparisons = 0;
  const auto regress = [&](const std::string& kind, const std::string& what, double before, double now) {
    // JSON has no infinity: a figure that was 0 and is not any more has the ratio "inf".
    const nlohmann::json ratio = before > 0 ? nlohmann::json(now / before) : (now > 0 ? nlohmann::json("inf") : nlohmann::json(1.0));
    regressions.push_back({{"kind", kind}, {"what", what}, {"baseline", before}, {"now", now}, {"ratio", ratio}});
  };
  std::map<std::string, const nlohmann::json*> baseline_runs, baseline_rows;
  std::set<std::string> matched;
  if (baseline != nullptr) {
    for (const auto& run : baseline->at("drift")) baseline_runs[run_key(run)] = &run;
    if (baseline->at("check").contains("rows")) {
      for (const auto& row : baseline->at("check").at("rows")) baseline_rows[row_key(row)] = &row;
    }
  }
  for (auto& run : report.at("drift")) {
    const std::string key = run_key(run);
    const std::string dtype = run.value("dtype", "f32");
    bool regressed = false;
    const nlohmann::json& now = run.at("summary");
    if (number(now.at("max"), "nonfinite") > 0) {
      regress("nonfinite", key + ": non-finite parameters", 0, number(now.at("max"), "nonfinite"));
      regressed = true;
    }
    const auto found = baseline_runs.find(key);
    if (baseline != nullptr && found == baseline_runs.end()) unmatched.push_back(key + ": not in the baseline");
    if (found != baseline_runs.end()) {
      const nlohmann::json& before = found->second->at("summary");
      matched.insert("run " + key);
      // The same optimizer and dtype made with other hyperparameters, maps, sizes or blocks is
      // another run: its figures are not comparable (an edited baseline passed the gate that way).
      for (const char* setting : {"hyperparameters", "state_maps", "elements", "blocksize", "eight_bit"}) {
        if (run.contains(setting) && found->second->contains(setting) && run.at(setting) != found->second->at(setting)) {
          unmatched.push_back(key + ": made with " + setting + " " + run.at(setting).dump() + ", the baseline with " +
                              found->second->at(setting).dump());
        }
      }
      for (const char* scope : {"final", "max"}) {
        for (const char* figure : kFigures) {
          if (!now.at(scope).contains(figure)) continue;
          if (!before.at(scope).contains(figure)) {
            unmatched.push_back(key + ": " + scope + " " + figure + " not in the baseline");
            continue;
          }
          ++comparisons;
          const double a = number(before.at(scope), figure), b = number(now.at(scope), figure);
          const double floor = floor_of(figure, dtype);
          if (b > kGateFactor * std::max(a, floor)) {
            regress("drift", key + ": " + scope + " " + figure, a, b);
            regressed = true;
          }
        }
      }
    }
    run["regressed"] = regressed;
  }
  for (auto& row : report.at("check").at("rows")) {
    bool regressed = false;
    if (number(row, "violations") > 0) {
      regress("violation", row_key(row) + " on " + row.value("device", "?") + ": " + row.value("counterexample", ""), 0,
              number(row, "violations"));
      regressed = true;
    }
    const auto found = baseline_rows.find(row_key(row));
    if (baseline != nullptr && found == baseline_rows.end()) unmatched.push_back(row_key(row) + ": check row not in the baseline");
    if (found != baseline_rows.end()) {
      matched.insert("row " + row_key(row));  // rows of several devices share one baseline row
      ++comparisons;
      const double before = number(*found->second, "ill_conditioned"), now = number(row, "ill_conditioned");
      if (now > before) {
        regress("ill-conditioned", row_key(row) + ": ill-conditioned elements", before, now);
        regressed = true;
      }
    }
    row["regressed"] = regressed;
  }
  for (const auto& run : report.at("device_parity").at("runs")) {
    if (!run.value("bitwise_equal", true)) {
      regress("parity", run.value("optimizer", "?") + "/" + run.value("dtype", "?") + (run.value("eight_bit", false) ? " 8-bit" : "") +
                            " on " + run.value("device", "?") + " differs from " + report.at("device_parity").value("against", "cpu") +
                            " from step " + std::to_string(run.value("first_different_step", 0)),
              0, 1);
    }
  }
  // Settings agree, so the runs and rows are the same on both sides: one the other lacks (a thinned
  // or edited baseline) was not compared, and the gate cannot vouch for it.
  if (report.value("complete", false)) {
    for (const auto& [key, run] : baseline_runs) {
      if (!matched.contains("run " + key)) unmatched.push_back(key + ": in the baseline, not in this run");
    }
    for (const auto& [key, row] : baseline_rows) {
      if (!matched.contains("row " + key)) unmatched.push_back(key + ": check row in the baseline, not in this run");
    }
  }
  const bool complete = report.value("complete", false);
  const bool passed = complete && regressions.empty() && unmatched.empty();
  report["gate"] = {{"baseline", baseline != nullptr ? nlohmann::json(baseline_name) : nlohmann::json(nullptr)},
                    {"factor", kGateFactor},
                    {"reason", kGateReason},
                    {"floors", {{"max_ulps", 1}, {"errors", "unit roundoff of the dtype (2^-24, 2^-11, 2^-8)"}, {"max_state_error", "2^-8"}}},
                    {"comparisons", comparisons},
                    {"regressions", regressions},
                    {"unmatched", unmatched},
                    {"complete", complete},
                    {"passed", passed}};
  return passed;
}

std::string gate_verdict(const nlohmann::json& gate) {
  if (gate.value("passed", false)) return "passed";
  if (!gate.value("complete", true) && gate.at("regressions").empty()) return "NOT PASSED (partial campaign: interrupted)";
  if (gate.at("regressions").empty() && !gate.at("unmatched").empty()) {
    return "NOT PASSED (" + std::to_string(gate.at("unmatched").size()) + " runs, rows or figures not matched by the baseline)";
  }
  return "FAILED";
}

}  // namespace bitparity::reports
