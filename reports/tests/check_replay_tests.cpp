// A failed row's replay line runs that row in a fresh process: it carries the --map arguments of
// the maps the row uses, and only those (another map of the run may be one its suite refuses).
#include <gtest/gtest.h>

#include "bitparity/reports/check_run.hpp"

namespace bitparity::reports {
namespace {

TEST(CheckReplay, AnEightBitRowCarriesTheMapsOfItsStatesOnly) {
  CheckOptions options;
  options.suites = {fixtures::Suite::optim8};
  options.properties = {"P1q"};
  options.optimizers = {"adam"};
  options.dtypes = {"f32"};
  options.block_sizes = {64};
  options.cases_per_block_size = 1;
  options.devices = {"cpu"};
  options.state_maps.signed_states = QuantFormat::dynamic8_signed_fused;
  options.map_spec_of = {{"dynamic8-signed-fused", "/maps/signed.json"}, {"nf4", "nf4"}};
  const std::vector<CheckRow> rows = run_check(plan_check(options), options, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state_maps, (std::vector<std::string>{"dynamic8-signed-fused", "dynamic8-unsigned"}));
  EXPECT_EQ(rows[0].map_specs, std::vector<std::string>{"/maps/signed.json"});
  const std::string replay = replay_command(rows[0], 1);
  EXPECT_NE(replay.find(" --map /maps/signed.json"), std::string::npos) << replay;
  EXPECT_EQ(replay.find("nf4"), std::string::npos) << replay;
}

TEST(CheckReplay, AQuantRowCarriesItsOwnMap) {
  CheckOptions options;
  options.suites = {fixtures::Suite::quant};
  options.properties = {"P7"};
  options.formats = {"linear8-fused"};
  options.dtypes = {"f32"};
  options.block_sizes = {64};
  options.cases_per_block_size = 1;
  options.devices = {"cpu"};
  options.map_spec_of = {{"linear8-fused", "linear8-fused"}, {"nf4", "nf4"}};
  const std::vector<CheckRow> rows = run_check(plan_check(options), options, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].state_maps.empty());
  EXPECT_EQ(rows[0].map_specs, std::vector<std::string>{"linear8-fused"});
}

}  // namespace
}  // namespace bitparity::reports
