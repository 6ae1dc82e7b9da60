// The step with a caller's found-inf flag (torch's fused-step contract) on the CPU: a zero flag gives
// the bits of the scanning step, a nonzero one writes nothing, a null one is refused.
#include <gtest/gtest.h>

#include "bitparity/kernels/errors.hpp"
#include "found_inf_support.hpp"

namespace bitparity::found_inf_test {
namespace {

TensorView view_of(std::vector<float>& v) {
  return contiguous_view(v.data(), DType::f32, Device::cpu(), {static_cast<std::int64_t>(v.size())});
}

StepReport run(OptimizerKind kind, HostStep& s, const float* flag) {
  std::vector<TensorView> states;
  for (auto& state : s.states) states.push_back(view_of(state));
  const Hyperparameters h = step_hyperparameters(kind);
  if (flag == nullptr) return optimizer_step(kind, h, view_of(s.param), view_of(s.grad), states);
  return optimizer_step(kind, h, view_of(s.param), view_of(s.grad), states, FoundInf{flag});
}

TEST(FoundInf, ZeroFlagGivesTheScanningStepsBits) {
  for (const auto& info : optimizers()) {
    HostStep scanned = finite_step(info.kind), flagged = finite_step(info.kind);
    const float zero = 0.0f;
    EXPECT_FALSE(run(info.kind, scanned, nullptr).nonfinite_gradient);
    EXPECT_FALSE(run(info.kind, flagged, &zero).nonfinite_gradient) << info.name;
    EXPECT_TRUE(same_bits(scanned.param, flagged.param)) << info.name << ": parameters differ";
    for (std::size_t k = 0; k < scanned.states.size(); ++k) {
      EXPECT_TRUE(same_bits(scanned.states[k], flagged.states[k])) << info.name << ": state " << k << " differs";
    }
  }
}

TEST(FoundInf, NonzeroFlagWritesNothing) {
  for (const auto& info : optimizers()) {
    HostStep step = finite_step(info.kind);
    const HostStep before = step;
    const float one = 1.0f;
    EXPECT_TRUE(run(info.kind, step, &one).nonfinite_gradient) << info.name;
    EXPECT_TRUE(same_bits(before.param, step.param)) << info.name << ": a parameter was written";
    for (std::size_t k = 0; k < step.states.size(); ++k) EXPECT_TRUE(same_bits(before.states[k], step.states[k])) << info.name;
  }
}

TEST(FoundInf, NullFlagIsRefused) {
  HostStep step = finite_step(OptimizerKind::adamw);
  try {
    run(OptimizerKind::adamw, step, nullptr);  // the scanning step: fine
    std::vector<TensorView> states;
    for (auto& state : step.states) states.push_back(view_of(state));
    optimizer_step(OptimizerKind::adamw, step_hyperparameters(OptimizerKind::adamw), view_of(step.param),
                   view_of(step.grad), states, FoundInf{nullptr});
    FAIL() << "a null found_inf flag was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(error.what()).find("found_inf.flag is null"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace bitparity::found_inf_test
