// Every random property of the catalogue on the CPU implementation, over the whole registry (the
// exhaustive sweeps run in exhaustive_property_tests, labelled slow).
#include "property_test_support.hpp"

namespace bitparity::properties::testing {
namespace {

class CpuProperty : public ::testing::TestWithParam<PropertyCase> {};

TEST_P(CpuProperty, Holds) { run_case(GetParam(), "cpu", 12, 20261122); }

INSTANTIATE_TEST_SUITE_P(Catalogue, CpuProperty,
                         ::testing::ValuesIn(catalogue_cases([](const PropertyDef& p) { return !p.needs_baseline && !p.exhaustive; })),
                         [](const auto& info) { return info.param.name(); });

}  // namespace
}  // namespace bitparity::properties::testing
