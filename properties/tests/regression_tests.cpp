// Counterexamples found by the properties, kept as fixed cases (hexfloat inputs): each must stay
// within its derived bound on every implementation that ran it.
#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "bitparity/reference/optim_reference.hpp"

namespace bitparity {
namespace {

// One element of a 32-bit step on the CPU implementation, judged by the reference.
reference::ElementVerdict one_element_step(OptimizerKind kind, const Hyperparameters& h, float p, DType grad_dtype,
                                           float g) {
  auto param = fixtures::HostTensor::contiguous(DType::f32, {1, 1});
  auto grad = fixtures::HostTensor::contiguous(grad_dtype, {1, 1});
  std::vector<fixtures::HostTensor> state_storage;
  std::vector<TensorView> states;
  for (int k = 0; k < optimizer_info(kind).states; ++k) {
    state_storage.push_back(fixtures::HostTensor::contiguous(DType::f32, {1, 1}));
  }
  for (auto& s : state_storage) states.push_back(s.view());
  const float p_in[] = {p}, g_in[] = {g};
  fixtures::write_logical(param.view(), p_in);
  fixtures::write_logical(grad.view(), g_in);
  EXPECT_EQ(fixtures::read_logical(grad.view())[0], g) << "the gradient is not exact in its dtype";
  fixtures::CpuImplementation cpu;
  const StepReport report = cpu.optimizer_step(kind, h, param.view(), grad.view(), states, {});
  EXPECT_FALSE(report.nonfinite_gradient);
  reference::OptimInput in;
  in.p = p;
  in.g = g;
  reference::OptimOutput out;
  out.p = fixtures::read_logical(param.view())[0];
  for (std::size_t k = 0; k < states.size(); ++k) out.s[k] = fixtures::read_logical(states[k])[0];
  EXPECT_TRUE(std::isfinite(out.p)) << "a finite input gave the parameter " << out.p;
  return reference::OptimReference(kind, h, DType::f32).check_all({in}, {out})[0];
}

// LARS with a subnormal gradient norm: the local lr eta*||p||/||g|| (about 2^140) is past FLT_MAX.
// Rounding it to fp32 gave inf and a parameter of -inf; the exact value is -0x1.43c26b187ec6ep-1.
TEST(Regression, LarsLocalLrBeyondFloatRange) {
  Hyperparameters h;
  h.step = 3;
  h.lr = 0x1.99999ap-4f;
  h.trust_coefficient = 0.02f;
  h.weight_decay = 0.0f;
  h.momentum = 0.0f;
  h.grad_scale = 65536.0f;
  const reference::ElementVerdict verdict = one_element_step(OptimizerKind::lars, h, -0x1.431cfcp-1f, DType::bf16, 0x1.ap-130f);
  EXPECT_TRUE(verdict.ok) << verdict.detail;
}

// The same for LAMB without trust clipping: a huge eps makes ||u|| about 2^-100 and ||p|| is 2^100,
// so lr * ||p|| / ||u|| is about 2^190.
TEST(Regression, LambTrustRatioBeyondFloatRange) {
  Hyperparameters h;
  h.step = 1;
  h.lr = 0x1p-10f;
  h.max_trust_ratio = 0.0f;
  h.eps = 0x1p+100f;
  const reference::ElementVerdict verdict = one_element_step(OptimizerKind::lamb, h, 0x1p+100f, DType::f32, 1.0f);
  EXPECT_TRUE(verdict.ok) << verdict.detail;
}

// Centred RMSprop whose states break square_avg >= grad_avg^2 (as fp32 rounding can, and as
// independently quantized 8-bit states do): torch's variance goes below zero and the parameter
// becomes NaN. The variance is clamped at zero (ARITHMETIC.md), and the reference agrees.
Hyperparameters centred_rmsprop() {
  Hyperparameters h = typical_hyperparameters(OptimizerKind::rmsprop);
  h.step = 10;
  h.lr = 0x1.0624dep-10f;
  h.eps = 1e-8f;
  h.smoothing = 0.99f;
  h.momentum = 0.9f;
  h.centered = true;
  return h;
}

TEST(Regression, CentredRmspropVarianceBelowZeroIsClamped) {
  const Hyperparameters h = centred_rmsprop();
  auto param = fixtures::HostTensor::contiguous(DType::f32, {1});
  auto grad = fixtures::HostTensor::contiguous(DType::f32, {1});
  std::vector<fixtures::HostTensor> storage;
  for (int k = 0; k < 3; ++k) storage.push_back(fixtures::HostTensor::contiguous(DType::f32, {1}));
  std::vector<TensorView> states;
  for (auto& t : storage) states.push_back(t.view());
  const float p = 0.5f, g = 1e-3f, square_avg = 1e-6f, grad_avg = 1e-2f, buffer = 0.0f;
  fixtures::write_logical(param.view(), std::vector<float>{p});
  fixtures::write_logical(grad.view(), std::vector<float>{g});
  fixtures::write_logical(states[0], std::vector<float>{square_avg});
  fixtures::write_logical(states[1], std::vector<float>{grad_avg});
  fixtures::write_logical(states[2], std::vector<float>{buffer});
  fixtures::CpuImplementation cpu;
  cpu.optimizer_step(OptimizerKind::rmsprop, h, param.view(), grad.view(), states, {});
  reference::OptimInput in;
  in.p = p;
  in.g = g;
  in.s[0] = square_avg;
  in.s[1] = grad_avg;
  in.s[2] = buffer;
  reference::OptimOutput out;
  out.p = fixtures::read_logical(param.view())[0];
  for (int k = 0; k < 3; ++k) out.s[k] = fixtures::read_logical(states[k])[0];
  EXPECT_TRUE(std::isfinite(out.p)) << "the parameter became " << out.p;
  const auto verdict = reference::OptimReference(OptimizerKind::rmsprop, h, DType::f32).check_all({in}, {out})[0];
  EXPECT_TRUE(verdict.ok) << verdict.detail;
}

// The 8-bit form, as P5q found it on an H100: every grad_avg code at the top of the signed map with
// absmax 0.01, every square_avg code at the top of the unsigned map with absmax 1e-6 (dequantized
// square_avg < grad_avg^2). Each parameter must stay finite, on every block of a 191-element tensor.
TEST(Regression, CentredRmspropEightBitStatesStayFinite) {
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
  fixtures::CpuImplementation cpu;
  cpu.optimizer8_step(OptimizerKind::rmsprop, h, param.view(), grad.view(), states, blocksize, {});
  const std::vector<float> after = fixtures::read_logical(param.view());
  for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isfinite(after[i])) << "element " << i << ": " << after[i];
}

}  // namespace
}  // namespace bitparity
