// report.md: the report's figures as tables, for release notes and code review.
#include <cstdio>

#include "bitparity/reports/report.hpp"

namespace bitparity::reports {

namespace {

std::string g(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string text(const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

}  // namespace

std::string report_markdown(const nlohmann::json& report) {
  const auto& build = report.at("build");
  const auto& settings = report.at("settings");
  std::string md = "# bitparity numerical drift report\n\n";
  if (!report.value("complete", false)) md += "**Partial report: the campaign was interrupted.** What ran is below.\n\n";
  md += "| | |\n|---|---|\n";
  md += "| bitparity | " + text(build.at("bitparity")) + " |\n| git commit | " + text(build.at("commit")) + " |\n";
  md += "| compiler | " + text(build.at("compiler")) + " |\n| CUDA | " + text(build.at("cuda")) + " |\n";
  std::string devices;
  for (const auto& d : build.at("devices")) devices += (devices.empty() ? "" : ", ") + text(d);
  md += "| devices | " + devices + " |\n| host, date | " + text(build.at("host")) + ", " + text(build.at("date")) + " |\n";
  md += "| seed | " + text(settings.at("seed")) + " |\n| campaign | " + std::to_string(settings.value("steps", 0)) + " steps, " +
        std::to_string(settings.value("elements", 0)) + " elements, implementation " + settings.value("implementation", "cpu") + " |\n\n";
  if (report.contains("gate")) {
    const auto& gate = report.at("gate");
    md += "## Gate: " + gate_verdict(gate) + "\n\n";
    md += "Baseline: " + (gate.at("baseline").is_null() ? std::string("none") : text(gate.at("baseline"))) + ". Factor " +
          g(gate.value("factor", 0.0)) + ": " + gate.value("reason", "") + "\n\n";
    if (!gate.at("regressions").empty()) {
      md += "| kind | what | baseline | now | ratio |\n|---|---|---|---|---|\n";
      for (const auto& r : gate.at("regressions")) {
        md += "| " + text(r.at("kind")) + " | " + text(r.at("what")) + " | " + text(r.at("baseline")) + " | " + text(r.at("now")) + " | " +
              text(r.at("ratio")) + " |\n";
      }
      md += "\n";
    }
  }
  md += "## Drift against the exact trajectory\n\nFigures at the last step (and the largest over all steps).\n\n";
  md += "| run | max abs | max rel | median rel | max ulps | 8-bit state error | max rel over steps | non-finite |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const auto& run : report.at("drift")) {
    const auto& f = run.at("summary").at("final");
    const auto& m = run.at("summary").at("max");
    md += "| " + run.value("optimizer", "?") + "/" + run.value("dtype", "?") + (run.value("eight_bit", false) ? " 8-bit" : "") +
          (run.value("regressed", false) ? " **regressed**" : "") + " | " + g(f.value("max_abs_error", 0.0)) + " | " +
          g(f.value("max_rel_error", 0.0)) + " | " + g(f.value("median_rel_error", 0.0)) + " | " + g(f.value("max_ulps", 0.0)) + " | " +
          (run.value("eight_bit", false) ? g(f.value("max_state_error", 0.0)) : "") + " | " + g(m.value("max_rel_error", 0.0)) +
          " | " + std::to_string(m.value("nonfinite", 0)) + " |\n";
  }
  const auto& parity = report.at("device_parity");
  md += "\n## Device parity\n\n";
  if (!parity.value("measured", false)) {
    md += "Not measured: " + parity.value("reason", "") + ".\n";
  } else {
    std::int64_t equal = 0;
    for (const auto& run : parity.at("runs")) equal += run.value("bitwise_equal", false) ? 1 : 0;
    md += std::to_string(equal) + " of " + std::to_string(parity.at("runs").size()) + " trajectories bitwise equal to " +
          parity.value("against", "cpu") + ".\n";
    for (const auto& run : parity.at("runs")) {
      if (!run.value("bitwise_equal", true)) {
        md += "- " + text(run.at("optimizer")) + "/" + text(run.at("dtype")) + " on " + text(run.at("device")) + " differs from step " +
              std::to_string(run.value("first_different_step", 0)) + "\n";
      }
    }
  }
  const auto& summary = report.at("check").at("summary");
  md += "\n## Check summary\n\n" + std::to_string(summary.value("rows_run", 0)) + " rows: " +
        std::to_string(summary.value("failed_rows", 0)) + " failed, " + std::to_string(summary.value("violations", 0)) + " violations, " +
        std::to_string(summary.value("ill_conditioned", 0)) + " ill-conditioned elements, " +
        std::to_string(summary.value("incomplete_rows", 0)) + " incomplete rows.\n";
  return md;
}

}  // namespace bitparity::reports
