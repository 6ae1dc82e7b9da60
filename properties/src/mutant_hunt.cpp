// Round-robin over properties, targets and block sizes with small case counts, so that a mutant
// meets every property early; exhaustive sweeps get a short slice each round.
#include "bitparity/properties/mutant_hunt.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

HuntResult hunt_mutant(const fixtures::MutantInfo& mutant, double budget_seconds, std::uint64_t seed,
                       const std::string& only_property) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const auto iut = mutant.make();
  const auto baseline = fixtures::make_implementation("cpu");
  HuntResult hunt;
  hunt.mutant = mutant.name;
  // The mutant's own suite every round; the other suites every fourth round; an exhaustive sweep
  // per target from round 8 on, with a short slice (it is the slowest, so it waits for the fast ones).
  std::vector<const PropertyDef*> properties;
  for (const auto& property : property_catalogue()) {
    if (only_property.empty() || property.id == only_property) properties.push_back(&property);
  }
  std::map<std::string, std::vector<TargetSpec>> targets_of_suite;
  for (const PropertyDef* property : properties) {
    auto& targets = targets_of_suite[property->suite];
    if (!targets.empty()) continue;
    targets = suite_targets(property->suite);
    // Visit every format or optimizer before the next dtype: consecutive rounds differ most.
    std::stable_sort(targets.begin(), targets.end(),
                     [](const TargetSpec& a, const TargetSpec& b) { return a.dtype < b.dtype; });
  }
  for (int round = 0; elapsed() < budget_seconds; ++round) {
    for (const PropertyDef* property : properties) {
      const bool own_suite = property->suite == mutant.suite || !only_property.empty();
      const std::vector<TargetSpec>& targets = targets_of_suite[property->suite];
      const int first_sweep = only_property.empty() ? 8 : 0;  // one sweep per target from this round on
      const bool sweep_round = round >= first_sweep && round < first_sweep + static_cast<int>(targets.size());
      if (property->exhaustive && !sweep_round) continue;
      if (!own_suite && round % 4 != 3 && !property->exhaustive) continue;
      const TargetSpec& spec = targets[static_cast<std::size_t>(round) % targets.size()];
      const std::vector<std::int64_t> sizes = spec.block_sizes();
      const std::int64_t blocksize = sizes[static_cast<std::size_t>(round * 3) % sizes.size()];
      const PropertyTarget target = make_target(*property, spec, iut.get(), baseline.get(), blocksize);
      RunOptions options;
      options.seed = seed + static_cast<std::uint64_t>(round) * 1000003u;
      options.max_cases = 10;
      options.seconds = property->exhaustive ? 2.0 : budget_seconds - elapsed();
      const RunResult result = run_property(*property, target, options);
      if (!result.passed) {
        hunt.killed = true;
        hunt.property = property->id + " " + property->name;
        hunt.target = spec.label() + (target.blocksize > 0 ? " blocksize " + std::to_string(target.blocksize) : "");
        hunt.counterexample = result.counterexample;
        hunt.seconds = elapsed();
        return hunt;
      }
      if (elapsed() >= budget_seconds) break;
    }
  }
  hunt.seconds = elapsed();
  return hunt;
}

}  // namespace bitparity::properties
