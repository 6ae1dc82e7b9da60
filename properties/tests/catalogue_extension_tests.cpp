// A folder outside properties/ and fixtures/ (distributed/, a library's adapters) adds properties
// and mutants by registering them at start: the planner, the runner and the mutant catalogue see
// them, and a registration after the catalogue was read is refused. Each test is its own process
// (gtest_discover_tests), so each starts with unread catalogues.
#include <gtest/gtest.h>

#include <algorithm>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/planner.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {
namespace {

int extension_runs = 0;

// Asks only that the runner gave it a real target (a format and an implementation), and counts its runs.
void registered_property(const PropertyTarget& t, PropertyStats& stats) {
  ++extension_runs;
  if (t.format == nullptr || t.iut == nullptr) report_violation(stats, 1, "the runner gave no format or implementation");
  stats.pass_case(0);
}

TEST(CatalogueExtension, RegisteredPropertyIsPlannedAndRun) {
  register_properties([](std::vector<PropertyDef>& list) {
    list.push_back({"Px", "extension", fixtures::Suite::quant, "a property registered from outside properties/", false,
                    false, registered_property});
  });
  PlanSelection selection;
  selection.property_ids = {"Px"};
  const std::vector<PlannedCase> plan = plan_cases(selection);
  ASSERT_EQ(plan.size(), suite_targets(fixtures::Suite::quant).size()) << "one case per quant target";
  const auto cpu = fixtures::make_implementation("cpu");
  const PropertyTarget target = make_target(*plan.front().property, plan.front().spec, cpu.get(), nullptr,
                                            plan.front().block_sizes.front());
  RunOptions options;
  options.max_cases = 3;
  const RunResult result = run_property(*plan.front().property, target, options);
  EXPECT_TRUE(result.passed) << result.counterexample;
  EXPECT_GT(extension_runs, 0);
  // The built-in properties are all still there, and a late registration is refused.
  EXPECT_EQ(property_catalogue().size(), 30u);  // 29 built in, and Px
  EXPECT_THROW(register_properties([](std::vector<PropertyDef>&) {}), Error);
}

TEST(CatalogueExtension, RegisteredMutantIsInTheCatalogueAndBuildable) {
  fixtures::register_mutants([] {
    return std::vector<fixtures::MutantInfo>{{"extension-cpu", "the cpu implementation under a registered name",
                                              fixtures::Suite::quant, "P7",
                                              [] { return fixtures::make_implementation("cpu"); }}};
  });
  const auto iut = fixtures::make_implementation("mutant:extension-cpu");
  ASSERT_NE(iut, nullptr);
  const auto& catalogue = fixtures::mutant_catalogue();
  EXPECT_TRUE(std::any_of(catalogue.begin(), catalogue.end(), [](const auto& m) { return m.name == "extension-cpu"; }));
  EXPECT_THROW(fixtures::register_mutants([] { return std::vector<fixtures::MutantInfo>{}; }), Error);
}

}  // namespace
}  // namespace bitparity::properties
