// Proof that the properties can fail: every catalogued mutant is killed within 30 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/fixtures/optim_mutants.hpp"
#include "bitparity/properties/mutant_hunt.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::fixtures {
inline void PrintTo(const MutantInfo& mutant, std::ostream* os) { *os << mutant.name; }
}  // namespace bitparity::fixtures

namespace bitparity::properties {
namespace {

class Mutant : public ::testing::TestWithParam<fixtures::MutantInfo> {};

TEST_P(Mutant, IsKilledWithinThirtySeconds) {
  const HuntResult hunt = hunt_mutant(GetParam(), 30.0, 7);
  EXPECT_FALSE(hunt.harness_error) << GetParam().name << " failed " << hunt.property << " on " << hunt.target
                                   << ", a target it does not alter:\n" << hunt.counterexample;
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

// The 8-bit mutants share a host loop: with nothing broken it must pass every 8-bit property on
// every optimizer, so that a failure of a mutant means its own bug (the rmsprop NaN-absmax case).
TEST(MutantHarness, UntwistedEightBitHostLoopEqualsTheKernel) {
  const auto loop = fixtures::untwisted_optimizer8_host_loop();
  const auto cpu = fixtures::make_implementation("cpu");
  int ran = 0;
  for (const auto& property : property_catalogue()) {
    if (property.suite != fixtures::Suite::optim8) continue;
    for (const auto& spec : suite_targets(fixtures::Suite::optim8)) {
      for (std::int64_t blocksize : {64, 256}) {
        RunOptions options;
        options.seed = 20261122 + static_cast<std::uint64_t>(blocksize);
        options.max_cases = 6;
        const RunResult result = run_property(property, make_target(property, spec, loop.get(), cpu.get(), blocksize), options);
        EXPECT_TRUE(result.passed) << property.id << " " << spec.label() << " blocksize " << blocksize << ":\n"
                                   << result.counterexample;
        // A passing run must have run something: not "not applicable", not every case discarded.
        EXPECT_FALSE(result.not_applicable) << property.id << " " << spec.label() << ": " << result.not_applicable_reason;
        EXPECT_GT(result.stats.cases, 0) << property.id << " " << spec.label() << " blocksize " << blocksize << " ran no case";
        ran += result.stats.cases > 0 ? 1 : 0;
      }
    }
  }
  EXPECT_GT(ran, 0);
}

// Every property must be shown to fail: each kills the mutant the catalogue assigns to it, alone.
class PropertyKillsItsMutant : public ::testing::TestWithParam<std::string> {};

TEST_P(PropertyKillsItsMutant, Alone) {
  int assigned = 0;
  for (const auto& mutant : fixtures::mutant_catalogue()) {
    if (mutant.killer != GetParam()) continue;
    ++assigned;
    const HuntResult hunt = hunt_mutant(mutant, 30.0, 11, GetParam());
    EXPECT_TRUE(hunt.killed) << GetParam() << " did not kill " << mutant.name << " in " << hunt.seconds << " s";
  }
  EXPECT_GT(assigned, 0) << "property " << GetParam() << " has no mutant in the catalogue that it must kill";
}

std::vector<std::string> property_ids() {
  std::vector<std::string> ids;
  for (const auto& property : property_catalogue()) ids.push_back(property.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, PropertyKillsItsMutant, ::testing::ValuesIn(property_ids()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace bitparity::properties
