// The exact reference's speed: OptimReference::check_all judging one step of the CPU kernel, on one
// thread, in element-steps per second (design.md's target: 2 million Adam element-steps per second
// per core, which escalating to MPFR only the elements double cannot decide makes possible).
// Each row is one optimizer and parameter dtype. Its step is drift's: parameters from N(0, 1),
// gradients of a noisy quadratic (0.1 N(0, 1) + 0.01), states built by kWarmSteps kernel steps
// first, so that the judged step starts from states a training run would have. Counters:
// element_steps_per_second, escalated_share (elements decided in MPFR) and ill_conditioned_share.
// A row whose kernel step fails its own check stops with an error, and the program exits 1: its
// speed would mean nothing.
#include <benchmark/benchmark.h>

#include <exception>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/drift.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/reference/optim_reference.hpp"

namespace bitparity::bench {
namespace {

constexpr std::int64_t kElements = std::int64_t{1} << 14;
constexpr int kWarmSteps = 3;
bool row_failed = false;  // the rows run one after another on the main thread

// The inputs and the kernel's outputs of one step, after kWarmSteps steps.
struct JudgedStep {
  Hyperparameters hyper;
  std::vector<reference::OptimInput> inputs;
  std::vector<reference::OptimOutput> outputs;
};

JudgedStep kernel_step(OptimizerKind kind, DType dtype) {
  fixtures::CpuImplementation cpu;
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal;
  fixtures::HostTensor param = fixtures::HostTensor::contiguous(dtype, {kElements});
  fixtures::HostTensor grad = fixtures::HostTensor::contiguous(dtype, {kElements});
  std::vector<fixtures::HostTensor> states;
  std::vector<TensorView> state_views;
  const int state_count = optimizer_info(kind).states;
  for (int k = 0; k < state_count; ++k) {
    states.push_back(fixtures::HostTensor::contiguous(DType::f32, {kElements}));
    state_views.push_back(states.back().view());
  }
  std::vector<float> values(kElements);
  for (auto& p : values) p = properties::round_to_dtype(normal(rng), dtype);
  fixtures::write_logical(param.view(), values);
  JudgedStep judged;
  judged.hyper = properties::drift_hyperparameters(kind, {});
  for (int t = 1; t <= kWarmSteps + 1; ++t) {
    judged.hyper.step = t;
    for (auto& g : values) g = properties::round_to_dtype(normal(rng) * 0.1 + 0.01, dtype);
    fixtures::write_logical(grad.view(), values);
    if (t == kWarmSteps + 1) {  // the judged step's inputs, before the kernel overwrites them
      const std::vector<float> p = fixtures::read_logical(param.view());
      std::vector<std::vector<float>> s;
      for (const auto& view : state_views) s.push_back(fixtures::read_logical(view));
      for (std::int64_t i = 0; i < kElements; ++i) {
        reference::OptimInput in{p[i], values[i], {0, 0, 0}};
        for (int k = 0; k < state_count; ++k) in.s[k] = s[k][i];
        judged.inputs.push_back(in);
      }
    }
    cpu.optimizer_step(kind, judged.hyper, param.view(), grad.view(), state_views, {});
  }
  const std::vector<float> p = fixtures::read_logical(param.view());
  std::vector<std::vector<float>> s;
  for (const auto& view : state_views) s.push_back(fixtures::read_logical(view));
  for (std::int64_t i = 0; i < kElements; ++i) {
    reference::OptimOutput out{p[i], {0, 0, 0}};
    for (int k = 0; k < state_count; ++k) out.s[k] = s[k][i];
    judged.outputs.push_back(out);
  }
  return judged;
}

void reference_benchmark(benchmark::State& state, OptimizerKind kind, DType dtype) {
  const JudgedStep judged = kernel_step(kind, dtype);
  const reference::OptimReference reference(kind, judged.hyper, dtype);
  std::vector<reference::ElementVerdict> verdicts;
  for (auto _ : state) {
    verdicts = reference.check_all(judged.inputs, judged.outputs);
    benchmark::DoNotOptimize(verdicts.data());
  }
  std::int64_t escalated = 0, ill_conditioned = 0;
  for (const auto& verdict : verdicts) {
    if (!verdict.ok) {
      row_failed = true;
      state.SkipWithError(("the CPU kernel's step fails the reference: " + verdict.detail).c_str());
      return;
    }
    escalated += verdict.escalated ? 1 : 0;
    ill_conditioned += verdict.ill_conditioned ? 1 : 0;
  }
  const double elements = static_cast<double>(kElements);
  state.counters["element_steps_per_second"] = benchmark::Counter(elements, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["escalated_share"] = static_cast<double>(escalated) / elements;
  state.counters["ill_conditioned_share"] = static_cast<double>(ill_conditioned) / elements;
}

void register_reference_benchmarks() {
  for (const auto& info : optimizers()) {
    for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
      const std::string name = "reference/" + std::string(info.name) + "/" + std::string(dtype_name(dtype));
      benchmark::RegisterBenchmark(name.c_str(), [kind = info.kind, dtype](benchmark::State& state) {
        reference_benchmark(state, kind, dtype);
      })->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace bitparity::bench

int main(int argc, char** argv) {
  try {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;  // it names the flag
    bitparity::bench::register_reference_benchmarks();
    const std::size_t rows = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (rows == 0) {
      std::cerr << "error: --benchmark_filter matches no row; rows are reference/OPTIMIZER/DTYPE (--benchmark_list_tests lists them)\n";
      return 2;
    }
    return bitparity::bench::row_failed ? 1 : 0;
  } catch (const std::exception& error) {
    std::cerr << "bitparity_reference_bench: " << error.what() << "\n";
    return 1;
  }
}
