#pragma once
// The optimizer launchers behind optimizer_step, in passes: a scan of the whole gradient for NaN
// or infinity (before anything is written); for LAMB and LARS a norm pass accumulating exact sums
// of squares; and the apply pass running the element body.
#include <vector>

#include "bitparity/kernels/exact_sum.hpp"
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optim_body.hpp"
#include "bitparity/kernels/optimizer.hpp"

namespace bitparity {

// After the norm pass: the LAMB/LARS trust ratio or the max_unorm clipping factor into s.
void finish_norm_pass(OptimizerKind kind, const Hyperparameters& h, const NormSums& sums, StepScalars& s);

namespace cpu {
bool gradient_has_nonfinite(const OptimizerParams& params, const LaunchConfig& launch);
NormSums norm_pass(const OptimizerParams& params, const LaunchConfig& launch);
void apply_pass(const OptimizerParams& params, const LaunchConfig& launch);
}  // namespace cpu
namespace cuda {
bool gradient_has_nonfinite(int device, const OptimizerParams& params, const LaunchConfig& launch);
// Queues the gradient's non-finite scan on the launch's stream and returns the device flag it sets
// (nonzero: a NaN/Inf; scratch of this host thread, good until its next scan).
const float* queue_gradient_scan(int device, const OptimizerParams& params, const LaunchConfig& launch);
// Elementwise optimizers: scan and update back to back on the device (the update kernel skips itself
// when the scan found a NaN/Inf), one host synchronisation; returns the scan's verdict.
bool scan_and_apply(int device, const OptimizerParams& params, const LaunchConfig& launch);
// The caller's found_inf (device memory) instead of the scan: the update kernel skips itself when
// it is nonzero. With `synchronize`, waits and returns the flag; otherwise returns false at once.
bool apply_unless_found_inf(int device, const OptimizerParams& params, const LaunchConfig& launch,
                            const float* found_inf, bool synchronize);
// Reads the flag once the work queued before it on `stream` (a cudaStream_t; null: the default) is done.
bool found_inf_set(int device, const float* found_inf, void* stream);
NormSums norm_pass(int device, const OptimizerParams& params, const LaunchConfig& launch);
void apply_pass(int device, const OptimizerParams& params, const LaunchConfig& launch);
}  // namespace cuda

// Validate the views of a step and gather them with the host step scalars (what optimizer_step
// does before launching). Throws Error with the reason.
OptimizerParams prepare_optimizer_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                                       const TensorView& grad, const std::vector<TensorView>& states);

// Throws device_unavailable for a CUDA device that is absent or not built; the prepare_* functions
// call it after validating every view.
void require_available(const Device& device);
// The parameter and gradient part of the validation (shared with the 8-bit optimizers).
OptimizerParams prepare_param_and_grad(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                                       const TensorView& grad);

// Elements per launch when LaunchConfig::blocks_per_launch splits an optimizer pass.
inline constexpr std::int64_t kOptimizerElementsPerLaunchBlock = 4096;

}  // namespace bitparity
