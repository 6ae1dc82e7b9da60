#pragma once
// Adam (L2 weight decay added to the gradient), torch.optim.Adam.
#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

// Adam and AdamW: m, v, and p - step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
BP_HD void adam_element(const StepScalars& s, bool decoupled, ElementValues& e) {
  float g = prepared_gradient(s, e.g);
  float p = e.p;
  if (decoupled) {
    p = p * s.decay;
  } else {
    g = with_l2_decay(s, g, p);
  }
  const float m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  const float v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], g * g);
  const float denom = sqrtf(v) / s.bias_correction2_sqrt + s.eps;
  apply_update(s, p, s.step_size * (m / denom), e);
  e.s[0] = m;
  e.s[1] = v;
}

struct Adam {
  static constexpr std::string_view name = "adam";
  static constexpr std::string_view summary = "Adam (L2 weight decay added to the gradient), torch.optim.Adam";
  static constexpr StateSpec states[] = {{"exp_avg", StateRole::momentum}, {"exp_avg_sq", StateRole::second_moment}};
  static constexpr HyperparameterSpec hyperparameters[] = {kLr, kBeta1, kBeta2, kEps, weight_decay(0.0)};
  static constexpr bool norm_based = false;
  static void host_scalars(const StepContext& c, StepScalars& s) { s.step_size = adam_step_size(c.h, c.bias_correction1); }
  BP_HD static void element(const StepScalars& s, ElementValues& e) { adam_element(s, false, e); }
};

}  // namespace bitparity::descriptors
