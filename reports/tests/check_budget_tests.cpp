// `check --seconds`: the budget is shared by the rows still to run, and a row whose share is spent
// still checks something, so a small budget never passes a row that drew no case.
#include <gtest/gtest.h>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/property.hpp"
#include "bitparity/reports/check_run.hpp"

namespace bitparity::reports {
namespace {

CheckOptions quant_rows_on_the_cpu() {
  CheckOptions options;
  options.suites = {fixtures::Suite::quant};
  options.properties = {"P7", "P2"};
  options.formats = {"dynamic8-signed-fused", "nf4"};
  options.dtypes = {"f32", "bf16"};
  options.block_sizes = {64, 256};
  options.devices = {"cpu"};
  return options;
}

TEST(CheckBudget, ABudgetSpentBeforeTheFirstBatchStillRunsIt) {
  fixtures::CpuImplementation cpu;
  const properties::PropertyDef& property = *properties::properties_of_suite(fixtures::Suite::quant).front();
  const properties::TargetSpec spec = properties::suite_targets(fixtures::Suite::quant).front();
  properties::RunOptions options;
  options.max_cases = 1 << 30;
  options.seconds = 1e-12;  // over before the runner reads its clock
  const properties::RunResult result =
      properties::run_property(property, properties::make_target(property, spec, &cpu, nullptr, 64), options);
  EXPECT_TRUE(result.passed) << result.counterexample;
  EXPECT_EQ(result.stats.cases, 10) << "one batch, and no more";
}

TEST(CheckBudget, ARowWhoseShareIsSpentStillRunsABatchAtEveryBlockSize) {
  CheckOptions options = quant_rows_on_the_cpu();
  options.seconds = 1e-6;  // spent before the first row starts
  const std::vector<PlannedRow> plan = plan_check(options);
  ASSERT_EQ(plan.size(), 8u);
  const std::vector<CheckRow> rows = run_check(plan, options, {});
  ASSERT_EQ(rows.size(), plan.size());
  for (const CheckRow& row : rows) {
    EXPECT_TRUE(row.passed) << row.property << ' ' << row.format << '/' << row.dtype << ": " << row.counterexample;
    EXPECT_EQ(row.block_sizes, (std::vector<std::int64_t>{64, 256})) << row.property << ' ' << row.format;
    EXPECT_GE(row.cases, 2 * 10) << row.property << ' ' << row.format << '/' << row.dtype
                                 << ": one batch of 10 cases at each of the two block sizes";
  }
}

// An exhaustive sweep is one case of about a minute: progress said 100 %, ETA 0.1 s, and then
// nothing while it ran. Its chunks now move the row's fraction.
TEST(CheckProgress, AnExhaustiveSweepReportsItsShareAsItGoes) {
  CheckOptions options;
  options.suites = {fixtures::Suite::conversions};
  options.dtypes = {"bf16"};
  options.devices = {"cpu"};
  const std::vector<PlannedRow> plan = plan_check(options);
  ASSERT_EQ(plan.size(), 1u);
  ASSERT_TRUE(plan.front().property->exhaustive);
  std::vector<double> fractions;
  CheckCallbacks callbacks;
  callbacks.progress = [&](std::size_t, double fraction, const PlannedRow&) { fractions.push_back(fraction); };
  callbacks.cancelled = [&] { return fractions.size() >= 6; };  // a few chunks are enough to see
  run_check(plan, options, callbacks);
  ASSERT_GE(fractions.size(), 6u);
  for (std::size_t k = 2; k < fractions.size(); ++k) {
    EXPECT_GT(fractions[k], fractions[k - 1]) << "chunk " << k;
    EXPECT_LT(fractions[k], 1.0) << "chunk " << k;
  }
  EXPECT_GT(fractions.back(), 0.0);
}

TEST(CheckBudget, TheRunEndsNearItsBudget) {
  CheckOptions options = quant_rows_on_the_cpu();
  options.seconds = 2.0;
  const std::vector<CheckRow> rows = run_check(plan_check(options), options, {});
  double spent = 0;
  for (const CheckRow& row : rows) spent += row.seconds;
  // The rows' first batches take a small part of 2 s here; the rest of the budget is used, and the
  // last batch started before the end is all it may overrun by.
  EXPECT_GT(spent, 0.5 * options.seconds);
  EXPECT_LT(spent, 1.5 * options.seconds);
}

}  // namespace
}  // namespace bitparity::reports
