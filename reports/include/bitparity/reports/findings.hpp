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
  // The failed rows this finding stands for besides its own ("P5 device on nf4/f16"): rows whose
  // failure has the same cause, folded under it rather than reported again.
  std::vector<std::string> folded;
  bool per_entry_point = false;  // a cause said once per entry point: each is printed
};

// A convention a plugin declares (fixtures/convention.hpp): checked as declared, listed, not a finding.
struct DeclaredConvention {
  std::string implementation;
  std::string name;
  std::string claim;
};

// The findings of the failed rows run on plugins (rows of cpu, cuda:N and mutants give none).
std::vector<Finding> plugin_findings(const std::vector<CheckRow>& rows);
// The conventions each plugin of the rows declares.
std::vector<DeclaredConvention> plugin_conventions(const std::vector<CheckRow>& rows);
nlohmann::json findings_json(const std::vector<Finding>& findings);
nlohmann::json conventions_json(const std::vector<DeclaredConvention>& conventions);
// One line per class with its count, then each finding: class, property, target, explanation and
// the first line of the counterexample.
void print_findings(const std::vector<Finding>& findings);
// "conventions (declared, checked as declared):" and one line each.
void print_conventions(const std::vector<DeclaredConvention>& conventions);

}  // namespace bitparity::reports
