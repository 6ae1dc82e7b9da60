#include "bitparity/properties/planner.hpp"

#include <algorithm>

namespace bitparity::properties {

namespace {

template <class T>
bool selects(const std::vector<T>& list, const T& item) {
  return list.empty() || std::find(list.begin(), list.end(), item) != list.end();
}

std::vector<std::int64_t> selected_block_sizes(const TargetSpec& spec, const std::vector<std::int64_t>& wanted) {
  if (!spec.format && !spec.quantized_state) return {0};
  std::vector<std::int64_t> sizes;
  for (auto size : spec.block_sizes()) {
    if (selects(wanted, size)) sizes.push_back(size);
  }
  return sizes;
}

}  // namespace

std::vector<PlannedCase> plan_cases(const PlanSelection& selection) {
  std::vector<fixtures::Suite> suites = selection.suites;
  if (suites.empty()) suites.assign(fixtures::kSuites.begin(), fixtures::kSuites.end());
  // Naming formats or optimizers keeps only the targets named: a target of the other kind, or one
  // without an entry (conversions), is not selected.
  const bool by_entry = !selection.formats.empty() || !selection.optimizers.empty();
  const auto named = [&](const TargetSpec& spec) {
    const auto& names = spec.format ? selection.formats : selection.optimizers;
    if (spec.quantized_state && selection.optimizers.empty() && selection.state_maps.any()) return true;
    return !spec.entry().empty() && std::find(names.begin(), names.end(), spec.entry()) != names.end();
  };
  std::vector<PlannedCase> plan;
  for (fixtures::Suite suite : suites) {
    const std::vector<TargetSpec> targets = suite_targets(suite);
    for (const PropertyDef* property : properties_of_suite(suite)) {
      if (!selects(selection.property_ids, property->id)) continue;
      for (const auto& spec : targets) {
        if (!selects(selection.dtypes, std::string(dtype_name(spec.dtype)))) continue;
        if (by_entry && !named(spec)) continue;
        std::vector<std::int64_t> sizes = selected_block_sizes(spec, selection.block_sizes);
        TargetSpec chosen = spec;
        if (chosen.quantized_state) chosen.state_maps = selection.state_maps;
        if (!sizes.empty()) plan.push_back({property, chosen, std::move(sizes)});
      }
    }
  }
  return plan;
}

}  // namespace bitparity::properties
