#pragma once
// SGD with momentum, dampening and Nesterov, torch.optim.SGD.
#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizers/common_hyperparameters.hpp"
#include "bitparity/kernels/optimizers/step_context.hpp"

namespace bitparity::descriptors {

inline constexpr HyperparameterSpec kSgdMomentum =
    hyperparameter<&Hyperparameters::momentum>("momentum", ValueRange::nonnegative, {0.0, 0.9, 0.9, 0.5}, 0.9);
inline constexpr HyperparameterSpec kDampening =
    hyperparameter<&Hyperparameters::dampening>("dampening", ValueRange::closed_unit, {0.0, 0.0, 0.1, 0.5}, 0.0);

// torch.optim.SGD's rule, shared with LARS.
inline void require_nesterov_rule(std::string_view name, const Hyperparameters& h) {
  require_hyperparameters(!h.nesterov || (h.momentum > 0.0f && h.dampening == 0.0f), name,
                          "nesterov needs momentum > 0 and dampening 0 (as torch.optim.SGD)");
}

struct Sgd {
  static constexpr std::string_view name = "sgd";
  static constexpr std::string_view summary = "SGD with momentum, dampening and Nesterov, torch.optim.SGD";
  static constexpr StateSpec states[] = {{"momentum_buffer", StateRole::momentum}};
  static constexpr HyperparameterSpec hyperparameters[] = {
      hyperparameter<&Hyperparameters::lr>("lr", ValueRange::nonnegative, {0.01, 0.1, 1.0}, 0.01, true),
      weight_decay(0.0), kSgdMomentum, kDampening,
      hyperparameter<&Hyperparameters::nesterov>("nesterov", ValueRange::flag, {0, 1}, 1)};
  static constexpr bool norm_based = false;
  static void constraints(const Hyperparameters& h) { require_nesterov_rule(name, h); }
  static void make_consistent(Hyperparameters& h) { h.nesterov = h.nesterov && h.momentum > 0.0f && h.dampening == 0.0f; }
  static void host_scalars(const StepContext&, StepScalars&) {}
  BP_HD static void element(const StepScalars& s, ElementValues& e) {
    const float g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    // The first step starts the buffer at the gradient (no dampening), as torch.optim.SGD does.
    // Without momentum the buffer is computed and dropped: selects, not a branch, so that the
    // launchers' element loops vectorize.
    const float buffer = s.first_step != 0 ? g : s.momentum * e.s[0] + s.one_minus_dampening * g;
    const bool with_momentum = s.momentum != 0.0f;
    e.s[0] = with_momentum ? buffer : e.s[0];
    const float direction = with_momentum ? (s.nesterov != 0 ? g + s.momentum * buffer : buffer) : g;
    apply_update(s, e.p, s.lr * direction, e);
  }
};

}  // namespace bitparity::descriptors
