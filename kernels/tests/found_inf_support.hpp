#pragma once
// Shared by the found-inf tests: one step of every optimizer on host buffers, with the step's own
// pre-scan or with a caller's found-inf flag, so that the two can be compared bit for bit.
#include <cstdint>
#include <cstring>
#include <vector>

#include "bitparity/kernels/optimizer.hpp"

namespace bitparity::found_inf_test {

inline constexpr std::int64_t kElements = 301;

// Parameter, gradient and states of one step, as host bytes (f32 throughout).
struct HostStep {
  std::vector<float> param, grad;
  std::vector<std::vector<float>> states;
};

inline HostStep finite_step(OptimizerKind kind) {
  HostStep s;
  for (std::int64_t i = 0; i < kElements; ++i) {
    s.param.push_back(0.5f - 0.003f * static_cast<float>(i % 97));
    s.grad.push_back(0.01f * static_cast<float>((i * 37) % 23) - 0.1f);
  }
  for (int k = 0; k < optimizer_info(kind).states; ++k) {
    std::vector<float> state;
    for (std::int64_t i = 0; i < kElements; ++i) state.push_back(1e-3f * static_cast<float>((i + k) % 11));
    s.states.push_back(state);
  }
  return s;
}

inline Hyperparameters step_hyperparameters(OptimizerKind kind) {
  Hyperparameters h = typical_hyperparameters(kind);
  h.step = 3;
  h.lr = 1e-2f;
  return h;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace bitparity::found_inf_test
