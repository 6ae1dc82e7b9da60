// The 8-bit optimizers with the maps a checkpoint stores (`check --map`): the kernels use the map
// each state names, the reference judges with that map, and an implementation that keeps its own
// maps regardless fails P1q. Also the refusals of maps a state cannot take.
#include <gtest/gtest.h>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer_state.hpp"
#include "bitparity/properties/drift.hpp"
#include "bitparity/properties/planner.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {
namespace {

// Hard-coded maps: the caller's choice is dropped (a library that builds its own qmap1/qmap2
// instead of using the ones the checkpoint stores).
class KeepsItsOwnMaps : public fixtures::CpuImplementation {
 public:
  std::string name() const override { return "cpu-keeps-its-own-maps"; }
  Step8Report optimizer8_step(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param, const TensorView& grad,
                              const std::vector<QuantizedState>& states, std::int64_t blocksize,
                              const LaunchConfig& launch) override {
    std::vector<QuantizedState> own = states;
    for (auto& state : own) state.map.reset();
    return CpuImplementation::optimizer8_step(kind, hyper, param, grad, own, blocksize, launch);
  }
};

StateMaps fused_maps() {
  StateMaps maps;
  maps.signed_states = QuantFormat::dynamic8_signed_fused;
  maps.nonnegative_states = QuantFormat::dynamic8_unsigned_fused;
  return maps;
}

// P1q on adam/f32 with the fused maps, every block size, up to `cases` cases each; the first
// counterexample goes to `counterexample`.
bool accuracy_holds(fixtures::Implementation& iut, int cases, std::string* counterexample = nullptr) {
  PlanSelection selection;
  selection.property_ids = {"P1q"};
  selection.optimizers = {"adam"};
  selection.dtypes = {"f32"};
  selection.state_maps = fused_maps();
  const std::vector<PlannedCase> plan = plan_cases(selection);
  EXPECT_EQ(plan.size(), 1u);
  for (const std::int64_t blocksize : plan.front().block_sizes) {
    const PropertyTarget target = make_target(*plan.front().property, plan.front().spec, &iut, nullptr, blocksize);
    EXPECT_TRUE(target.state_maps.any());
    RunOptions options;
    options.max_cases = cases;
    const RunResult result = run_property(*plan.front().property, target, options);
    if (!result.passed) {
      if (counterexample != nullptr) *counterexample = result.counterexample;
      return false;
    }
  }
  return true;
}

TEST(StateMaps, TheKernelsHoldWithTheMapsTheCallerNames) {
  fixtures::CpuImplementation cpu;
  EXPECT_TRUE(accuracy_holds(cpu, 30));
}

TEST(StateMaps, AnImplementationThatKeepsItsOwnMapsFailsP1q) {
  KeepsItsOwnMaps own;
  std::string counterexample;
  EXPECT_FALSE(accuracy_holds(own, 30, &counterexample));
  // The states decoded or requantized with the default map miss the fused map's values: a new
  // absmax or a code the reference (which uses the named map) does not admit.
  EXPECT_NE(counterexample.find("state "), std::string::npos) << counterexample;
}

TEST(StateMaps, EachStateTakesTheMapOfItsSign) {
  const StateMaps maps = fused_maps();
  EXPECT_EQ(maps.of_state(OptimizerKind::adam, 0), QuantFormat::dynamic8_signed_fused);    // m
  EXPECT_EQ(maps.of_state(OptimizerKind::adam, 1), QuantFormat::dynamic8_unsigned_fused);  // v
}

TEST(StateMaps, AStateRefusesAMapItCannotHold) {
  EXPECT_EQ(state8_map(OptimizerKind::adam, 0, std::nullopt), QuantFormat::dynamic8_signed);
  EXPECT_EQ(state8_map(OptimizerKind::adam, 1, QuantFormat::dynamic8_signed_fused), QuantFormat::dynamic8_signed_fused);
  EXPECT_THROW(state8_map(OptimizerKind::adam, 0, QuantFormat::dynamic8_unsigned), Error);  // m is signed
  EXPECT_THROW(state8_map(OptimizerKind::adam, 0, QuantFormat::nf4), Error);                // not 8-bit
}

// drift --map: the 8-bit states of the drift run take the maps, and an implementation that drops
// them ends elsewhere.
TEST(StateMaps, DriftStepsTheStatesWithTheNamedMaps) {
  DriftOptions options;
  options.eight_bit = true;
  options.blocksize = 64;
  options.steps = 40;
  options.maps = fused_maps();
  fixtures::CpuImplementation cpu;
  KeepsItsOwnMaps own;
  const DriftReport named = run_drift(cpu, OptimizerKind::adam, DType::f32, options);
  const DriftReport dropped = run_drift(own, OptimizerKind::adam, DType::f32, options);
  EXPECT_EQ(named.state_maps, (std::vector<std::string>{"dynamic8-signed-fused", "dynamic8-unsigned-fused"}));
  EXPECT_NE(named.steps.back().parameter_hash, dropped.steps.back().parameter_hash);
  options.maps = {};
  const DriftReport plain = run_drift(cpu, OptimizerKind::adam, DType::f32, options);
  EXPECT_EQ(plain.state_maps, (std::vector<std::string>{"dynamic8-signed", "dynamic8-unsigned"}));
  EXPECT_EQ(plain.steps.back().parameter_hash, dropped.steps.back().parameter_hash);
}

// OptimizerState (the sharded driver's and checkpoints' states) hands its maps to every step and
// starts its codes at the map's own +0 code.
TEST(StateMaps, AnOptimizerStateStepsWithItsMaps) {
  const std::int64_t n = 256;
  const StateOptions options{true, 64, 0, fused_maps()};
  OptimizerState state(OptimizerKind::adam, n, Device::cpu(), options);
  for (const QuantizedState& q : state.quantized_states()) ASSERT_TRUE(q.map.has_value());
  EXPECT_EQ(state.quantized_states()[0].map, QuantFormat::dynamic8_signed_fused);
  EXPECT_EQ(state.quantized_states()[1].map, QuantFormat::dynamic8_unsigned_fused);
  EXPECT_EQ(state.read_buffer(0)[0], code_table(QuantFormat::dynamic8_signed_fused).zero_code);
  EXPECT_THROW(OptimizerState(OptimizerKind::adam, n, Device::cpu(), StateOptions{true, 64, 0, {QuantFormat::dynamic8_unsigned, {}}}),
               Error);  // exp_avg is signed
}

}  // namespace
}  // namespace bitparity::properties
