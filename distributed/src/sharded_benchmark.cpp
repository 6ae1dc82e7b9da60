#include "bitparity/distributed/sharded_benchmark.hpp"

#include <algorithm>
#include <random>
#include <vector>

#include "bitparity/distributed/hyperparameter_draw.hpp"
#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/distributed/unsharded_optimizer.hpp"

namespace bitparity::distributed {

namespace {

// Two groups of two parameters, 40/10/30/20 % of the elements, none a multiple of a block or of W.
ShardedConfig benchmark_config(OptimizerKind kind, bool eight_bit, DType dtype, ShardLayout layout, std::int64_t elements,
                               int world) {
  std::mt19937_64 random(20261123);
  ShardedConfig config;
  config.kind = kind;
  config.eight_bit = eight_bit;
  config.layout = layout;
  config.blocksize = 256;
  config.microbatches = world;
  const std::int64_t shares[2][2] = {{40, 10}, {30, 20}};
  const std::int64_t ragged[2][2] = {{3, 17}, {5, -25}};
  std::uint64_t id = 101;
  std::int64_t left = elements;
  for (int g = 0; g < 2; ++g) {
    GroupConfig group;
    group.id = static_cast<std::uint64_t>(g);
    group.hyper = draw_hyperparameters(kind, eight_bit, random);
    group.param_dtype = group.grad_dtype = dtype;
    for (int i = 0; i < 2; ++i) {
      // The last parameter takes what is left, so a row has exactly the elements asked for.
      const bool last = g == 1 && i == 1;
      const std::int64_t numel = last ? left : elements * shares[g][i] / 100 + ragged[g][i];
      left -= numel;
      group.parameters.push_back({id, numel});
      id += 7;
    }
    config.groups.push_back(std::move(group));
  }
  return config;
}

// Each phase's time on the slowest rank.
StepPhaseSeconds slowest(const StepPhaseSeconds& mine, Communicator& communicator) {
  const double values[3] = {mine.reduce, mine.step, mine.gather};
  std::vector<double> all(3 * static_cast<std::size_t>(communicator.size()));
  communicator.all_gather(values, sizeof values, all.data());
  StepPhaseSeconds out;
  for (std::size_t r = 0; r < all.size(); r += 3) {
    out.reduce = std::max(out.reduce, all[r]);
    out.step = std::max(out.step, all[r + 1]);
    out.gather = std::max(out.gather, all[r + 2]);
  }
  return out;
}

StepPhaseSeconds median(std::vector<StepPhaseSeconds> runs) {
  const auto middle = [&](auto field) {
    std::vector<double> values;
    for (const auto& run : runs) values.push_back(run.*field);
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
    return values[values.size() / 2];
  };
  return {middle(&StepPhaseSeconds::reduce), middle(&StepPhaseSeconds::step), middle(&StepPhaseSeconds::gather)};
}

}  // namespace

ShardedBenchmarkResult run_sharded_benchmark(OptimizerKind kind, bool eight_bit, DType dtype, ShardLayout layout,
                                             std::int64_t elements, int steps, Communicator& communicator,
                                             fixtures::Implementation& implementation) {
  const ShardedConfig config = benchmark_config(kind, eight_bit, dtype, layout, elements, communicator.size());
  ShardedOptimizer sharded(config, communicator, implementation);
  UnshardedOptimizer unsharded(config);
  std::vector<StepPhaseSeconds> sharded_runs, unsharded_runs;
  for (std::int64_t step = 1; step <= steps + 1; ++step) {
    communicator.barrier();
    sharded.step(step);
    const StepPhaseSeconds sharded_step = slowest(sharded.last_phases(), communicator);
    communicator.barrier();
    set_activity("benchmark step " + std::to_string(step) + ": unsharded");
    unsharded.step(step);
    const StepPhaseSeconds unsharded_step = slowest(unsharded.last_phases(), communicator);
    if (step == 1) continue;  // warm-up: first touches of the buffers
    sharded_runs.push_back(sharded_step);
    unsharded_runs.push_back(unsharded_step);
  }
  ShardedBenchmarkResult result;
  for (const auto& group : config.groups) {
    for (const auto& p : group.parameters) result.elements += p.numel;
  }
  result.steps = steps;
  result.sharded = median(sharded_runs);
  result.unsharded = median(unsharded_runs);
  return result;
}

}  // namespace bitparity::distributed
