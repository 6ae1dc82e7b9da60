#pragma once
// Findings about an external library (a plugin): each failed row of a plugin becomes an entry that
// a maintainer can turn into a bug report: the property, the class of difference, a short
// explanation, the minimal counterexample and the command that replays it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/reports/check_run.hpp"

namespace bitparity::reports {

struct Finding {
  std::string property;        // "P7 quantization"
  std::string implementation;  // "plugin:/path/lib.so"
  std::string target;          // "dynamic8-signed/f32"
  std::string kind;            // the class: "not the nearest code", "wrong absmax", ...
  std::string explanation;
  std::string counterexample;  // the row's counterexample, replay command included
};

// The findings of the failed rows run on plugins (rows of cpu, cuda:N and mutants give none).
std::vector<Finding> plugin_findings(const std::vector<CheckRow>& rows);
nlohmann::json findings_json(const std::vector<Finding>& findings);
// One line per class with its count, then each finding: class, property, target, explanation and
// the first line of the counterexample.
void print_findings(const std::vector<Finding>& findings);

}  // namespace bitparity::reports
