// Optimizer step throughput against a same-run copy of the bytes the step must move: parameter
// read and written, gradient read, each fp32 state read and written (28 bytes per element for
// fp32 Adam). The non-finite gradient scan reads the gradient a second time; that read is not
// counted as "must move", so it shows in the ratio.
#include "bench_support.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/optimizer8.hpp"

namespace bitparity::bench {
namespace {

constexpr std::int64_t kElements = 1 << 24;

void step_benchmark(benchmark::State& state, OptimizerKind kind, DType dtype, Device device) {
  if (skip_without_device(state, device)) return;
  const int states = optimizer_info(kind).states;
  const std::int64_t value_bytes = dtype_storage_bytes(dtype, kElements);
  std::vector<std::int64_t> sizes = {value_bytes, value_bytes};
  for (int k = 0; k < states; ++k) sizes.push_back(kElements * 4);
  DeviceBuffers buffers(device, sizes, dtype);
  const TensorView grad = contiguous_view(buffers[0], dtype, device, {kElements});
  const TensorView param = contiguous_view(buffers[1], dtype, device, {kElements});
  std::vector<TensorView> state_views;
  for (int k = 0; k < states; ++k) state_views.push_back(contiguous_view(buffers[2 + k], DType::f32, device, {kElements}));
  Hyperparameters hyper;
  hyper.momentum = 0.9f;
  hyper.smoothing = 0.99f;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    optimizer_step(kind, hyper, param, grad, state_views);
    ++hyper.step;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report(state, buffers, 2 * value_bytes + value_bytes + static_cast<std::int64_t>(states) * 8 * kElements, seconds);
}

// 8-bit states: parameter read and written, gradient read, per state one code read and written and
// the block absmax read and written (about 16 bytes per element for fp32 Adam).
void step8_benchmark(benchmark::State& state, OptimizerKind kind, DType dtype, Device device) {
  if (skip_without_device(state, device)) return;
  constexpr std::int64_t kBlock = 256;
  const int states = optimizer_info(kind).states;
  const std::int64_t value_bytes = dtype_storage_bytes(dtype, kElements), blocks = kElements / kBlock;
  std::vector<std::int64_t> sizes = {value_bytes, value_bytes};
  for (int k = 0; k < states; ++k) {
    sizes.push_back(kElements);
    sizes.push_back(blocks * 4);
  }
  DeviceBuffers buffers(device, sizes, dtype);
  const TensorView grad = contiguous_view(buffers[0], dtype, device, {kElements});
  const TensorView param = contiguous_view(buffers[1], dtype, device, {kElements});
  std::vector<QuantizedState> quantized;
  for (int k = 0; k < states; ++k) {
    quantized.push_back({contiguous_view(buffers[2 + 2 * k], DType::u8, device, {kElements}),
                         contiguous_view(buffers[3 + 2 * k], DType::f32, device, {blocks})});
  }
  Hyperparameters hyper;
  hyper.momentum = 0.9f;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    optimizer8_step(kind, hyper, param, grad, quantized, kBlock);
    ++hyper.step;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report(state, buffers, 3 * value_bytes + static_cast<std::int64_t>(states) * (2 * kElements + 8 * blocks), seconds);
}

}  // namespace

void register_optimizer_benchmarks() {
  for (const Device& device : benchmark_devices()) {
    for (const auto& info : optimizers()) {
      for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
        benchmark::RegisterBenchmark(
            ("step/" + std::string(info.name) + "/" + dtype_name(dtype) + "/" + device.str()).c_str(), step_benchmark,
            info.kind, dtype, device)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
        if (!has_8bit_variant(info.kind)) continue;
        benchmark::RegisterBenchmark(
            ("step8/" + std::string(info.name) + "/" + dtype_name(dtype) + "/" + device.str()).c_str(), step8_benchmark,
            info.kind, dtype, device)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace bitparity::bench
