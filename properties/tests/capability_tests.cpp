// Implementations by capability: one that offers only some operation families is "not applicable"
// for the properties of the others (nothing is called on it, nothing counts as a violation), while
// the families it offers are tested as usual. And the typed ids that name implementations.
#include <gtest/gtest.h>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {
namespace {

// The CPU kernels behind quantize, dequantize and convert only (what a quantization library offers).
class QuantizeOnly : public fixtures::CpuImplementation {
 public:
  std::string name() const override { return "cpu-quantize-only"; }
  bool offers(fixtures::OperationFamily family) const override {
    return family == fixtures::OperationFamily::quantize || family == fixtures::OperationFamily::dequantize ||
           family == fixtures::OperationFamily::convert || family == fixtures::OperationFamily::stochastic_rounding ||
           family == fixtures::OperationFamily::nonfinite_blocks;
  }
  StepReport optimizer_step(OptimizerKind, const Hyperparameters&, const TensorView&, const TensorView&,
                            const std::vector<TensorView>&, const LaunchConfig&) override {
    ++calls_outside;
    return {};
  }
  Step8Report optimizer8_step(OptimizerKind, const Hyperparameters&, const TensorView&, const TensorView&,
                              const std::vector<QuantizedState>&, std::int64_t, const LaunchConfig&) override {
    ++calls_outside;
    return {};
  }
  int calls_outside = 0;
};

RunResult run_first_target(fixtures::Suite suite, const PropertyDef& property, fixtures::Implementation& iut,
                           fixtures::Implementation* baseline) {
  const TargetSpec spec = suite_targets(suite).front();
  const PropertyTarget target = make_target(property, spec, &iut, baseline, spec.block_sizes().front());
  RunOptions options;
  options.max_cases = 2;
  options.seconds = 2.0;
  return run_property(property, target, options);
}

TEST(Capabilities, AnAbsentFamilyIsNotApplicableAndNeverCalled) {
  QuantizeOnly iut;
  for (const fixtures::Suite suite : {fixtures::Suite::optim32, fixtures::Suite::optim8}) {
    for (const PropertyDef* property : properties_of_suite(suite)) {
      const RunResult result = run_first_target(suite, *property, iut, nullptr);
      EXPECT_TRUE(result.not_applicable) << property->id << " on " << fixtures::suite_name(suite);
      EXPECT_TRUE(result.passed) << property->id;
      EXPECT_EQ(result.stats.cases, 0) << property->id;
      EXPECT_NE(result.not_applicable_reason.find("cpu-quantize-only does not offer"), std::string::npos)
          << result.not_applicable_reason;
    }
  }
  EXPECT_EQ(iut.calls_outside, 0);
}

TEST(Capabilities, AnOfferedFamilyIsTestedAsUsual) {
  QuantizeOnly iut;
  iut.set_remake([] { return std::make_unique<QuantizeOnly>(); });
  for (const PropertyDef* property : properties_of_suite(fixtures::Suite::quant)) {
    if (property->needs_baseline || property->exhaustive) continue;  // P5 compares a device with cpu
    const RunResult result = run_first_target(fixtures::Suite::quant, *property, iut, nullptr);
    EXPECT_FALSE(result.not_applicable) << property->id;
    EXPECT_TRUE(result.passed) << property->id << ": " << result.counterexample;
    EXPECT_GT(result.stats.cases, 0) << property->id;
  }
}

TEST(Capabilities, ABaselineWithoutTheFamilyMakesTheComparisonNotApplicable) {
  fixtures::CpuImplementation cpu;
  QuantizeOnly baseline;
  for (const PropertyDef* property : properties_of_suite(fixtures::Suite::optim32)) {
    if (!property->needs_baseline) continue;
    const RunResult result = run_first_target(fixtures::Suite::optim32, *property, cpu, &baseline);
    EXPECT_TRUE(result.not_applicable) << property->id;
  }
}

TEST(ImplementationIds, ParseAndPrintEveryForm) {
  using fixtures::ImplementationKind;
  for (const std::string text : {"cpu", "cuda:0", "cuda:3", "mutant:ignore-strides", "plugin:/opt/libbnb.so"}) {
    EXPECT_EQ(fixtures::parse_implementation_id(text).str(), text);
  }
  EXPECT_EQ(fixtures::parse_implementation_id("cuda:2").kind, ImplementationKind::cuda);
  EXPECT_EQ(fixtures::parse_implementation_id("cuda:2").device, 2);
  EXPECT_EQ(fixtures::parse_implementation_id("mutant:stale-absmax").name, "stale-absmax");
  EXPECT_TRUE(fixtures::parse_implementation_id("cpu").is_device());
  EXPECT_FALSE(fixtures::parse_implementation_id("mutant:stale-absmax").is_device());
}

TEST(ImplementationIds, RefusalsNameTheForms) {
  for (const std::string text : {"gpu", "mutant:", "cuda:x", ""}) {
    EXPECT_THROW(fixtures::parse_implementation_id(text), Error) << text;
  }
  try {
    fixtures::make_implementation("plugin:/opt/libbnb.so");
    FAIL() << "a plugin that does not exist was made";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot be loaded"), std::string::npos) << error.what();
  }
  try {
    fixtures::make_implementation("mutant:no-such-mutant");
    FAIL() << "an unknown mutant was made";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("ignore-strides"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace bitparity::properties
