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
#include "centred_rmsprop_case.hpp"

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

// The 8-bit form: each parameter must stay finite, on every block (centred_rmsprop_case.hpp; the GPUs
// are compared with it bit for bit in regression_gpu_tests).
TEST(Regression, CentredRmspropEightBitStatesStayFinite) {
  fixtures::CpuImplementation cpu;
  const Step8Outcome on_cpu = centred_rmsprop_8bit_step(cpu);
  for (std::size_t i = 0; i < on_cpu.param.size(); ++i) {
    ASSERT_TRUE(std::isfinite(on_cpu.param[i])) << "cpu: element " << i << ": " << on_cpu.param[i];
  }
}

}  // namespace
}  // namespace bitparity
