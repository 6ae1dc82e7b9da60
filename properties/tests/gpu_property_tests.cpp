// Every property on every CUDA device, and P5 (device parity with the CPU). Skipped without a GPU.
#include "bitparity/fixtures/gtest_environment.hpp"
#include "property_test_support.hpp"

namespace bitparity::properties::testing {
namespace {

class GpuProperty : public ::testing::TestWithParam<PropertyCase> {};

TEST_P(GpuProperty, HoldsOnEveryCudaDevice) {
  BITPARITY_REQUIRE_CUDA();
  for (const auto& device : fixtures::DeviceEnvironment::cuda_devices()) run_case(GetParam(), device, 12, 20261123);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, GpuProperty, ::testing::ValuesIn(catalogue_cases([](const PropertyDef&) { return true; })),
                         [](const auto& info) { return info.param.name(); });

}  // namespace
}  // namespace bitparity::properties::testing
