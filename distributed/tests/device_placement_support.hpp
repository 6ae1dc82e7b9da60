#pragma once
// A one-rank sharded optimizer stepped and saved, for the device-placement tests: the universal
// checkpoint's path and one parameter's values and next gradient as host bytes.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/rank_parity.hpp"
#include "bitparity/distributed/solo_communicator.hpp"
#include "bitparity/distributed/value_source.hpp"

namespace bitparity::distributed::testing {

struct SavedParameter {
  std::string path;  // universal.safetensors
  std::uint64_t id = 0;
  DType dtype = DType::f32;
  std::int64_t numel = 0;
  std::vector<std::uint8_t> param;  // stored bytes after the saved steps
  std::vector<float> next_grad;     // a gradient for the step after resuming
};

inline SavedParameter save_one_parameter(OptimizerKind kind, bool eight_bit, const std::string& folder) {
  ShardedConfig config = draw_sharded_config(kind, eight_bit, DType::f32, ShardLayout::zero12, 21, 1);
  config.regroup_step = 0;
  SoloCommunicator communicator;
  auto implementation = fixtures::make_implementation("cpu");
  ShardedOptimizer optimizer(config, communicator, *implementation);
  optimizer.step(1);
  optimizer.step(2);
  std::filesystem::create_directories(folder);
  save_checkpoint(optimizer, folder);
  const ParameterSpec spec = config.groups[0].parameters[0];
  SavedParameter saved{universal_checkpoint_path(folder), spec.id, config.groups[0].param_dtype, spec.numel,
                       optimizer.whole_parameters().at(spec.id).param, {}};
  saved.next_grad = microbatch_gradient(config.seed, 3, 0, spec.id, spec.numel, DType::f32);
  return saved;
}

}  // namespace bitparity::distributed::testing
