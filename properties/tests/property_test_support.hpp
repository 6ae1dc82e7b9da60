#pragma once
// Parameterised gtest cases generated from the property catalogue and the registry: adding a
// format or a property adds its tests with no new test code.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bitparity/properties/planner.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties::testing {

struct PropertyCase {
  const PropertyDef* property;
  TargetSpec spec;
  std::string name() const;
};

// Every (property, target) of the catalogue, filtered by `wanted`.
template <class Wanted>
std::vector<PropertyCase> catalogue_cases(Wanted wanted) {
  std::vector<PropertyCase> cases;
  for (const PlannedCase& planned : plan_cases({})) {
    if (wanted(*planned.property)) cases.push_back({planned.property, planned.spec});
  }
  return cases;
}

// Runs the case over every block size of its format on `iut`; fails with the counterexample.
void run_case(const PropertyCase& c, const std::string& iut, int cases_per_block_size, std::uint64_t seed);

}  // namespace bitparity::properties::testing

namespace bitparity::properties::testing {
inline void PrintTo(const PropertyCase& c, std::ostream* os) { *os << c.name(); }
}  // namespace bitparity::properties::testing
