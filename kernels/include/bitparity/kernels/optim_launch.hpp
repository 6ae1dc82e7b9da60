#pragma once
// The optimizer launchers behind optimizer_step. Each first scans the whole gradient for NaN or
// infinity; if it finds one it returns true and changes nothing, otherwise it runs the step.
#include <vector>

#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optim_body.hpp"

namespace bitparity {
namespace cpu {
bool optimizer_step(const OptimizerParams& params, const LaunchConfig& launch);
}
namespace cuda {
bool optimizer_step(int device, const OptimizerParams& params, const LaunchConfig& launch);
}
// Validate the views of a step and gather them with the host step scalars (what optimizer_step
// does before launching). Throws Error with the reason.
OptimizerParams prepare_optimizer_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                                       const TensorView& grad, const std::vector<TensorView>& states);

// Elements per launch when LaunchConfig::blocks_per_launch splits an optimizer step.
inline constexpr std::int64_t kOptimizerElementsPerLaunchBlock = 4096;
}  // namespace bitparity
