#pragma once
// 32-bit optimizers: hyperparameters, the scalars the host derives from them once per step, and
// the entry point. Parameters and gradients f32/f16/bf16, states f32; every tensor any strided view.
#include <cstdint>
#include <string_view>
#include <vector>

#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/tensor_view.hpp"

namespace bitparity {

enum class OptimizerKind : std::uint8_t { adam, adamw, sgd, rmsprop, adagrad, lion, ademamix, lamb, lars };

struct OptimizerInfo {
  OptimizerKind kind;
  std::string_view name;
  int states;  // number of fp32 state tensors
  std::string_view description;
};

std::vector<OptimizerInfo> optimizers();
const OptimizerInfo& optimizer_info(OptimizerKind kind);
OptimizerKind parse_optimizer(std::string_view name);  // throws Error naming the choices

// Hyperparameters as the user gives them (fp32, as the kernel will see them), and the step t >= 1.
struct Hyperparameters {
  float lr = 1e-3f;
  float beta1 = 0.9f;          // Adam/AdamW/AdEMAMix/Lion first beta
  float beta2 = 0.999f;        // second beta (Lion: the momentum update beta)
  float beta3 = 0.9999f;       // AdEMAMix slow EMA
  float smoothing = 0.99f;     // RMSprop alpha (torch's name)
  float ademamix_alpha = 5.0f; // AdEMAMix mixing coefficient of the slow EMA
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  float momentum = 0.0f;       // SGD, RMSprop
  float dampening = 0.0f;      // SGD
  float lr_decay = 0.0f;       // Adagrad
  float grad_scale = 1.0f;     // AMP loss scale: the gradient is multiplied by 1/grad_scale
  std::int64_t alpha_warmup = 0;  // AdEMAMix: steps of linear ademamix_alpha warm-up (0 = none)
  std::int64_t beta3_warmup = 0;  // AdEMAMix: steps of beta3 warm-up (0 = none)
  float max_unorm = 0.0f;            // update-norm clipping: ||update|| <= max_unorm * ||p||; 0 = off
  float trust_coefficient = 0.001f;  // LARS eta
  float max_trust_ratio = 10.0f;     // LAMB: trust ratio clipped to [0, max]; 0 = no clipping
  bool exclude_from_adaptation = false;   // LAMB/LARS: trust ratio 1 for this tensor (biases, norms)
  bool exclude_from_weight_decay = false; // LAMB/LARS: no weight decay for this tensor
  bool nesterov = false;
  bool centered = false;
  bool maximize = false;
  std::int64_t step = 1;
};

// Scalars that depend only on hyperparameters and the step, computed once on the host (in double,
// rounded once to fp32) and passed unchanged to every device.
struct StepScalars {
  float lr = 0;
  float beta1 = 0, one_minus_beta1 = 0;
  float beta2 = 0, one_minus_beta2 = 0;
  float beta3 = 0, one_minus_beta3 = 0;  // AdEMAMix: beta3 of this step (warm-up applied)
  float alpha = 0, one_minus_alpha = 0;  // RMSprop alpha; AdEMAMix alpha of this step
  float eps = 0;
  float weight_decay = 0;
  float decay = 1;                    // 1 - lr * weight_decay (decoupled decay)
  float step_size = 0;                // Adam: lr / (1 - beta1^t); Adagrad: lr / (1 + (t-1) lr_decay)
  float inverse_bias_correction1 = 1; // AdEMAMix: 1 / (1 - beta1^t)
  float bias_correction2_sqrt = 1;    // sqrt(1 - beta2^t)
  float momentum = 0, one_minus_dampening = 1;
  float inverse_grad_scale = 1;
  float trust_scaled_lr = 0;          // LAMB: lr * trust ratio; LARS: the local lr (after the norm pass)
  int trust_exponent = 0;             // the factor is trust_scaled_lr * 2^trust_exponent (non-zero only past FLT_MAX)
  float update_scale = 1;             // max_unorm: the clipping factor of this step (after the norm pass)
  bool clip_update = false;
  bool unscale = false, maximize = false, nesterov = false, centered = false, first_step = false;
};

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

}  // namespace bitparity
