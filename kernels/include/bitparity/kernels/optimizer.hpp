#pragma once
// 32-bit optimizers: the catalogue read from the descriptors, the host scalars of a step, and the
// entry point. Parameters and gradients f32/f16/bf16, states f32; every tensor any strided view.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "bitparity/kernels/exact_sum.hpp"
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optimizer_list.hpp"
#include "bitparity/kernels/optimizer_types.hpp"
#include "bitparity/kernels/tensor_view.hpp"

namespace bitparity {

struct OptimizerInfo {
  OptimizerKind kind;
  std::string_view name;
  int states;  // number of fp32 state tensors
  std::string_view description;
  std::span<const StateSpec> state_specs;
  std::span<const HyperparameterSpec> hyperparameters;  // the ones it reads, besides the common ones
  bool norm_based;  // LAMB/LARS: a norm pass over the whole tensor before the update
  void (*make_consistent)(Hyperparameters&);  // generators: repair a draw that breaks a cross-field rule
};

// Every optimizer, in catalogue order (optimizer_list.hpp), read from the descriptors.
std::span<const OptimizerInfo> optimizers();
const OptimizerInfo& optimizer_info(OptimizerKind kind);
OptimizerKind parse_optimizer(std::string_view name);  // throws Error naming the choices

// Hyperparameters{} with every hyperparameter the optimizer reads at its typical value.
Hyperparameters typical_hyperparameters(OptimizerKind kind);
// Sets a hyperparameter by its descriptor's name (also the optimizer-specific ones); throws Error
// naming the choices for a name the optimizer does not read, or the range for a value outside it.
void set_hyperparameter(OptimizerKind kind, Hyperparameters& h, std::string_view name, double value);
double get_hyperparameter(OptimizerKind kind, const Hyperparameters& h, std::string_view name);
bool reads_hyperparameter(OptimizerKind kind, std::string_view name);
// "must be in [0, 1)" and the like, for messages and help.
std::string_view range_text(ValueRange range);

StepScalars step_scalars(OptimizerKind kind, const Hyperparameters& h);  // validates, throws Error
// LAMB and LARS: the trust ratio from the exact sums of squares of the first pass (rounded once to
// double), computed in double and rounded once to fp32 into s.trust_scaled_lr; a factor beyond fp32's
// range (a tiny gradient norm) keeps a power-of-two exponent apart in s.trust_exponent.
bool norm_based(OptimizerKind kind);
// True when the step needs the norm pass: LAMB, LARS, or update-norm clipping (max_unorm > 0).
bool needs_norm_pass(OptimizerKind kind, const Hyperparameters& h);
// max_unorm: scale = max_unorm ||p|| / ||update|| when ||update|| > max_unorm ||p|| (double, then fp32).
void finish_update_clipping(const Hyperparameters& h, double sum_squares_param, double sum_squares_update,
                            StepScalars& s);
void finish_trust_ratio(OptimizerKind kind, const Hyperparameters& h, double sum_squares_param,
                        double sum_squares_direction, StepScalars& s);
void validate_hyperparameters(OptimizerKind kind, const Hyperparameters& h);

struct StepReport {
  bool nonfinite_gradient = false;  // the step was skipped: parameters and states are unchanged
};

// One optimizer step in place. `states` holds optimizer_info(kind).states fp32 views shaped like
// the parameter. Validates every view (bounds, overlap of the outputs, shapes, devices, dtypes).
StepReport optimizer_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                          const TensorView& grad, const std::vector<TensorView>& states,
                          const LaunchConfig& launch = {});

// A caller that already knows whether its gradients are finite (torch's found_inf, as GradScaler
// computes it while unscaling) passes that flag instead of paying for the step's own pre-scan.
struct FoundInf {
  // One float where the step runs: device memory for a CUDA step, host memory on the CPU. Nonzero:
  // the step writes nothing (as a non-finite gradient would).
  const float* flag = nullptr;
  // CUDA: false returns as soon as the update is queued, with no host synchronisation; the report
  // then says nothing (nonfinite_gradient false): the caller reads its own flag.
  bool synchronize = true;
};

// The step of optimizer_step without the non-finite pre-scan: `found_inf` decides, as in torch's
// fused step. The report's nonfinite_gradient is the flag (when synchronised).
StepReport optimizer_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                          const TensorView& grad, const std::vector<TensorView>& states, const FoundInf& found_inf,
                          const LaunchConfig& launch = {});

// A norm-based step (LAMB, LARS, or max_unorm > 0) on a tensor sharded over ranks, in two halves:
// the exact sums of squares of this piece, then the update with the sums of the whole tensor (every
// piece's merged, across ranks too). The caller has decided that the gradients are finite. LAMB's
// first half also writes its moments, as its norm pass does.
struct NormSums {
  ExactSquareSum param, direction;  // LAMB/LARS: parameter and update direction; max_unorm: parameter and update
};
NormSums optimizer_norm_sums(OptimizerKind kind, const Hyperparameters& h, const TensorView& param, const TensorView& grad,
                             const std::vector<TensorView>& states, const LaunchConfig& launch = {});
void optimizer_step_with_norms(OptimizerKind kind, const Hyperparameters& h, const TensorView& param, const TensorView& grad,
                               const std::vector<TensorView>& states, const NormSums& whole, const LaunchConfig& launch = {});

}  // namespace bitparity
