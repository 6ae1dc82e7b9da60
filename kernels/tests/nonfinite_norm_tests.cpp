// A norm over values that hold an infinity or a NaN is that of the values as held: inf, or NaN.
// The exact sums used to drop such a term (its bit position lay past the top limb), so a LAMB or
// LARS step took its trust factor from the finite elements alone (mutant norm-drops-nonfinite-terms).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/exact_sum.hpp"
#include "bitparity/kernels/optimizer.hpp"

namespace bitparity {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ExactSquareSumNonFinite, AnInfinityMakesTheSumInfinite) {
  ExactSquareSum sum;
  sum.add_square(3.0f);
  sum.add_square(-kInf);
  sum.add_square(4.0f);
  EXPECT_EQ(sum.special, ExactSquareSum::kInfinity);
  EXPECT_EQ(sum.to_double(), std::numeric_limits<double>::infinity());
}

TEST(ExactSquareSumNonFinite, ANaNWinsOverAnInfinity) {
  ExactSquareSum with_nan, with_inf;
  with_nan.add_square(float_from_bits(0xFFC00001u));  // a negative NaN with a payload
  with_inf.add_square(kInf);
  with_inf.merge(with_nan);
  EXPECT_EQ(with_inf.special, ExactSquareSum::kInfinity | ExactSquareSum::kNaN);
  EXPECT_TRUE(std::isnan(with_inf.to_double()));
}

// A sum already rounded to fp32 (fault injection's) keeps its kind as a term's does, so a piece's
// overflowed sum merges into an infinite total, not a finite stand-in.
TEST(ExactSquareSumNonFinite, AnFp32SumIsAddedAsExactOrAsItsKind) {
  ExactSquareSum finite, infinite, nan;
  finite.add_fp32(0x1.8p-3f);
  EXPECT_EQ(finite.special, 0u);
  EXPECT_EQ(finite.to_double(), 0.1875);
  infinite.add_fp32(kInf);
  infinite.merge(finite);
  EXPECT_EQ(infinite.special, ExactSquareSum::kInfinity);
  EXPECT_EQ(infinite.to_double(), INFINITY);
  nan.add_fp32(NAN);
  EXPECT_EQ(nan.special, ExactSquareSum::kNaN);
  EXPECT_TRUE(std::isnan(nan.to_double()));
}

TEST(ExactSquareSumNonFinite, TheLargestFiniteSquareStaysFinite) {
  ExactSquareSum sum;
  sum.add_square(std::numeric_limits<float>::max());
  EXPECT_EQ(sum.special, 0u);
  EXPECT_EQ(sum.to_double(), static_cast<double>(std::numeric_limits<float>::max()) * std::numeric_limits<float>::max());
}

TEST(TrustFactorNonFinite, ANaNNormGivesANaNFactorNotOne) {
  for (const OptimizerKind kind : {OptimizerKind::lamb, OptimizerKind::lars}) {
    Hyperparameters h = typical_hyperparameters(kind);
    h.max_trust_ratio = 10.0f;  // clipping must not hide the NaN either
    for (const bool nan_in_param : {true, false}) {
      StepScalars s = step_scalars(kind, h);
      finish_trust_ratio(kind, h, nan_in_param ? NAN : 4.0, nan_in_param ? 9.0 : NAN, s);
      EXPECT_TRUE(std::isnan(s.trust_scaled_lr)) << optimizer_info(kind).name;
      EXPECT_EQ(s.trust_exponent, 0) << optimizer_info(kind).name;
    }
  }
}

TEST(TrustFactorNonFinite, AnInfiniteFactorIsKeptInfinite) {
  Hyperparameters h = typical_hyperparameters(OptimizerKind::lamb);
  h.max_trust_ratio = 0.0f;
  StepScalars s = step_scalars(OptimizerKind::lamb, h);
  finish_trust_ratio(OptimizerKind::lamb, h, INFINITY, 9.0, s);
  EXPECT_EQ(s.trust_scaled_lr, kInf);
  EXPECT_EQ(s.trust_exponent, 0);
}

// The whole step: one NaN parameter among 5000 (contiguous, so the CPU's binned norm pass runs)
// makes every parameter NaN; the same tensor without it stays finite.
TEST(NormBasedStepNonFinite, ANaNParameterReachesEveryElement) {
  for (const OptimizerKind kind : {OptimizerKind::lamb, OptimizerKind::lars}) {
    for (const bool planted : {false, true}) {
      const std::int64_t n = 5000;
      std::vector<float> param(n), grad(n);
      std::vector<std::vector<float>> states(optimizer_info(kind).states, std::vector<float>(n, 0.0f));
      for (std::int64_t i = 0; i < n; ++i) {
        param[i] = 0.5f + 1e-4f * static_cast<float>(i % 97);
        grad[i] = 1e-3f * static_cast<float>(i % 31) - 0.01f;
      }
      if (planted) param[4321] = kNaN;
      std::vector<TensorView> state_views;
      for (auto& state : states) state_views.push_back(contiguous_view(state.data(), DType::f32, Device::cpu(), {n}));
      optimizer_step(kind, typical_hyperparameters(kind), contiguous_view(param.data(), DType::f32, Device::cpu(), {n}),
                     contiguous_view(grad.data(), DType::f32, Device::cpu(), {n}), state_views);
      std::int64_t nan_count = 0;
      for (float p : param) nan_count += std::isnan(p) ? 1 : 0;
      EXPECT_EQ(nan_count, planted ? n : 0) << optimizer_info(kind).name;
    }
  }
}

}  // namespace
}  // namespace bitparity
