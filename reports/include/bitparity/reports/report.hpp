#pragma once
// `bitparity report`: the release drift campaign. Drift against the exact trajectory for every
// optimizer x dtype, with fp32 and with 8-bit states; device parity on every CUDA device; the check
// summary. One JSON document (schema bitparity.report/1) holds it all; report.md and a
// self-contained report.html (inline SVG plots, no network) are rendered from it, and a baseline
// report gates it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bitparity::reports {

inline constexpr const char* kReportSchema = "bitparity.report/1";

struct ReportOptions {
  std::int64_t steps = 200;
  std::int64_t elements = 256;
  std::int64_t blocksize = 256;     // of the 8-bit states
  std::uint64_t seed = 1;
  int check_cases = 20;             // random cases per block size of each check row (fixed: the gate compares counts)
  bool sweeps = true;               // the exhaustive sweeps (P12) in the check summary
  std::string implementation = "cpu";  // the implementation drifted and checked (mutant:NAME: a worse build)
  std::vector<std::string> devices;    // CUDA devices whose parity with the cpu is measured
};

struct ReportCallbacks {
  std::function<bool()> cancelled;                                        // stop between runs
  // `done` whole units of `total` (a drift run, a parity run, a check row) and `fraction` of the next.
  std::function<void(std::int64_t done, double fraction, std::int64_t total, const std::string& current)> progress;
};

// Runs the campaign. With `cancelled` true midway it returns what is done, "complete": false.
nlohmann::json run_report_campaign(const ReportOptions& options, const ReportCallbacks& callbacks);

// The gate: every drift figure against the baseline's (a regression when it grows beyond the
// factor), any check violation, more ill-conditioned elements or non-finite parameters than the
// baseline. Adds "gate" to the report; true when it passed. Without a baseline only the
// violations and non-finite parameters gate. A partial campaign (interrupted) never passes: what
// did not run was not judged.
bool apply_gate(nlohmann::json& report, const nlohmann::json* baseline, const std::string& baseline_name);
// The gate's verdict in words, for the summary line, report.md and report.html: "passed",
// "FAILED", or "NOT PASSED (partial campaign: interrupted)".
std::string gate_verdict(const nlohmann::json& gate);
// Throws UsageError naming what is wrong when `baseline` is not a complete report of this schema,
// when a part the gate reads is malformed (a figure that is not a number of at least 0), or when
// it was made with other `settings` ({"steps", "elements", "blocksize", "seed"} of this run).
void check_baseline(const nlohmann::json& baseline, const std::string& path, const nlohmann::json& settings);

std::string report_markdown(const nlohmann::json& report);
// With the gate's baseline (a report.json), each drift panel also draws the baseline's curves,
// faint and in the same colours, so a regression's size and first step show at a glance.
std::string report_html(const nlohmann::json& report, const nlohmann::json* baseline = nullptr);

}  // namespace bitparity::reports
