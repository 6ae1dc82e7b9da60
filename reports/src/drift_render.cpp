#include "bitparity/reports/drift_render.hpp"

#include <cstdio>
#include <string>

namespace bitparity::reports {

using properties::DriftReport;

nlohmann::json drift_json(const DriftReport& report) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : report.steps) {
    steps.push_back({{"step", s.step},
                     {"max_abs_error", s.max_abs_error},
                     {"max_rel_error", s.max_rel_error},
                     {"median_abs_error", s.median_abs_error},
                     {"median_rel_error", s.median_rel_error},
                     {"max_ulps", s.max_ulps},
                     {"ulp_histogram", s.ulp_histogram},
                     {"nonfinite", s.nonfinite},
                     {"max_state_error", s.max_state_error},
                     {"parameter_hash", s.parameter_hash}});
  }
  return {{"implementation", report.implementation}, {"optimizer", report.optimizer},
          {"dtype", dtype_name(report.dtype)},         {"elements", report.elements},
          {"eight_bit", report.eight_bit},             {"blocksize", report.blocksize},
          {"state_maps", report.state_maps},
          {"hyperparameters", report.hyperparameters},
          {"steps", steps}};
}

void print_drift(const DriftReport& report, std::int64_t every) {
  std::printf("drift of %s%s on %s, %s parameters, %lld elements (ulp bins: 0 | 1 | 2-3 | 4-15 | 16-255 | >=256)\n",
              report.optimizer.c_str(), report.eight_bit ? (" 8-bit (block " + std::to_string(report.blocksize) + ")").c_str() : "",
              report.implementation.c_str(), dtype_name(report.dtype), static_cast<long long>(report.elements));
  std::printf("hyperparameters: %s\n", report.hyperparameters.c_str());
  if (report.eight_bit) {
    std::string maps;
    for (const auto& name : report.state_maps) maps += (maps.empty() ? "" : ", ") + name;
    std::printf("state maps: %s\n", maps.c_str());
  }
  std::printf("%8s %12s %12s %9s  %-40s%s\n", "step", "max |err|", "max rel", "max ulps", "ulp histogram",
              report.eight_bit ? "state 0 error / max" : "");
  for (const auto& s : report.steps) {
    if (s.step != 1 && s.step % every != 0 && s.step != static_cast<std::int64_t>(report.steps.size())) continue;
    char histogram[96];
    std::snprintf(histogram, sizeof histogram, "%lld | %lld | %lld | %lld | %lld | %lld",
                  static_cast<long long>(s.ulp_histogram[0]), static_cast<long long>(s.ulp_histogram[1]),
                  static_cast<long long>(s.ulp_histogram[2]), static_cast<long long>(s.ulp_histogram[3]),
                  static_cast<long long>(s.ulp_histogram[4]), static_cast<long long>(s.ulp_histogram[5]));
    std::printf("%8lld %12.4g %12.4g %9.0f  %-40s", static_cast<long long>(s.step), s.max_abs_error, s.max_rel_error,
                s.max_ulps, histogram);
    if (report.eight_bit) std::printf("%.4g", s.max_state_error);
    std::printf("%s\n", s.nonfinite ? "  (non-finite!)" : "");
  }
}

}  // namespace bitparity::reports
