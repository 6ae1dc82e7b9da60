// Bad input to the optimizer entry points gets a typed error that names the problem, and loses
// nothing: the refused call writes no parameter and no state.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/optimizer8.hpp"

namespace bitparity {
namespace {

struct Refusal {
  ErrorCode code;
  std::string message;
};

Refusal refusal_of(auto&& call) {
  try {
    call();
  } catch (const Error& error) {
    return {error.code(), error.what()};
  }
  ADD_FAILURE() << "no error was raised";
  return {ErrorCode::invalid_argument, ""};
}

TensorView f32(std::vector<float>& v) { return contiguous_view(v.data(), DType::f32, Device::cpu(), {static_cast<std::int64_t>(v.size())}); }

TEST(OptimizerValidation, RefusalsNameTheProblemAndWriteNothing) {
  std::vector<float> p(8, 1.0f), g(8, 0.5f), m(8, 0.25f), v(8, 0.125f), shorter(7, 0.0f);
  const std::vector<float> p_before = p, m_before = m;
  Hyperparameters h;
  auto adam = [&](std::vector<TensorView> states) { optimizer_step(OptimizerKind::adam, h, f32(p), f32(g), states); };

  auto r = refusal_of([&] { adam({f32(m)}); });
  EXPECT_EQ(r.code, ErrorCode::invalid_argument);
  EXPECT_NE(r.message.find("needs 2 state tensors"), std::string::npos) << r.message;

  r = refusal_of([&] { adam({f32(m), f32(shorter)}); });
  EXPECT_NE(r.message.find("state 1 (exp_avg_sq) sizes differ"), std::string::npos) << r.message;

  r = refusal_of([&] { adam({f32(m), f32(m)}); });
  EXPECT_EQ(r.code, ErrorCode::overlapping_output);

  r = refusal_of([&] { optimizer_step(OptimizerKind::adam, h, f32(p), f32(p), {f32(m), f32(v)}); });
  EXPECT_EQ(r.code, ErrorCode::overlapping_output);

  TensorView on_gpu = f32(v);
  on_gpu.device = Device::cuda(0);
  r = refusal_of([&] { adam({f32(m), on_gpu}); });
  EXPECT_EQ(r.code, ErrorCode::device_mismatch);
  EXPECT_NE(r.message.find("move the state to cpu"), std::string::npos) << r.message;

  Hyperparameters bad = h;
  bad.beta1 = 1.0f;
  r = refusal_of([&] { optimizer_step(OptimizerKind::adam, bad, f32(p), f32(g), {f32(m), f32(v)}); });
  EXPECT_NE(r.message.find("beta1 must be in [0, 1)"), std::string::npos) << r.message;

  bad = h;
  bad.step = 0;
  r = refusal_of([&] { optimizer_step(OptimizerKind::adam, bad, f32(p), f32(g), {f32(m), f32(v)}); });
  EXPECT_NE(r.message.find("step must be >= 1"), std::string::npos) << r.message;

  bad = h;
  bad.nesterov = true;
  r = refusal_of([&] { optimizer_step(OptimizerKind::sgd, bad, f32(p), f32(g), {f32(m)}); });
  EXPECT_NE(r.message.find("nesterov needs momentum > 0"), std::string::npos) << r.message;

  bad = h;
  bad.max_unorm = 1.0f;
  r = refusal_of([&] { optimizer_step(OptimizerKind::lamb, bad, f32(p), f32(g), {f32(m), f32(v)}); });
  EXPECT_NE(r.message.find("max_unorm does not apply"), std::string::npos) << r.message;

  EXPECT_EQ(p, p_before);
  EXPECT_EQ(m, m_before);
}

TEST(OptimizerValidation, EightBitRefusals) {
  std::vector<float> p(300, 1.0f), g(300, 0.5f), absmax(2, 0.0f);
  std::vector<std::uint8_t> codes(300, 0);
  const QuantizedState state{contiguous_view(codes.data(), DType::u8, Device::cpu(), {300}),
                             contiguous_view(absmax.data(), DType::f32, Device::cpu(), {2})};
  Hyperparameters h;
  auto r = refusal_of([&] { optimizer8_step(OptimizerKind::sgd, h, f32(p), f32(g), {state}, 100); });
  EXPECT_NE(r.message.find("block size 100 is not supported"), std::string::npos) << r.message;
  r = refusal_of([&] { optimizer8_step(OptimizerKind::sgd, h, f32(p), f32(g), {state}, 64); });
  EXPECT_NE(r.message.find("absmax must be a contiguous buffer of 5 values"), std::string::npos) << r.message;
  r = refusal_of([&] { optimizer8_step(OptimizerKind::lars, h, f32(p), f32(g), {state}, 256); });
  EXPECT_NE(r.message.find("no 8-bit variant"), std::string::npos) << r.message;
}

// The states' checks name the state only when they refuse (validate_output_named_by): the name is
// still the state's, in full, on each of those refusals.
TEST(OptimizerValidation, StateRefusalsNameTheState) {
  std::vector<float> p(256, 1.0f), g(256, 0.5f), m(256, 0.0f), v(256, 0.0f), absmax(1, 0.0f), absmax2(1, 0.0f);
  std::vector<std::uint8_t> codes(256, 0), codes2(256, 0);
  Hyperparameters h;
  TensorView repeated = f32(v);
  repeated.index.strides[0] = 0;  // every element of the state on one storage element
  auto r = refusal_of([&] { optimizer_step(OptimizerKind::adam, h, f32(p), f32(g), {f32(m), repeated}); });
  EXPECT_EQ(r.code, ErrorCode::overlapping_output);
  EXPECT_NE(r.message.find("adam state 1 (exp_avg_sq) writes some storage elements more than once"), std::string::npos)
      << r.message;

  const QuantizedState first{contiguous_view(codes.data(), DType::u8, Device::cpu(), {256}),
                             contiguous_view(absmax.data(), DType::f32, Device::cpu(), {1})};
  QuantizedState second{contiguous_view(codes2.data(), DType::u8, Device::cpu(), {256}),
                        contiguous_view(absmax2.data(), DType::f32, Device::cpu(), {1})};
  second.codes.storage_elements = 255;  // one byte short
  r = refusal_of([&] { optimizer8_step(OptimizerKind::adam, h, f32(p), f32(g), {first, second}, 256); });
  EXPECT_EQ(r.code, ErrorCode::out_of_bounds);
  EXPECT_NE(r.message.find("adam (8-bit) state 1 (exp_avg_sq) reaches storage element 255"), std::string::npos)
      << r.message;
}

}  // namespace
}  // namespace bitparity
