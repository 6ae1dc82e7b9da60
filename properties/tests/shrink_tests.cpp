// A shrink keeps the failure it started from: a case that violated the property is never shrunk
// into a smaller one that the implementation refuses (bitsandbytes' CUDA adapter refuses empty
// tensors, and every violation shrank into that refusal), nor a refusal into a violation.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/planner.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {
namespace {

bool violated_once = false;
bool refused_once = false;

// Fails from 20 up; once it has, every smaller case is refused (as a shrink candidate would be).
void violates_then_refuses_smaller(const PropertyTarget&, PropertyStats& stats) {
  const int n = *rc::gen::inRange(0, 101);
  if (violated_once && n < 20) throw Error(ErrorCode::invalid_argument, "refuses " + std::to_string(n));
  if (n >= 20) {
    violated_once = true;
    report_violation(stats, 1, "violated at " + std::to_string(n));
  }
  stats.pass_case(1);
}

// Refused from 20 up; once it has been, every smaller case violates.
void refuses_then_violates_smaller(const PropertyTarget&, PropertyStats& stats) {
  const int n = *rc::gen::inRange(0, 101);
  if (refused_once && n < 20) report_violation(stats, 1, "violated at " + std::to_string(n));
  if (n >= 20) {
    refused_once = true;
    throw Error(ErrorCode::invalid_argument, "refuses " + std::to_string(n));
  }
  stats.pass_case(1);
}

RunResult run(void (*body)(const PropertyTarget&, PropertyStats&)) {
  const PropertyDef property{"Ps", "shrink", fixtures::Suite::quant, "a test body", false, false, body};
  static const auto cpu = fixtures::make_implementation("cpu");
  PropertyTarget target;
  target.iut = cpu.get();
  RunOptions options;
  options.max_cases = 200;
  return run_property(property, target, options);
}

TEST(Shrink, AViolationIsNotShrunkIntoARefusal) {
  const RunResult result = run(violates_then_refuses_smaller);
  ASSERT_FALSE(result.passed);
  EXPECT_NE(result.counterexample.find("violated at 20"), std::string::npos) << result.counterexample;
}

TEST(Shrink, ARefusalIsNotShrunkIntoAViolation) {
  const RunResult result = run(refuses_then_violates_smaller);
  ASSERT_FALSE(result.passed);
  EXPECT_TRUE(result.counterexample.starts_with(kRefusedValidCase)) << result.counterexample;
  EXPECT_NE(result.counterexample.find("refuses 20"), std::string::npos) << result.counterexample;
}

}  // namespace
}  // namespace bitparity::properties
