// Proof that the properties can fail: every catalogued mutant is killed within 30 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/properties/mutant_hunt.hpp"

namespace bitparity::properties {
namespace {

class Mutant : public ::testing::TestWithParam<fixtures::MutantInfo> {};

TEST_P(Mutant, IsKilledWithinThirtySeconds) {
  const HuntResult hunt = hunt_mutant(GetParam(), 30.0, 7);
  EXPECT_TRUE(hunt.killed) << GetParam().name << " (" << GetParam().description << ") survived " << hunt.seconds << " s";
  EXPECT_LT(hunt.seconds, 30.0);
  std::printf("%s killed by %s in %.3f s on %s\n", hunt.mutant.c_str(), hunt.property.c_str(), hunt.seconds,
              hunt.target.c_str());
}

INSTANTIATE_TEST_SUITE_P(Catalogue, Mutant, ::testing::ValuesIn(fixtures::mutant_catalogue()),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace bitparity::properties
