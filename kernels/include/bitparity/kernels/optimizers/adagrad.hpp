#pragma once
// Adagrad with lr decay, torch.optim.Adagrad.
#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

struct Adagrad {
  static constexpr std::string_view name = "adagrad";
  static constexpr std::string_view summary = "Adagrad with lr decay, torch.optim.Adagrad";
  static constexpr StateSpec states[] = {{"sum", StateRole::second_moment}};
  static constexpr HyperparameterSpec hyperparameters[] = {
      hyperparameter<&Hyperparameters::lr>("lr", ValueRange::nonnegative, {0.01, 0.1}, 0.01, true),
      hyperparameter<&Hyperparameters::eps>("eps", ValueRange::nonnegative, {1e-10, 1e-8}, 1e-8), weight_decay(0.0),
      hyperparameter<&Hyperparameters::lr_decay>("lr_decay", ValueRange::nonnegative, {0.0, 0.01}, 0.0)};
  static constexpr bool norm_based = false;
  static void host_scalars(const StepContext& c, StepScalars& s) {
    s.step_size = static_cast<float>(c.h.lr / (1.0 + (c.t - 1.0) * c.h.lr_decay));
  }
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const float sum = e.s[0] + g * g;
    e.s[0] = sum;
    const float denom = sqrtf(sum) + s.eps;
    apply_update(s, e.p, s.step_size * (g / denom), e);
  }
};

}  // namespace bitparity::descriptors
