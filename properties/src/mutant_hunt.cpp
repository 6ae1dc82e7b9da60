// Round-robin over properties, targets and block sizes with small case counts, so that a mutant
// meets every property early; exhaustive sweeps get a short slice each round. Targets the mutant
// alters come first; every fourth round visits one it does not alter, where any failure is a
// harness error (the mutant's shared code disagrees with the kernel), never a kill.
#include "bitparity/properties/mutant_hunt.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/planner.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

namespace {

struct SuiteTargets {
  std::vector<TargetSpec> altered, unaltered;
};

SuiteTargets targets_for(const fixtures::MutantInfo& mutant, fixtures::Suite suite, std::vector<TargetSpec> all) {
  // Visit every format or optimizer before the next dtype: consecutive rounds differ most.
  std::stable_sort(all.begin(), all.end(), [](const TargetSpec& a, const TargetSpec& b) { return a.dtype < b.dtype; });
  SuiteTargets split;
  for (const auto& spec : all) (mutant.alters(suite, spec.entry()) ? split.altered : split.unaltered).push_back(spec);
  return split;
}

}  // namespace

HuntResult hunt_mutant(const fixtures::MutantInfo& mutant, double budget_seconds, std::uint64_t seed,
                       const std::string& only_property) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // Through the id, so that P14 can make a fresh instance of the mutant.
  const auto iut = fixtures::make_implementation(fixtures::ImplementationId{fixtures::ImplementationKind::mutant, 0, mutant.name});
  const auto baseline = fixtures::make_implementation("cpu");
  HuntResult hunt;
  hunt.mutant = mutant.name;
  // The planner's properties (catalogue order) and, per property, its targets.
  PlanSelection selection;
  if (!only_property.empty()) selection.property_ids = {only_property};
  std::vector<const PropertyDef*> properties;
  std::map<const PropertyDef*, std::vector<TargetSpec>> planned_targets;
  for (const PlannedCase& planned : plan_cases(selection)) {
    if (!planned_targets.contains(planned.property)) properties.push_back(planned.property);
    planned_targets[planned.property].push_back(planned.spec);
  }
  std::map<const PropertyDef*, SuiteTargets> targets_of_property;
  for (const PropertyDef* property : properties) {
    targets_of_property[property] = targets_for(mutant, property->suite, planned_targets[property]);
  }
  // Altered targets every round; an unaltered one every fourth round (the harness check); an
  // exhaustive sweep per target from round 8 on, with a short slice (it is the slowest).
  for (int round = 0; elapsed() < budget_seconds; ++round) {
    for (const PropertyDef* property : properties) {
      const SuiteTargets& split = targets_of_property[property];
      const bool check_round = round % 4 == 3;
      const bool altered = !split.altered.empty() && !(check_round && !split.unaltered.empty() && only_property.empty());
      if (!altered && !check_round) continue;
      const std::vector<TargetSpec>& targets = altered ? split.altered : split.unaltered;
      if (targets.empty()) continue;
      const int first_sweep = only_property.empty() ? 8 : 0;
      const bool sweep_round = round >= first_sweep && round < first_sweep + 4 * static_cast<int>(targets.size());
      if (property->exhaustive && !sweep_round) continue;
      const TargetSpec& spec = targets[static_cast<std::size_t>(round) % targets.size()];
      const std::vector<std::int64_t> sizes = spec.block_sizes();
      const std::int64_t blocksize = sizes[static_cast<std::size_t>(round * 3) % sizes.size()];
      const PropertyTarget target = make_target(*property, spec, iut.get(), baseline.get(), blocksize);
      RunOptions options;
      options.seed = seed + static_cast<std::uint64_t>(round) * 1000003u;
      options.max_cases = 10;
      options.seconds = property->exhaustive ? 2.0 : budget_seconds - elapsed();
      options.record_failing_case = true;
      const RunResult result = run_property(*property, target, options);
      if (altered) hunt.altered_cases += result.stats.cases;
      if (!result.passed) {
        hunt.killed = altered;
        hunt.harness_error = !altered;
        hunt.property = property->id + " " + property->name;
        hunt.target = spec.label() + (target.blocksize > 0 ? " blocksize " + std::to_string(target.blocksize) : "");
        hunt.counterexample = result.counterexample;
        hunt.property_id = property->id;
        hunt.spec = spec;
        hunt.blocksize = target.blocksize;
        hunt.failing_case = result.failing_case;
        hunt.seconds = elapsed();
        return hunt;
      }
      if (elapsed() >= budget_seconds) break;
    }
  }
  hunt.seconds = elapsed();
  if (hunt.altered_cases == 0) {
    hunt.harness_error = true;
    hunt.counterexample = "no case ran on a target the mutant alters in --seconds " + std::to_string(budget_seconds) +
                          ", so it did not survive anything; give the hunt more time";
  }
  return hunt;
}

}  // namespace bitparity::properties
