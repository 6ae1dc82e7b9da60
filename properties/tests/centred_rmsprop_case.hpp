#pragma once
// The centred-RMSprop 8-bit case P5q found on an H100 (regression_tests and regression_gpu_tests):
// every grad_avg code at the top of the signed map with absmax 0.01, every square_avg code at the
// top of the unsigned map with absmax 1e-6 (dequantized square_avg < grad_avg^2), on a 191-element
// tensor of three blocks of 64.
#include <cstdint>
#include <cstring>
#include <vector>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/quantize.hpp"

namespace bitparity {

inline Hyperparameters centred_rmsprop() {
  Hyperparameters h = typical_hyperparameters(OptimizerKind::rmsprop);
  h.step = 10;
  h.lr = 0x1.0624dep-10f;
  h.eps = 1e-8f;
  h.smoothing = 0.99f;
  h.momentum = 0.9f;
  h.centered = true;
  return h;
}

struct Step8Outcome {
  std::vector<float> param;
  std::vector<std::vector<std::uint8_t>> codes;  // as stored: read_logical reads values, not u8 codes
  std::vector<std::vector<float>> absmax;
};

inline Step8Outcome centred_rmsprop_8bit_step(fixtures::Implementation& implementation) {
  const Hyperparameters h = centred_rmsprop();
  constexpr std::int64_t n = 191, blocksize = 64, blocks = (n + blocksize - 1) / blocksize;
  auto param = fixtures::HostTensor::contiguous(DType::f32, {n});
  auto grad = fixtures::HostTensor::contiguous(DType::bf16, {n});
  fixtures::write_logical(param.view(), std::vector<float>(n, 0.25f));
  fixtures::write_logical(grad.view(), std::vector<float>(n, 0x1p-10f));
  std::vector<fixtures::HostTensor> codes, absmax;
  std::vector<QuantizedState> states;
  const float scale[3] = {1e-6f, 1e-2f, 1e-3f};
  for (int k = 0; k < 3; ++k) {
    const CodeTable& table = code_table(state8_format(OptimizerKind::rmsprop, k));
    codes.push_back(fixtures::HostTensor::contiguous(DType::u8, {n}, table.sorted_codes[table.sorted_count - 1]));
    absmax.push_back(fixtures::HostTensor::contiguous(DType::f32, {blocks}));
    fixtures::write_logical(absmax.back().view(), std::vector<float>(blocks, scale[k]));
  }
  for (int k = 0; k < 3; ++k) states.push_back({codes[k].view(), absmax[k].view()});
  implementation.optimizer8_step(OptimizerKind::rmsprop, h, param.view(), grad.view(), states, blocksize, {});
  Step8Outcome out{fixtures::read_logical(param.view()), {}, {}};
  for (int k = 0; k < 3; ++k) {
    out.codes.push_back(codes[k].bytes());
    out.absmax.push_back(fixtures::read_logical(absmax[k].view()));
  }
  return out;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace bitparity
