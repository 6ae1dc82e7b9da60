#pragma once
// The unsharded run that P6 compares with: each parameter its own tensor and state, stepped with the
// exactly reduced gradient of all microbatches; the whole step skipped when any gradient is
// non-finite. Every rank runs it whole.
#include <cstdint>
#include <memory>
#include <vector>

#include "bitparity/distributed/sharded_optimizer.hpp"

namespace bitparity::distributed {

struct UnshardedParameter {
  ParameterSpec spec;
  std::size_t group = 0;
  fixtures::HostTensor param, grad;
  std::unique_ptr<OptimizerState> state;
};

class UnshardedOptimizer {
 public:
  explicit UnshardedOptimizer(const ShardedConfig& config);
  void step(std::int64_t step);
  const UnshardedParameter& parameter(std::uint64_t id) const;  // throws for an unknown id
  const std::vector<UnshardedParameter>& parameters() const { return parameters_; }
  StepPhaseSeconds last_phases() const { return phases_; }  // reduce: backward and exact sums; no gather

 private:
  ShardedConfig config_;
  std::vector<UnshardedParameter> parameters_;
  StepPhaseSeconds phases_;
};

}  // namespace bitparity::distributed
