// The exhaustive sweeps of the catalogue (P12) on the CPU implementation: labelled slow.
#include "property_test_support.hpp"

namespace bitparity::properties::testing {
namespace {

class ExhaustiveProperty : public ::testing::TestWithParam<PropertyCase> {};

TEST_P(ExhaustiveProperty, Holds) { run_case(GetParam(), "cpu", 12, 20261122); }

INSTANTIATE_TEST_SUITE_P(Catalogue, ExhaustiveProperty,
                         ::testing::ValuesIn(catalogue_cases([](const PropertyDef& p) { return !p.needs_baseline && p.exhaustive; })),
                         [](const auto& info) { return info.param.name(); });

}  // namespace
}  // namespace bitparity::properties::testing
