#pragma once
// LARS: the local lr eta * ||p|| / (||g|| + wd * ||p||) into SGD momentum.
#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/sgd.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

struct Lars {
  static constexpr std::string_view name = "lars";
  static constexpr std::string_view summary = "LARS: local lr eta*||p||/(||g|| + wd*||p||) into SGD momentum";
  static constexpr StateSpec states[] = {{"momentum_buffer", StateRole::momentum}};
  static constexpr HyperparameterSpec hyperparameters[] = {
      hyperparameter<&Hyperparameters::lr>("lr", ValueRange::nonnegative, {0.1, 1.0}, 0.1, true),
      hyperparameter<&Hyperparameters::weight_decay>("weight_decay", ValueRange::nonnegative, {0.0, 0.0, 0.01, 0.1}, 1e-4),
      hyperparameter<&Hyperparameters::momentum>("momentum", ValueRange::nonnegative, {0.9, 0.0}, 0.9),
      hyperparameter<&Hyperparameters::dampening>("dampening", ValueRange::closed_unit, {0.0, 0.1}, 0.0),
      hyperparameter<&Hyperparameters::nesterov>("nesterov", ValueRange::flag, {0, 1}, 0),
      hyperparameter<&Hyperparameters::trust_coefficient>("trust_coefficient", ValueRange::positive, {0.001, 0.02}, 0.001),
      kExcludeFromAdaptation, kExcludeFromWeightDecay};
  static constexpr bool norm_based = true;
  static constexpr bool norm_pass_writes_states = false;
  static void constraints(const Hyperparameters& h) { require_nesterov_rule(name, h); }
  static void make_consistent(Hyperparameters& h) { Sgd::make_consistent(h); }
  static void host_scalars(const StepContext&, StepScalars&) {}
  static double trust_factor(const Hyperparameters& h, const StepScalars& s, double param_norm, double direction_norm,
                             bool adapt) {
    return adapt ? h.trust_coefficient * param_norm / (direction_norm + static_cast<double>(s.weight_decay) * param_norm)
                 : 1.0;
  }
  BP_HD static NormTerms norm_terms(const StepScalars& s, ElementValues& e) { return {e.p, prepared_gradient(s, e.g)}; }
  // The second pass: the gradient with weight decay, scaled by the local lr, into SGD momentum.
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const float scaled = times_trust(s, g);
    // Without momentum the buffer is computed and dropped (selects, so that the loops vectorize).
    const float buffer = s.first_step != 0 ? scaled : s.momentum * e.s[0] + s.one_minus_dampening * scaled;
    const bool with_momentum = s.momentum != 0.0f;
    e.s[0] = with_momentum ? buffer : e.s[0];
    const float direction = with_momentum ? (s.nesterov != 0 ? scaled + s.momentum * buffer : buffer) : scaled;
    e.p = e.p - s.lr * direction;
  }
};

}  // namespace bitparity::descriptors
