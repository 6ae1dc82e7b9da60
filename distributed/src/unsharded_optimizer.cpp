#include "bitparity/distributed/unsharded_optimizer.hpp"

#include <chrono>
#include <cmath>

#include "bitparity/distributed/exact_rounding.hpp"
#include "bitparity/distributed/value_source.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

UnshardedOptimizer::UnshardedOptimizer(const ShardedConfig& config) : config_(config) {
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    for (const auto& spec : config.groups[g].parameters) {
      UnshardedParameter p;
      p.spec = spec;
      p.group = g;
      p.param = fixtures::HostTensor::buffer(config.groups[g].param_dtype, spec.numel);
      p.grad = fixtures::HostTensor::buffer(config.groups[g].grad_dtype, spec.numel);
      fixtures::write_logical(p.param.view(), initial_parameter(config.recorded.get(), config.seed, spec.id, spec.numel, config.groups[g].param_dtype));
      p.state = std::make_unique<OptimizerState>(config.kind, spec.numel, Device::cpu(),
                                                 StateOptions{config.eight_bit, config.blocksize, 0, config.maps});
      parameters_.push_back(std::move(p));
    }
  }
}

void UnshardedOptimizer::step(std::int64_t step) {
  if (step == config_.regroup_step) {
    // Each parameter keeps its values and states and takes its new group's settings.
    config_.groups = config_.regrouped;
    for (auto& p : parameters_) {
      for (std::size_t g = 0; g < config_.groups.size(); ++g) {
        for (const auto& spec : config_.groups[g].parameters) p.group = spec.id == p.spec.id ? g : p.group;
      }
      p.grad = fixtures::HostTensor::buffer(config_.groups[p.group].grad_dtype, p.spec.numel);  // its new gradient dtype
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  bool nonfinite = false;
  for (auto& p : parameters_) {
    const DType dtype = config_.groups[p.group].grad_dtype;
    std::vector<ExactFloatSum> sums(static_cast<std::size_t>(p.spec.numel));
    for (int m = 0; m < config_.microbatches; ++m) {
      const auto values = microbatch_gradient(config_.recorded.get(), config_.seed, step, m, p.spec.id, p.spec.numel, dtype);
      for (std::size_t i = 0; i < values.size(); ++i) sums[i].add(values[i]);
    }
    std::vector<float> reduced(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i) {
      reduced[i] = rounded_to(sums[i], dtype);
      nonfinite = nonfinite || !std::isfinite(reduced[i]);
    }
    fixtures::write_logical(p.grad.view(), reduced);
  }
  const auto reduced_at = Clock::now();
  phases_.reduce = std::chrono::duration<double>(reduced_at - start).count();
  if (!nonfinite) {
    for (auto& p : parameters_) {
      Hyperparameters h = config_.groups[p.group].hyper;
      h.step = step;
      p.state->step(h, p.param.view(), p.grad.view());
    }
  }
  phases_.step = std::chrono::duration<double>(Clock::now() - reduced_at).count();
}

const UnshardedParameter& UnshardedOptimizer::parameter(std::uint64_t id) const {
  for (const auto& p : parameters_) {
    if (p.spec.id == id) return p;
  }
  throw Error(ErrorCode::invalid_argument, "no parameter " + std::to_string(id));
}

}  // namespace bitparity::distributed
