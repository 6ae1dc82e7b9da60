// The trust factor of LAMB and LARS is bounded from the exact norms (ERROR_MODEL.md, "LAMB and LARS
// norms"): P1's reference then tells a norm summed exactly and rounded once from one summed in fp32
// in a fixed order (mutant norm-summed-in-fp32), on tensors of 10^4 to 10^6 well-scaled elements,
// where no square underflows and the launch-invariance property sees nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/reference/optim_reference.hpp"

namespace bitparity {
namespace {

struct StepVerdicts {
  std::int64_t outside_bound = 0;
  std::int64_t ill_conditioned = 0;
  std::string first;
};

// One step (the tenth) of `implementation` on n elements: parameters N(0, 1) with one in eight
// exactly zero (there the update is the whole new value, so the factor's error shows undiluted),
// gradients N(0, 1), states of the same scale (second moments squares, so that LAMB's directions
// vary rather than all being about 1). Every square is far from fp32's underflow.
StepVerdicts step_and_judge(const std::string& implementation, OptimizerKind kind, std::int64_t n) {
  Hyperparameters h;
  h.step = 10;
  h.lr = 0.1f;
  h.weight_decay = 0.01f;
  std::mt19937_64 rng(20261123 + static_cast<std::uint64_t>(n));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> p(static_cast<std::size_t>(n)), g(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = i % 8 == 0 ? 0.0f : normal(rng);
    g[i] = normal(rng);
  }
  auto param = fixtures::HostTensor::contiguous(DType::f32, {n});
  auto grad = fixtures::HostTensor::contiguous(DType::f32, {n});
  fixtures::write_logical(param.view(), p);
  fixtures::write_logical(grad.view(), g);
  std::vector<fixtures::HostTensor> state_storage;
  std::vector<TensorView> states;
  for (int k = 0; k < optimizer_info(kind).states; ++k) state_storage.push_back(fixtures::HostTensor::contiguous(DType::f32, {n}));
  std::vector<std::vector<float>> old_states;
  for (int k = 0; k < optimizer_info(kind).states; ++k) {
    const bool second_moment = optimizer_info(kind).state_specs[k].role == StateRole::second_moment;
    std::vector<float> column(p.size());
    for (float& value : column) {
      const float x = normal(rng);
      value = second_moment ? x * x : x;
    }
    fixtures::write_logical(state_storage[k].view(), column);
    old_states.push_back(std::move(column));
  }
  for (auto& s : state_storage) states.push_back(s.view());
  const auto iut = fixtures::make_implementation(implementation);
  iut->optimizer_step(kind, h, param.view(), grad.view(), states, {});

  std::vector<reference::OptimInput> inputs(p.size());
  std::vector<reference::OptimOutput> outputs(p.size());
  const std::vector<float> new_p = fixtures::read_logical(param.view());
  std::vector<std::vector<float>> new_states;
  for (const auto& s : states) new_states.push_back(fixtures::read_logical(s));
  for (std::size_t i = 0; i < p.size(); ++i) {
    inputs[i].p = p[i];
    inputs[i].g = g[i];
    for (std::size_t k = 0; k < old_states.size(); ++k) inputs[i].s[k] = old_states[k][i];
    outputs[i].p = new_p[i];
    for (std::size_t k = 0; k < new_states.size(); ++k) outputs[i].s[k] = new_states[k][i];
  }
  const auto verdicts = reference::OptimReference(kind, h, DType::f32).check_all(inputs, outputs);
  StepVerdicts result;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    result.ill_conditioned += verdicts[i].ill_conditioned ? 1 : 0;
    if (!verdicts[i].ok && result.outside_bound++ == 0) result.first = "element " + std::to_string(i) + ": " + verdicts[i].detail;
  }
  return result;
}

class NormAccuracy : public ::testing::TestWithParam<std::tuple<OptimizerKind, std::int64_t>> {};

TEST_P(NormAccuracy, ExactNormsPassAndFp32NormsFail) {
  const auto [kind, n] = GetParam();
  const StepVerdicts exact = step_and_judge("cpu", kind, n);
  EXPECT_EQ(exact.outside_bound, 0) << exact.first;
  EXPECT_EQ(exact.ill_conditioned, 0);
  const StepVerdicts fp32 = step_and_judge("mutant:norm-summed-in-fp32", kind, n);
  EXPECT_GT(fp32.outside_bound, 0) << "the fp32 norm passed P1's bound on " << n << " elements";
  EXPECT_EQ(fp32.ill_conditioned, 0);
  std::printf("%s n=%lld: fp32 norms put %lld elements outside their bound; first: %s\n",
              std::string(optimizer_info(kind).name).c_str(), static_cast<long long>(n),
              static_cast<long long>(fp32.outside_bound), fp32.first.c_str());
}

INSTANTIATE_TEST_SUITE_P(LongTensors, NormAccuracy,
                         ::testing::Combine(::testing::Values(OptimizerKind::lamb, OptimizerKind::lars),
                                            ::testing::Values(std::int64_t{10'000}, std::int64_t{100'000},
                                                              std::int64_t{1'000'000})),
                         [](const auto& info) {
                           return std::string(optimizer_info(std::get<0>(info.param)).name) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace bitparity
