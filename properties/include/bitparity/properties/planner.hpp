#pragma once
// The one planner: which property runs on which registry target and block sizes. `bitparity
// check`, the ctest cases and the mutant hunter all enumerate their work through it, so a property,
// a format or an optimizer added anywhere reaches every runner.
#include <cstdint>
#include <string>
#include <vector>

#include "bitparity/fixtures/suite.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

// What to plan. An empty list selects everything of its kind; naming formats or optimizers selects
// only the targets named.
struct PlanSelection {
  std::vector<fixtures::Suite> suites;
  std::vector<std::string> property_ids;
  std::vector<std::string> formats;     // quantization formats (targets of the quant suite)
  std::vector<std::string> optimizers;  // optimizers (targets of optim32 and optim8); conversions have neither
  std::vector<std::string> dtypes;   // f32, f16, bf16
  std::vector<std::int64_t> block_sizes;
  // Maps for the 8-bit optimizers' states; giving any selects the optim8 targets as naming their
  // optimizers would (`--map X` runs the quant rows of X and the 8-bit optimizers with X).
  StateMaps state_maps;
};

struct PlannedCase {
  const PropertyDef* property = nullptr;
  TargetSpec spec;
  std::vector<std::int64_t> block_sizes;  // the selected sizes of the target; {0} for targets without blocks
};

// Property x target in catalogue order (suites in the selection's order), targets with no selected
// block size left out.
std::vector<PlannedCase> plan_cases(const PlanSelection& selection);

}  // namespace bitparity::properties
