#pragma once
// AdEMAMix (Pagliardini et al., 2024): fast and slow EMAs, alpha and beta3 warm-up.
#include <algorithm>
#include <cmath>

#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

// The beta3 warm-up: interpolate the half-life f(beta) = ln(0.5) / ln(beta) - 1 from beta1 to beta3
// over `warmup` steps.
inline double scheduled_beta3(double beta1, double beta3, std::int64_t step, std::int64_t warmup) {
  if (warmup <= 0 || step >= warmup) return beta3;
  const auto half_life = [](double beta) { return std::log(0.5) / std::log(beta) - 1.0; };
  const double fraction = static_cast<double>(step) / static_cast<double>(warmup);
  const double t = (1.0 - fraction) * half_life(beta1) + fraction * half_life(beta3);
  return std::min(std::pow(0.5, 1.0 / (t + 1.0)), beta3);
}

struct Ademamix {
  static constexpr std::string_view name = "ademamix";
  static constexpr std::string_view summary = "AdEMAMix (fast and slow EMAs, alpha and beta3 warm-up)";
  static constexpr StateSpec states[] = {{"exp_avg_fast", StateRole::momentum},
                                         {"exp_avg_slow", StateRole::signed_buffer},
                                         {"exp_avg_sq", StateRole::second_moment}};
  static constexpr HyperparameterSpec hyperparameters[] = {
      kLr, kBeta1, kBeta2, kEps, weight_decay(0.0),
      hyperparameter<&Hyperparameters::beta3>("beta3", ValueRange::unit_interval, {0.9999, 0.999, 0.99}, 0.9999),
      hyperparameter<&Hyperparameters::ademamix_alpha>("alpha", ValueRange::nonnegative, {5.0, 8.0, 0.0}, 5.0),
      hyperparameter<&Hyperparameters::alpha_warmup>("alpha_warmup", ValueRange::count, {0, 0, 100, 10000}, 100),
      hyperparameter<&Hyperparameters::beta3_warmup>("beta3_warmup", ValueRange::count, {0, 0, 100, 10000}, 100)};
  static constexpr bool norm_based = false;
  static void constraints(const Hyperparameters& h) {
    require_hyperparameters(h.beta3_warmup == 0 || (h.beta1 > 0.0f && h.beta3 > 0.0f), name,
                            "the beta3 warm-up needs beta1 > 0 and beta3 > 0");
  }
  static void make_consistent(Hyperparameters& h) {
    if (h.beta1 == 0.0f || h.beta3 == 0.0f) h.beta3_warmup = 0;
  }
  static void host_scalars(const StepContext& c, StepScalars& s) {
    const Hyperparameters& h = c.h;
    s.inverse_bias_correction1 = static_cast<float>(1.0 / c.bias_correction1);
    const double alpha = h.alpha_warmup > 0 ? std::min(c.t * h.ademamix_alpha / static_cast<double>(h.alpha_warmup),
                                                       static_cast<double>(h.ademamix_alpha))
                                            : h.ademamix_alpha;
    s.alpha = static_cast<float>(alpha);
    s.beta3 = static_cast<float>(scheduled_beta3(h.beta1, h.beta3, h.step, h.beta3_warmup));
    s.one_minus_beta3 = static_cast<float>(1.0 - static_cast<double>(s.beta3));
  }
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = prepared_gradient(s, e.g);
    const float p = e.p * s.decay;
    const float fast = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    const float slow = moving_average(s.beta3, s.one_minus_beta3, e.s[1], g);
    const float nu = moving_average(s.beta2, s.one_minus_beta2, e.s[2], g * g);
    const float numerator = fast * s.inverse_bias_correction1 + s.alpha * slow;
    const float denom = sqrtf(nu) / s.bias_correction2_sqrt + s.eps;
    apply_update(s, p, s.lr * (numerator / denom), e);
    e.s[0] = fast;
    e.s[1] = slow;
    e.s[2] = nu;
  }
};

}  // namespace bitparity::descriptors
