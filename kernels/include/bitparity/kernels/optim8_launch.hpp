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
// The gradient's non-finite scan and the step back to back on the device (the step's kernels skip
// themselves when the scan found a NaN/Inf), with one host synchronisation for both answers: returns
// the scan's verdict, and adds the blocks with a non-finite new state to `nonfinite_blocks`.
bool scan_and_step8(int device, const Optimizer8Params& params, const LaunchConfig& launch, std::int64_t& nonfinite_blocks);
}
}  // namespace bitparity
