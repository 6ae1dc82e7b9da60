#include <gtest/gtest.h>

#include <vector>

#include "bitparity/kernels/optimizer_state.hpp"

namespace bitparity {
namespace {

TEST(OptimizerState, SmallTensorsKeepFp32StatesAndSayWhichPathTheyTook) {
  OptimizerState small(OptimizerKind::adam, 100, Device::cpu());
  OptimizerState large(OptimizerKind::adam, 8192, Device::cpu());
  OptimizerState forced(OptimizerKind::adam, 100, Device::cpu(), {true, 64, 0});
  EXPECT_EQ(small.path(), StatePath::fp32);
  EXPECT_EQ(large.path(), StatePath::eight_bit);
  EXPECT_EQ(forced.path(), StatePath::eight_bit);
  EXPECT_EQ(small.bytes(), 2 * 4 * 100);
  EXPECT_EQ(large.bytes(), 2 * (8192 + 4 * 32));  // codes plus one absmax per 256-element block
  OptimizerState lamb(OptimizerKind::lamb, 8192, Device::cpu());
  EXPECT_EQ(lamb.path(), StatePath::fp32);  // LAMB has no 8-bit variant
}

TEST(OptimizerState, EightBitStateStepsFromZero) {
  OptimizerState state(OptimizerKind::adam, 300, Device::cpu(), {true, 64, 0});
  OptimizerState fp32(OptimizerKind::adam, 300, Device::cpu(), {false, 64, 0});
  ASSERT_EQ(state.path(), StatePath::eight_bit);
  ASSERT_EQ(fp32.path(), StatePath::fp32);
  std::vector<float> param(300, 1.0f), param_fp32(300, 1.0f), grad(300, 0.5f);
  Hyperparameters hyper;
  hyper.lr = 0.1f;
  ASSERT_FALSE(state.step(hyper, contiguous_view(param.data(), DType::f32, Device::cpu(), {300}),
                          contiguous_view(grad.data(), DType::f32, Device::cpu(), {300})));
  ASSERT_FALSE(fp32.step(hyper, contiguous_view(param_fp32.data(), DType::f32, Device::cpu(), {300}),
                         contiguous_view(grad.data(), DType::f32, Device::cpu(), {300})));
  // From zero states the old codes dequantize to exactly 0, so step 1 is the fp32 step's bit for
  // bit (which the properties judge against the exact reference), and it moved every element.
  for (std::size_t i = 0; i < param.size(); ++i) {
    ASSERT_EQ(param[i], param_fp32[i]) << "element " << i;
    ASSERT_NE(param[i], 1.0f) << "element " << i;
  }
}

TEST(OptimizerState, MemoryPerParameter) {
  EXPECT_DOUBLE_EQ(state_bytes_per_element_32bit(OptimizerKind::adam), 8.0);
  EXPECT_DOUBLE_EQ(state_bytes_per_element_8bit(OptimizerKind::adam, 256), 2.0 * (1.0 + 4.0 / 256));
}

}  // namespace
}  // namespace bitparity
