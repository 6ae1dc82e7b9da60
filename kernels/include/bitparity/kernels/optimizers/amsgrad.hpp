#pragma once
// Adam with amsgrad, torch.optim.Adam(amsgrad=True): the denominator from the running maximum of
// the second moments.
#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

struct Amsgrad {
  static constexpr std::string_view name = "amsgrad";
  static constexpr std::string_view summary = "Adam with amsgrad (max of second moments), torch.optim.Adam(amsgrad=True)";
  static constexpr StateSpec states[] = {{"exp_avg", StateRole::momentum},
                                         {"exp_avg_sq", StateRole::second_moment},
                                         {"max_exp_avg_sq", StateRole::running_maximum}};
  static constexpr HyperparameterSpec hyperparameters[] = {kLr, kBeta1, kBeta2, kEps, weight_decay(0.0)};
  static constexpr bool norm_based = false;
  static void host_scalars(const StepContext& c, StepScalars& s) { s.step_size = adam_step_size(c.h, c.bias_correction1); }
  // torch.maximum: a NaN in either operand gives NaN.
  BP_HD static float maximum(float a, float b) { return (a != a || a > b) ? a : b; }
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const float m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    const float v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], g * g);
    const float v_max = maximum(v, e.s[2]);
    const float denom = sqrtf(v_max) / s.bias_correction2_sqrt + s.eps;
    apply_update(s, e.p, s.step_size * (m / denom), e);
    e.s[0] = m;
    e.s[1] = v;
    e.s[2] = v_max;
  }
};

}  // namespace bitparity::descriptors
