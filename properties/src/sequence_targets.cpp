#include "metamorphic.hpp"

namespace bitparity::properties {

std::vector<PropertyTarget> sequence_targets(const PropertyTarget& t, fixtures::Suite suite,
                                             const std::vector<fixtures::OperationFamily>& families) {
  PropertyDef probe;
  probe.suite = suite;
  probe.families = families;
  std::vector<PropertyTarget> targets;
  for (const TargetSpec& spec : suite_targets(suite)) {
    for (const std::int64_t blocksize : spec.block_sizes()) {
      PropertyTarget target = make_target(probe, spec, t.iut, nullptr, blocksize);
      if (!not_applicable_reason(probe, target).empty()) continue;
      target.size_scale = t.size_scale;
      targets.push_back(target);
    }
  }
  return targets;
}

}  // namespace bitparity::properties
