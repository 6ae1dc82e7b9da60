#pragma once
// LAMB: the Adam direction with weight decay, scaled by the layer-wise trust ratio ||p|| / ||u||.
#include <algorithm>

#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

struct Lamb {
  static constexpr std::string_view name = "lamb";
  static constexpr std::string_view summary =
      "LAMB: Adam direction with weight decay, layer-wise trust ratio ||p||/||u||, clipped";
  static constexpr StateSpec states[] = {{"exp_avg", StateRole::momentum}, {"exp_avg_sq", StateRole::second_moment}};
  static constexpr HyperparameterSpec hyperparameters[] = {
      kLr, kBeta1, kBeta2, kEps, weight_decay(0.01),
      hyperparameter<&Hyperparameters::max_trust_ratio>("max_trust_ratio", ValueRange::nonnegative, {10.0, 0.0, 1.0}, 10.0),
      kExcludeFromAdaptation, kExcludeFromWeightDecay};
  static constexpr bool norm_based = true;
  static constexpr bool norm_pass_writes_states = true;  // the moments, which the direction needs
  static void host_scalars(const StepContext& c, StepScalars& s) {
    s.inverse_bias_correction1 = static_cast<float>(1.0 / c.bias_correction1);
  }
  // lr * trust, the trust ratio clipped to [0, max_trust_ratio] (0: no clipping).
  static double trust_factor(const Hyperparameters& h, const StepScalars&, double param_norm, double direction_norm,
                             bool adapt) {
    double trust = adapt ? param_norm / direction_norm : 1.0;
    if (adapt && h.max_trust_ratio > 0.0f) trust = std::min(trust, static_cast<double>(h.max_trust_ratio));  // NaN stays NaN
    return static_cast<double>(h.lr) * trust;
  }
  // The first pass: the Adam moments (stored).
  BP_HD static void moments(const StepScalars& s, ElementValues& e) {
    const float g = prepared_gradient(s, e.g);
    e.s[0] = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    e.s[1] = moving_average(s.beta2, s.one_minus_beta2, e.s[1], g * g);
  }
  // The direction from the new moments: m_hat / (sqrt(v_hat) + eps) + wd * p.
  BP_HD static float direction(const StepScalars& s, const ElementValues& e) {
    const float denom = sqrtf(e.s[1]) / s.bias_correction2_sqrt + s.eps;
    const float ratio = (e.s[0] * s.inverse_bias_correction1) / denom;
    return s.weight_decay != 0.0f ? ratio + s.weight_decay * e.p : ratio;
  }
  BP_HD static NormTerms norm_terms(const StepScalars& s, ElementValues& e) {
    moments(s, e);
    return {e.p, direction(s, e)};
  }
  // The second pass (moments already new): p - (lr * trust) * direction.
  BP_HD static void element(const StepScalars& s, ElementValues& e) { e.p = e.p - times_trust(s, direction(s, e)); }
};

}  // namespace bitparity::descriptors
