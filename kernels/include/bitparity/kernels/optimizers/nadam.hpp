#pragma once
// NAdam (Dozat, 2016) with torch.optim.NAdam's momentum decay: mu_t = beta1 (1 - 0.5 * 0.96^(t psi)).
#include <cmath>

#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

struct Nadam {
  static constexpr std::string_view name = "nadam";
  static constexpr std::string_view summary = "NAdam with momentum decay (L2 weight decay), torch.optim.NAdam";
  static constexpr StateSpec states[] = {{"exp_avg", StateRole::momentum}, {"exp_avg_sq", StateRole::second_moment}};
  static constexpr int kMomentumDecay = 0;  // slot of Hyperparameters::specific
  static constexpr HyperparameterSpec hyperparameters[] = {
      kLr, kBeta1, kBeta2, kEps, weight_decay(0.0),
      specific_hyperparameter<kMomentumDecay>("momentum_decay", ValueRange::nonnegative, {0.004, 0.004, 0.0, 0.04}, 0.004)};
  static constexpr bool norm_based = false;
  static constexpr int kGradientCoefficient = 0, kMomentumCoefficient = 1;  // slots of StepScalars::coefficient

  // 0.96^(i psi), and 1 - mu_i = (1 - beta1) + 0.5 beta1 0.96^(i psi): a sum of non-negative terms.
  static double decay_power(double psi, double i) { return std::pow(0.96, i * psi); }
  static double one_minus_mu(double beta1, double psi, double i) { return (1.0 - beta1) + 0.5 * beta1 * decay_power(psi, i); }
  // prod_{i <= t} mu_i. Stops when the product is below 2^-1000 (0 is then within every bound), or
  // when 0.96^(i psi) < 2^-64: every later factor is beta1 to within 2^-64 relative.
  static double mu_product(double beta1, double psi, std::int64_t t) {
    double product = 1.0;
    for (std::int64_t i = 1; i <= t; ++i) {
      const double decay = decay_power(psi, static_cast<double>(i));
      product *= beta1 * (1.0 - 0.5 * decay);
      if (product < 0x1p-1000) return 0.0;
      if (decay < 0x1p-64) return product * std::pow(beta1, static_cast<double>(t - i));
    }
    return product;
  }
  static void host_scalars(const StepContext& c, StepScalars& s) {
    const double beta1 = c.h.beta1, psi = c.h.specific[kMomentumDecay], lr = c.h.lr;
    const double mu_next = beta1 - beta1 * 0.5 * decay_power(psi, c.t + 1.0);
    const double product = mu_product(beta1, psi, c.h.step);
    // lr (1 - mu_t) / (1 - prod_{i<=t} mu_i) and lr mu_{t+1} / (1 - prod_{i<=t+1} mu_i).
    s.coefficient[kGradientCoefficient] = static_cast<float>(lr * one_minus_mu(beta1, psi, c.t) / (1.0 - product));
    s.coefficient[kMomentumCoefficient] = static_cast<float>(lr * mu_next / (1.0 - product * mu_next));
  }
  // m, v as Adam; p - (c_g * (g / denom) + c_m * (m / denom)), denom = sqrt(v) / sqrt(1 - beta2^t) + eps.
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const float m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    const float v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], g * g);
    const float denom = sqrtf(v) / s.bias_correction2_sqrt + s.eps;
    const float update = s.coefficient[kGradientCoefficient] * (g / denom) + s.coefficient[kMomentumCoefficient] * (m / denom);
    apply_update(s, e.p, update, e);
    e.s[0] = m;
    e.s[1] = v;
  }
};

}  // namespace bitparity::descriptors
