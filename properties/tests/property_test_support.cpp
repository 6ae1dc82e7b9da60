#include "property_test_support.hpp"

#include <algorithm>

#include "bitparity/fixtures/implementation.hpp"

namespace bitparity::properties::testing {

std::string PropertyCase::name() const {
  std::string label = property->id + "_" + property->name + "_" + spec.label();
  std::replace_if(label.begin(), label.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return label;
}

void run_case(const PropertyCase& c, const std::string& iut_name, int cases_per_block_size, std::uint64_t seed) {
  const auto iut = fixtures::make_implementation(iut_name);
  const auto baseline = fixtures::make_implementation("cpu");
  const std::vector<std::int64_t> block_sizes = c.spec.block_sizes();
  // A block size the implementation does not take is passed over, not the block sizes after it.
  std::string not_applicable;
  int applicable = 0;
  for (std::int64_t blocksize : block_sizes) {
    const PropertyTarget target = make_target(*c.property, c.spec, iut.get(), baseline.get(), blocksize);
    RunOptions options;
    options.seed = seed + static_cast<std::uint64_t>(blocksize);
    options.max_cases = cases_per_block_size;
    const RunResult result = run_property(*c.property, target, options);
    if (result.not_applicable) {
      not_applicable = result.not_applicable_reason;
      continue;
    }
    ++applicable;
    ASSERT_TRUE(result.passed) << c.property->id << " " << c.property->claim << "\n" << c.spec.label()
                               << " blocksize " << blocksize << " on " << iut_name << ":\n" << result.counterexample;
    EXPECT_FALSE(result.stats.incomplete);
    EXPECT_GT(result.stats.cases, 0) << "every case was discarded";
  }
  if (applicable == 0) GTEST_SKIP() << not_applicable;
}

}  // namespace bitparity::properties::testing
