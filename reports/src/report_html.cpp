// report.html: one self-contained page (inline CSS and SVG, no network fetch) rendered from the
// report's JSON. A few lines of script only measure the plots once laid out: each SVG gets its
// rendered size (data-rendered), and a plot that drew at zero size shows a warning on the page.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "bitparity/reports/check_run.hpp"
#include "bitparity/reports/report.hpp"
#include "report_svg.hpp"

namespace bitparity::reports {

namespace {

const char* color_of(const std::string& dtype) {
  return dtype == "f32" ? "#1f77b4" : dtype == "f16" ? "#d62728" : "#2ca02c";
}

std::string text_of(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

double number(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return 0.0;
  if (j.at(key).is_number()) return j.at(key).get<double>();
  return j.at(key).is_string() ? INFINITY : 0.0;  // "inf" / "nan" ratios
}

std::string cell(const nlohmann::json& value) {
  if (value.is_string()) return escape_html(value.get<std::string>());
  if (value.is_number_float()) return text_of(value.get<double>());
  return escape_html(value.dump());
}

// The baseline's run of the same optimizer, dtype and state width, or null.
const nlohmann::json* baseline_run(const nlohmann::json* baseline, const nlohmann::json& run) {
  if (baseline == nullptr || !baseline->contains("drift") || !baseline->at("drift").is_array()) return nullptr;
  for (const auto& candidate : baseline->at("drift")) {
    if (candidate.is_object() && candidate.value("optimizer", "") == run.value("optimizer", "?") &&
        candidate.value("dtype", "") == run.value("dtype", "?") && candidate.value("eight_bit", false) == run.value("eight_bit", false) &&
        candidate.contains("steps") && candidate.at("steps").is_array()) {
      return &candidate;
    }
  }
  return nullptr;
}

// Drift charts of one optimizer at one state width: relative and absolute error per step (max
// solid, median dashed; the baseline's max faint), the ULP histogram at the last step, and for
// 8-bit the state error.
std::string drift_card(const std::string& optimizer, bool eight_bit, const std::vector<const nlohmann::json*>& runs,
                       const nlohmann::json* baseline) {
  const std::string width = eight_bit ? "8-bit states" : "fp32 states";
  std::vector<PlotSeries> rel, abs, state, dtypes;
  std::vector<std::vector<double>> histogram;
  std::int64_t last_step = 0;
  bool regressed = false;
  for (const nlohmann::json* run : runs) {
    const std::string dtype = run->value("dtype", "f32");
    regressed = regressed || run->value("regressed", false);
    PlotSeries rel_max{dtype + " max", color_of(dtype)}, rel_median{dtype + " median", color_of(dtype), true};
    PlotSeries abs_max{dtype + " max", color_of(dtype)}, abs_median{dtype + " median", color_of(dtype), true};
    PlotSeries state_error{dtype, color_of(dtype)};
    std::vector<double> bins(6, 0.0);
    for (const auto& step : run->at("steps")) {
      const double t = number(step, "step");
      rel_max.points.emplace_back(t, number(step, "max_rel_error"));
      rel_median.points.emplace_back(t, number(step, "median_rel_error"));
      abs_max.points.emplace_back(t, number(step, "max_abs_error"));
      abs_median.points.emplace_back(t, number(step, "median_abs_error"));
      state_error.points.emplace_back(t, number(step, "max_state_error"));
      for (std::size_t b = 0; b < 6 && b < step.at("ulp_histogram").size(); ++b) bins[b] = step.at("ulp_histogram")[b].get<double>();
      last_step = static_cast<std::int64_t>(t);
    }
    rel.push_back(rel_max);
    rel.push_back(rel_median);
    abs.push_back(abs_max);
    abs.push_back(abs_median);
    state.push_back(state_error);
    if (const nlohmann::json* before = baseline_run(baseline, *run)) {
      PlotSeries rel_before{dtype + " max, baseline", color_of(dtype)}, abs_before{dtype + " max, baseline", color_of(dtype)};
      PlotSeries state_before{dtype + ", baseline", color_of(dtype)};
      rel_before.opacity = abs_before.opacity = state_before.opacity = 0.3;
      for (const auto& step : before->at("steps")) {
        if (!step.is_object()) continue;
        const double t = number(step, "step");
        rel_before.points.emplace_back(t, number(step, "max_rel_error"));
        abs_before.points.emplace_back(t, number(step, "max_abs_error"));
        state_before.points.emplace_back(t, number(step, "max_state_error"));
      }
      rel.push_back(rel_before);
      abs.push_back(abs_before);
      state.push_back(state_before);
    }
    dtypes.push_back({dtype, color_of(dtype)});
    histogram.push_back(bins);
  }
  std::string html = std::string("<div class=\"card") + (regressed ? " regressed" : "") + "\"><h3>" + escape_html(optimizer) + ", " +
                     width + (regressed ? " <span class=\"bad\">regressed</span>" : "") + "</h3>";
  html += line_chart(optimizer + " (" + width + "): relative error", "step", "|p - exact| / |exact|", rel, true);
  html += line_chart(optimizer + " (" + width + "): absolute error", "step", "|p - exact|", abs, true);
  html += bar_chart(optimizer + " (" + width + "): ULP distance at step " + std::to_string(last_step), "elements",
                    {"0", "1", "2-3", "4-15", "16-255", ">=256"}, dtypes, histogram);
  if (eight_bit) html += line_chart(optimizer + " (8-bit): state 0 error / max |state|", "step", "relative state error", state, true);
  return html + "</div>";
}

std::string build_table(const nlohmann::json& report) {
  const auto& build = report.at("build");
  const auto& settings = report.at("settings");
  std::string html = "<table class=\"build\">";
  const auto row = [&](const std::string& name, const std::string& value) {
    html += "<tr><th>" + escape_html(name) + "</th><td>" + value + "</td></tr>";
  };
  row("bitparity", cell(build.at("bitparity")));
  row("git commit", cell(build.at("commit")));
  row("compiler", cell(build.at("compiler")));
  row("CUDA", cell(build.at("cuda")));
  std::string devices;
  for (const auto& device : build.at("devices")) devices += (devices.empty() ? "" : "<br>") + cell(device);
  row("devices", devices);
  row("host, date", cell(build.at("host")) + ", " + cell(build.at("date")));
  row("seed", cell(settings.at("seed")));
  row("campaign", std::to_string(settings.value("steps", 0)) + " steps of " + std::to_string(settings.value("elements", 0)) +
                      " elements, 8-bit block size " + std::to_string(settings.value("blocksize", 0)) + ", implementation " +
                      escape_html(settings.value("implementation", "cpu")) + ", check: " +
                      std::to_string(settings.value("check_cases", 0)) + " cases per block size" +
                      (settings.value("sweeps", false) ? " and the exhaustive sweeps" : ", no sweeps"));
  return html + "</table>";
}

std::string gate_section(const nlohmann::json& report) {
  if (!report.contains("gate")) return "";
  const auto& gate = report.at("gate");
  const bool passed = gate.value("passed", false);
  std::string html = std::string("<div class=\"gate ") + (passed ? "passed" : "failed") + "\"><h2>Gate: " +
                     escape_html(gate_verdict(gate)) + "</h2><p>Baseline: " +
                     (gate.at("baseline").is_null() ? "none (only violations, non-finite parameters and device parity gate)"
                                                    : escape_html(gate.at("baseline").get<std::string>())) +
                     ". Factor " + text_of(gate.value("factor", 0.0)) + ": " + escape_html(gate.value("reason", "")) + "</p><p>" +
                     std::to_string(gate.value("comparisons", 0)) + " comparisons, " +
                     std::to_string(gate.at("regressions").size()) + " regressions.</p>";
  if (!gate.at("regressions").empty()) {
    html += "<table><tr><th>kind</th><th>what</th><th>baseline</th><th>now</th><th>ratio</th></tr>";
    for (const auto& r : gate.at("regressions")) {
      html += "<tr class=\"bad\"><td>" + cell(r.at("kind")) + "</td><td>" + cell(r.at("what")) + "</td><td>" + cell(r.at("baseline")) +
              "</td><td>" + cell(r.at("now")) + "</td><td>" + cell(r.at("ratio")) + "</td></tr>";
    }
    html += "</table>";
  }
  // Said once, folded: a mutant or plugin build adds rows (P5 device rows) that a CPU baseline cannot
  // have, and 93 grey lines of them pushed the regressions panel thousands of pixels down.
  const auto& unmatched = gate.at("unmatched");
  if (!unmatched.empty()) {
    html += "<details class=\"note\"><summary>" + std::to_string(unmatched.size()) +
            " runs, rows or figures were not compared (one side lacks them), so the gate cannot pass</summary><p>A row "
            "only this report has comes from a selection the baseline did not run (another implementation, a device, a "
            "plugin); one only the baseline has was not run now; a missing figure means an edited or older baseline. "
            "Compare like with like, or make a new baseline.</p><ul>";
    for (const auto& note : unmatched) html += "<li>" + cell(note) + "</li>";
    html += "</ul></details>";
  }
  return html + "</div>";
}

std::string parity_section(const nlohmann::json& report) {
  const auto& parity = report.at("device_parity");
  std::string html = "<h2 id=\"parity\">Device parity</h2>";
  if (!parity.value("measured", false)) {
    return html + "<p class=\"warning\">Not measured: " + escape_html(parity.value("reason", "")) +
           ". A report without a GPU says nothing about GPU results.</p>";
  }
  std::int64_t equal = 0;
  for (const auto& run : parity.at("runs")) equal += run.value("bitwise_equal", false) ? 1 : 0;
  html += "<p>" + std::to_string(equal) + " of " + std::to_string(parity.at("runs").size()) +
          " trajectories bitwise equal to " + escape_html(parity.value("against", "cpu")) + " at every step.</p>";
  html += "<table><tr><th>device</th><th>run</th><th>bitwise equal</th><th>first different step</th></tr>";
  for (const auto& run : parity.at("runs")) {
    const bool ok = run.value("bitwise_equal", false);
    html += std::string("<tr") + (ok ? "" : " class=\"bad\"") + "><td>" + cell(run.at("device")) + "</td><td>" +
            cell(run.at("optimizer")) + "/" + cell(run.at("dtype")) + (run.value("eight_bit", false) ? " 8-bit" : "") + "</td><td>" +
            (ok ? "yes" : "no") + "</td><td>" + (ok ? "" : std::to_string(run.value("first_different_step", 0))) + "</td></tr>";
  }
  return html + "</table>";
}

std::string check_section(const nlohmann::json& report) {
  const auto& check = report.at("check");
  const auto& summary = check.at("summary");
  std::string html = "<h2 id=\"check\">Check summary</h2><p>" + std::to_string(summary.value("rows_run", 0)) + " rows on " +
                     escape_html(check.value("implementation", "cpu")) + ", " +
                     std::to_string(check.value("cases_per_block_size", 0)) + " cases per block size: " +
                     std::to_string(summary.value("failed_rows", 0)) + " failed, " + std::to_string(summary.value("violations", 0)) +
                     " violations, " + std::to_string(summary.value("ill_conditioned", 0)) + " ill-conditioned elements, " +
                     std::to_string(summary.value("incomplete_rows", 0)) + " incomplete rows.</p>";
  struct PerProperty {
    std::int64_t rows = 0, cases = 0, violations = 0, ill = 0;
    double ratio = 0;
  };
  std::map<std::string, PerProperty> by_property;
  for (const auto& row : check.at("rows")) {
    PerProperty& p = by_property[row.value("property_id", row.value("property", "?"))];
    ++p.rows;
    p.cases += row.value("cases", std::int64_t{0});
    p.violations += row.value("violations", std::int64_t{0});
    p.ill += row.value("ill_conditioned", std::int64_t{0});
    p.ratio = std::max(p.ratio, number(row, "max_error_over_bound"));
  }
  std::vector<std::string> names;
  std::vector<double> margins;
  html += "<table><tr><th>property</th><th>rows</th><th>cases</th><th>violations</th><th>ill-conditioned</th><th>max err/bound</th></tr>";
  for (const auto& [id, p] : by_property) {
    html += std::string("<tr") + (p.violations > 0 ? " class=\"bad\"" : "") + "><td>" + escape_html(id) + "</td><td>" +
            std::to_string(p.rows) + "</td><td>" + std::to_string(p.cases) + "</td><td>" + std::to_string(p.violations) + "</td><td>" +
            std::to_string(p.ill) + "</td><td>" + (p.ratio > 0 ? format_ratio(p.ratio) : "bitwise") + "</td></tr>";
    if (p.ratio > 0) {
      names.push_back(p.ratio > 1 || !std::isfinite(p.ratio) ? id + " FAILS" : id);
      margins.push_back(std::isfinite(p.ratio) ? 1.0 - p.ratio : -1.0);
    }
  }
  html += "</table><p class=\"note\">err/bound is the largest observed error over its derived bound, truncated (never rounded up "
          "to 1). \"bitwise\": the property compares bits (layouts, launches, determinism, devices) and has no error bound.</p>";
  // The margin below the bound on a log scale: as err/bound, every property whose outputs must be the
  // correctly rounded value sat at 0.999999 against the limit line, as if about to fail. A rounding
  // to nearest attains its bound (half a step) at ties, so a margin of 1e-6 to 1e-8 is what a
  // correct implementation shows there; a violation has none.
  html += bar_chart("margin below the derived bound per property (1 - err/bound; none: a violation)", "1 - err/bound", names,
                    {{"smallest over rows", "#555"}}, {margins}, -1, true);
  html += "<p class=\"note\">A property whose outputs must be correctly rounded, or whose codes must bracket the value "
          "(P7, P8, P9), reaches its bound at ties and at the bracket's ends, so a tiny margin is what a correct implementation "
          "shows there; for a bound derived over several roundings (P1, P1q) the margin says how much of it was used.</p>";
  return html;
}

}  // namespace

std::string report_html(const nlohmann::json& report, const nlohmann::json* baseline) {
  std::string html =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>bitparity drift report</title><style>"
      "body{font-family:DejaVu Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}"
      "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}"
      ".card{display:inline-block;vertical-align:top;border:1px solid #ddd;border-radius:6px;margin:6px;padding:6px}"
      ".card h3{margin:2px 6px;font-size:14px}.regressed{border-color:#b00}.bad{color:#b00;font-weight:bold}"
      ".gate{padding:8px 14px;border-radius:6px;margin:12px 0}.passed{background:#e8f5e9}.failed{background:#fdecea}"
      ".warning{background:#fff3cd;padding:6px 10px}.note{color:#666}svg.plot{display:block;margin:4px}"
      "</style></head><body>";
  html += "<h1>bitparity numerical drift report</h1>";
  if (!report.value("complete", false)) {
    html += "<p class=\"warning\">This report is partial: the campaign was interrupted. What ran is shown; nothing else is claimed.</p>";
  }
  html += build_table(report);
  html += gate_section(report);
  html += "<h2>Drift against the exact trajectory</h2><p>Each run steps " + std::to_string(report.at("settings").value("elements", 0)) +
          " parameters (started from N(0,1), gradients of a noisy quadratic) for " + std::to_string(report.at("settings").value("steps", 0)) +
          " steps and compares every parameter with the exact trajectory carried in MPFR from the same start and gradients, "
          "never re-synchronised. Solid: the largest error over the elements; dashed: the median" +
          std::string(baseline != nullptr ? "; faint: the baseline's largest error" : "") + ".</p>";
  std::map<std::pair<std::string, bool>, std::vector<const nlohmann::json*>> cards;
  std::vector<std::pair<std::string, bool>> order;
  for (const auto& run : report.at("drift")) {
    const auto key = std::make_pair(run.value("optimizer", "?"), run.value("eight_bit", false));
    if (!cards.contains(key)) order.push_back(key);
    cards[key].push_back(&run);
  }
  for (const auto& key : order) html += drift_card(key.first, key.second, cards[key], baseline);
  html += parity_section(report);
  html += check_section(report);
  html +=
      "<script>window.addEventListener('load',function(){var plots=document.querySelectorAll('svg.plot'),empty=0;"
      "plots.forEach(function(svg){var b=svg.getBoundingClientRect();svg.setAttribute('data-rendered',Math.round(b.width)+'x'+"
      "Math.round(b.height));if(b.width<=0||b.height<=0)empty++;});document.body.setAttribute('data-plots',plots.length+' plots, '+"
      "empty+' empty');if(empty>0){var p=document.createElement('p');p.className='warning';p.textContent=empty+' plots did not "
      "render';document.body.insertBefore(p,document.body.firstChild);}});</script>";
  return html + "</body></html>\n";
}

}  // namespace bitparity::reports
