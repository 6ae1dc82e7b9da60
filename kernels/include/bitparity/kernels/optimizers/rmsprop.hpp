#pragma once
// RMSprop (smoothing alpha, centered, momentum), torch.optim.RMSprop.
#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

struct Rmsprop {
  static constexpr std::string_view name = "rmsprop";
  static constexpr std::string_view summary = "RMSprop (smoothing alpha, centered, momentum), torch.optim.RMSprop";
  static constexpr StateSpec states[] = {{"square_avg", StateRole::second_moment},
                                         {"grad_avg", StateRole::centered_average},
                                         {"momentum_buffer", StateRole::signed_buffer}};
  static constexpr HyperparameterSpec hyperparameters[] = {
      kLr, kEps, weight_decay(0.0),
      hyperparameter<&Hyperparameters::smoothing>("alpha", ValueRange::unit_interval, {0.99, 0.99, 0.9, 0.0}, 0.99),
      hyperparameter<&Hyperparameters::momentum>("momentum", ValueRange::nonnegative, {0.0, 0.9}, 0.5),
      hyperparameter<&Hyperparameters::centered>("centered", ValueRange::flag, {0, 1}, 1)};
  static constexpr bool norm_based = false;
  static void host_scalars(const StepContext& c, StepScalars& s) {
    s.alpha = c.h.smoothing;
    s.one_minus_alpha = static_cast<float>(1.0 - static_cast<double>(c.h.smoothing));
  }
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const float square_avg = moving_average(s.alpha, s.one_minus_alpha, e.s[0], g * g);
    e.s[0] = square_avg;
    // The centred average and the momentum buffer are computed and dropped where unused: selects,
    // not branches, so that the launchers' element loops vectorize.
    const bool centered = s.centered != 0;
    const float grad_avg = moving_average(s.alpha, s.one_minus_alpha, e.s[1], g);
    e.s[1] = centered ? grad_avg : e.s[1];
    const float variance = selected_by_flag(centered, clamped_at_zero(square_avg - grad_avg * grad_avg), square_avg);
    const float denom = sqrtf(variance) + s.eps;
    const float buffer = s.momentum * e.s[2] + g / denom;
    const bool with_momentum = s.momentum > 0.0f;
    e.s[2] = with_momentum ? buffer : e.s[2];
    apply_update(s, e.p, s.lr * (with_momentum ? buffer : g / denom), e);
  }
};

}  // namespace bitparity::descriptors
