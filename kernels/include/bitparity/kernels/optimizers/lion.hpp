#pragma once
// Lion (sign of the interpolated momentum, decoupled weight decay).
#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

struct Lion {
  static constexpr std::string_view name = "lion";
  static constexpr std::string_view summary = "Lion (sign of the interpolated momentum, decoupled weight decay)";
  static constexpr StateSpec states[] = {{"exp_avg", StateRole::momentum}};
  static constexpr HyperparameterSpec hyperparameters[] = {
      hyperparameter<&Hyperparameters::lr>("lr", ValueRange::nonnegative, {1e-4, 3e-4}, 1e-4, true), kBeta1,
      hyperparameter<&Hyperparameters::beta2>("beta2", ValueRange::unit_interval, {0.99, 0.98, 0.0}, 0.99),
      weight_decay(0.1)};
  static constexpr bool norm_based = false;
  static void host_scalars(const StepContext&, StepScalars&) {}
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = prepared_gradient(s, e.g);
    const float p = e.p * s.decay;
    const float interpolation = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    apply_update(s, p, s.lr * sign_of(interpolation), e);
    e.s[0] = moving_average(s.beta2, s.one_minus_beta2, e.s[0], g);
  }
};

}  // namespace bitparity::descriptors
