#pragma once
// RAdam (Liu et al., 2020), torch.optim.RAdam: the adaptive step scaled by the variance
// rectification while rho_t > 5, an SGD-with-momentum step before that.
#include <cmath>

#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

struct Radam {
  static constexpr std::string_view name = "radam";
  static constexpr std::string_view summary = "RAdam: rectified adaptive step, SGD-like while rho_t <= 5, torch.optim.RAdam";
  static constexpr StateSpec states[] = {{"exp_avg", StateRole::momentum}, {"exp_avg_sq", StateRole::second_moment}};
  static constexpr HyperparameterSpec hyperparameters[] = {kLr, kBeta1, kBeta2, kEps, weight_decay(0.0)};
  static constexpr bool norm_based = false;
  static constexpr int kRectifiedStep = 0;  // slot of StepScalars::coefficient; variant = rectified

  // rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t), rho_inf = 2 / (1 - beta2) - 1.
  static double rho(double beta2, double t, double bias_correction2) {
    const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
    return rho_inf - 2.0 * t * std::pow(beta2, t) / bias_correction2;
  }
  static void host_scalars(const StepContext& c, StepScalars& s) {
    const double beta2 = c.h.beta2, lr = c.h.lr;
    s.step_size = static_cast<float>(lr / c.bias_correction1);
    const double rho_t = rho(beta2, c.t, c.bias_correction2);
    s.variant = rho_t > 5.0;
    if (s.variant) {
      const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
      const double rect =
          std::sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
      // lr rect sqrt(1 - beta2^t) / (1 - beta1^t), rounded once.
      s.coefficient[kRectifiedStep] = static_cast<float>(lr * rect * std::sqrt(c.bias_correction2) / c.bias_correction1);
    }
  }
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const float m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    const float v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], g * g);
    // Both updates computed, one kept: a select, so that the loops vectorize.
    const float rectified = s.coefficient[kRectifiedStep] * (m / (sqrtf(v) + s.eps));
    apply_update(s, e.p, s.variant != 0 ? rectified : s.step_size * m, e);
    e.s[0] = m;
    e.s[1] = v;
  }
};

}  // namespace bitparity::descriptors
