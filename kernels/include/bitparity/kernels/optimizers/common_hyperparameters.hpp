#pragma once
// Hyperparameter descriptions several optimizers share (each descriptor lists the ones it reads).
#include "bitparity/kernels/optimizer_types.hpp"

namespace bitparity::descriptors {

inline constexpr HyperparameterSpec kLr =
    hyperparameter<&Hyperparameters::lr>("lr", ValueRange::nonnegative, {1e-3, 1e-3, 1e-5, 0.1, 1.0}, 1e-3, true);
inline constexpr HyperparameterSpec kBeta1 =
    hyperparameter<&Hyperparameters::beta1>("beta1", ValueRange::unit_interval, {0.9, 0.9, 0.0, 0.5, 0.99, 0.999999}, 0.9);
inline constexpr HyperparameterSpec kBeta2 = hyperparameter<&Hyperparameters::beta2>(
    "beta2", ValueRange::unit_interval, {0.999, 0.999, 0.0, 0.9, 0.9999, 0.99999994}, 0.999);
inline constexpr HyperparameterSpec kEps =
    hyperparameter<&Hyperparameters::eps>("eps", ValueRange::nonnegative, {1e-8, 1e-8, 1e-6, 1e-12, 1e-3}, 1e-8);

constexpr HyperparameterSpec weight_decay(double typical) {
  return hyperparameter<&Hyperparameters::weight_decay>("weight_decay", ValueRange::nonnegative, {0.0, 0.0, 0.01, 0.1},
                                                        typical);
}

// LAMB and LARS: per-tensor exclusions (biases, norms), drawn in one case of five.
inline constexpr HyperparameterSpec kExcludeFromAdaptation = hyperparameter<&Hyperparameters::exclude_from_adaptation>(
    "exclude_from_adaptation", ValueRange::flag, {0, 0, 0, 0, 1}, 0);
inline constexpr HyperparameterSpec kExcludeFromWeightDecay = hyperparameter<&Hyperparameters::exclude_from_weight_decay>(
    "exclude_from_weight_decay", ValueRange::flag, {0, 0, 0, 0, 1}, 0);

// lr / (1 - beta1^t), rounded once: Adam's step size.
inline float adam_step_size(const Hyperparameters& h, double bias_correction1) {
  return static_cast<float>(static_cast<double>(h.lr) / bias_correction1);
}

}  // namespace bitparity::descriptors
