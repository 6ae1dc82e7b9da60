#pragma once
// AdamW (decoupled weight decay), torch.optim.AdamW.
#include "bitparity/kernels/optimizers/adam.hpp"

namespace bitparity::descriptors {

struct AdamW {
  static constexpr std::string_view name = "adamw";
  static constexpr std::string_view summary = "AdamW (decoupled weight decay), torch.optim.AdamW";
  static constexpr StateSpec states[] = {{"exp_avg", StateRole::momentum}, {"exp_avg_sq", StateRole::second_moment}};
  static constexpr HyperparameterSpec hyperparameters[] = {kLr, kBeta1, kBeta2, kEps, weight_decay(0.01)};
  static constexpr bool norm_based = false;
  static void host_scalars(const StepContext& c, StepScalars& s) { s.step_size = adam_step_size(c.h, c.bias_correction1); }
  BP_HD static void element(const StepScalars& s, ElementValues& e) { adam_element(s, true, e); }
};

}  // namespace bitparity::descriptors
