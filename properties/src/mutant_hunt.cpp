// Round-robin over properties, targets and block sizes with small case counts, so that a mutant
// meets every property early; exhaustive sweeps get a short slice each round.
#include "bitparity/properties/mutant_hunt.hpp"

#include <chrono>

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
  std::vector<const PropertyDef*> properties;
  for (const auto& property : property_catalogue()) {
    if (only_property.empty() || property.id == only_property) properties.push_back(&property);
  }
  for (int round = 0; elapsed() < budget_seconds; ++round) {
    for (const PropertyDef* property : properties) {
      const std::vector<TargetSpec> targets = suite_targets(property->suite);
      const TargetSpec& spec = targets[(round * 7 + property->id.size()) % targets.size()];
      PropertyTarget target;
      target.iut = iut.get();
      target.baseline = property->needs_baseline ? baseline.get() : nullptr;
      target.format = spec.format;
      target.optimizer = spec.optimizer;
      target.dtype = spec.dtype;
      if (spec.format) target.blocksize = spec.format->block_sizes[(round * 3) % spec.format->block_sizes.size()];
      RunOptions options;
      options.seed = seed + static_cast<std::uint64_t>(round) * 1000003u;
      options.max_cases = 10;
      options.seconds = property->exhaustive ? 1.0 : budget_seconds - elapsed();
      const RunResult result = run_property(*property, target, options);
      if (!result.passed) {
        hunt.killed = true;
        hunt.property = property->id + " " + property->name;
        hunt.target = spec.label() + (spec.format ? " blocksize " + std::to_string(target.blocksize) : "");
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
