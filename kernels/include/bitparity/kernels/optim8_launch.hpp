#pragma once
// The launchers of the 8-bit optimizers: every quant block takes two passes over its elements,
// the first for the new absmax of each state (an exact max), the second recomputing and storing.
#include <cstdint>
#include <vector>

#include "bitparity/kernels/optimizer8.hpp"

#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optim8_body.hpp"

namespace bitparity {

// Validate a step's views and gather them (what optimizer8_step does before launching).
Optimizer8Params prepare_optimizer8_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                                         const TensorView& grad, const std::vector<QuantizedState>& states,
                                         std::int64_t blocksize);

namespace cpu {
void optimizer8_blocks(const Optimizer8Params& params, const LaunchConfig& launch, std::int64_t& nonfinite_blocks);
}
namespace cuda {
void optimizer8_blocks(int device, const Optimizer8Params& params, const LaunchConfig& launch,
                       std::int64_t& nonfinite_blocks);
}
}  // namespace bitparity
