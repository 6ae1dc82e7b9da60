// The GPUs on the centred-RMSprop 8-bit case P5q found on an H100 (centred_rmsprop_case.hpp): the
// parameters, codes and absmax of every device are the CPU's bit for bit, and finite.
#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/fixtures/gtest_environment.hpp"
#include "centred_rmsprop_case.hpp"

namespace bitparity {
namespace {

TEST(RegressionGpu, CentredRmspropEightBitStepIsTheCpusOnEveryDevice) {
  BITPARITY_REQUIRE_CUDA();
  fixtures::CpuImplementation cpu;
  const Step8Outcome on_cpu = centred_rmsprop_8bit_step(cpu);
  for (const auto& device : fixtures::DeviceEnvironment::cuda_devices()) {
    const auto implementation = fixtures::make_implementation(device);
    const Step8Outcome on_device = centred_rmsprop_8bit_step(*implementation);
    for (std::size_t i = 0; i < on_device.param.size(); ++i) {
      ASSERT_TRUE(std::isfinite(on_device.param[i])) << device << ": element " << i << ": " << on_device.param[i];
    }
    EXPECT_TRUE(same_bits(on_device.param, on_cpu.param)) << device << ": the parameters differ from the cpu's";
    for (int k = 0; k < 3; ++k) {
      EXPECT_TRUE(same_bits(on_device.codes[k], on_cpu.codes[k])) << device << ": state " << k << " codes differ";
      EXPECT_TRUE(same_bits(on_device.absmax[k], on_cpu.absmax[k])) << device << ": state " << k << " absmax differs";
    }
  }
}

}  // namespace
}  // namespace bitparity
