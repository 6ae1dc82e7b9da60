// Optimizer step throughput against a same-run copy of the bytes the step moves. Bytes model, per
// element, parameter and gradient of dtype size s: the parameter read and written (2s), the gradient
// read twice (2s: the non-finite pre-scan re-reads it), each fp32 state read and written (8). For
// fp32 Adam that is 32 B/element. 8-bit states: per state one code read and written (2) and the
// block absmax read and written (8 per block); 20.06 B/element for fp32 8-bit Adam at block size 256.
#include "bench_support.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/optimizer8.hpp"

namespace bitparity::bench {
namespace {

Hyperparameters bench_hyperparameters(OptimizerKind kind) {
  Hyperparameters hyper = typical_hyperparameters(kind);
  hyper.lr = 1e-3f;
  return hyper;
}

void step_benchmark(benchmark::State& state, OptimizerKind kind, DType dtype, Device device, std::int64_t elements) {
  if (skip_without_device(state, device)) return;
  const int states = optimizer_info(kind).states;
  const std::int64_t value_bytes = dtype_storage_bytes(dtype, elements);
  std::vector<std::int64_t> sizes = {value_bytes, value_bytes};
  for (int k = 0; k < states; ++k) sizes.push_back(elements * 4);
  DeviceBuffers buffers(device, sizes, dtype);
  const TensorView grad = contiguous_view(buffers[0], dtype, device, {elements});
  const TensorView param = contiguous_view(buffers[1], dtype, device, {elements});
  std::vector<TensorView> state_views;
  for (int k = 0; k < states; ++k) state_views.push_back(contiguous_view(buffers[2 + k], DType::f32, device, {elements}));
  Hyperparameters hyper = bench_hyperparameters(kind);
  const std::int64_t bytes_moved = 4 * value_bytes + static_cast<std::int64_t>(states) * 8 * elements;
  const Timings timings = timed_against_copy(state, buffers, bytes_moved, [&] {
    optimizer_step(kind, hyper, param, grad, state_views);
    ++hyper.step;
  });
  report(state, bytes_moved, elements, timings);
}

// The step with the caller's found-inf flag (zero) instead of the pre-scan: the gradient is read
// once, 28 B/element for fp32 Adam.
void step_found_inf_benchmark(benchmark::State& state, OptimizerKind kind, DType dtype, Device device,
                              std::int64_t elements) {
  if (skip_without_device(state, device)) return;
  const int states = optimizer_info(kind).states;
  const std::int64_t value_bytes = dtype_storage_bytes(dtype, elements);
  std::vector<std::int64_t> sizes = {value_bytes, value_bytes, 4};
  for (int k = 0; k < states; ++k) sizes.push_back(elements * 4);
  DeviceBuffers buffers(device, sizes, dtype);  // buffer 2, the flag, is zero
  const TensorView grad = contiguous_view(buffers[0], dtype, device, {elements});
  const TensorView param = contiguous_view(buffers[1], dtype, device, {elements});
  std::vector<TensorView> state_views;
  for (int k = 0; k < states; ++k) state_views.push_back(contiguous_view(buffers[3 + k], DType::f32, device, {elements}));
  Hyperparameters hyper = bench_hyperparameters(kind);
  const FoundInf found_inf{static_cast<const float*>(buffers[2]), false};
  const std::int64_t bytes_moved = 3 * value_bytes + static_cast<std::int64_t>(states) * 8 * elements;
  const Timings timings = timed_against_copy(state, buffers, bytes_moved, [&] {
    optimizer_step(kind, hyper, param, grad, state_views, found_inf);
    ++hyper.step;
  });
  report(state, bytes_moved, elements, timings);
}

void step8_benchmark(benchmark::State& state, OptimizerKind kind, DType dtype, Device device, std::int64_t elements,
                     const LaunchConfig& launch = {}) {
  if (skip_without_device(state, device)) return;
  constexpr std::int64_t kBlock = 256;
  const int states = optimizer_info(kind).states;
  const std::int64_t value_bytes = dtype_storage_bytes(dtype, elements), blocks = elements / kBlock;
  std::vector<std::int64_t> sizes = {value_bytes, value_bytes};
  for (int k = 0; k < states; ++k) {
    sizes.push_back(elements);
    sizes.push_back(blocks * 4);
  }
  DeviceBuffers buffers(device, sizes, dtype);
  const TensorView grad = contiguous_view(buffers[0], dtype, device, {elements});
  const TensorView param = contiguous_view(buffers[1], dtype, device, {elements});
  std::vector<QuantizedState> quantized;
  for (int k = 0; k < states; ++k) {
    quantized.push_back({contiguous_view(buffers[2 + 2 * k], DType::u8, device, {elements}),
                         contiguous_view(buffers[3 + 2 * k], DType::f32, device, {blocks})});
  }
  Hyperparameters hyper = bench_hyperparameters(kind);
  // The gradient is read twice, as in the 32-bit step: optimizer8_step pre-scans it for non-finite
  // values (and skips the step on one) before the blockwise pass.
  const std::int64_t bytes_moved = 4 * value_bytes + static_cast<std::int64_t>(states) * (2 * elements + 8 * blocks);
  const Timings timings = timed_against_copy(state, buffers, bytes_moved, [&] {
    optimizer8_step(kind, hyper, param, grad, quantized, kBlock, launch);
    ++hyper.step;
  });
  report(state, bytes_moved, elements, timings);
}

// The targets at 2^28 are Adam/AdamW fp32 (32-bit) and Adam (8-bit); every optimizer at 2^24.
bool large_size_wanted(OptimizerKind kind, DType dtype, bool eight_bit) {
  const auto name = optimizer_info(kind).name;
  if (eight_bit) return name == "adam";
  return dtype == DType::f32 && (name == "adam" || name == "adamw");
}

}  // namespace

void register_optimizer_benchmarks() {
  for (const Device& device : benchmark_devices()) {
    for (const std::int64_t elements : sizes_for(device)) {
      for (const auto& info : optimizers()) {
        for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
          const std::string suffix =
              std::string(info.name) + "/" + dtype_name(dtype) + "/" + size_name(elements) + "/" + device.str();
          const OptimizerKind kind = info.kind;
          if (elements == kSmall || large_size_wanted(kind, dtype, false)) {
            register_timed("step/" + suffix,
                           [=](benchmark::State& state) { step_benchmark(state, kind, dtype, device, elements); });
          }
          if (large_size_wanted(kind, dtype, false)) {
            register_timed("step_found_inf/" + suffix, [=](benchmark::State& state) {
              step_found_inf_benchmark(state, kind, dtype, device, elements);
            });
          }
          if (has_8bit_variant(kind) && (elements == kSmall || large_size_wanted(kind, dtype, true))) {
            register_timed("step8/" + suffix,
                           [=](benchmark::State& state) { step8_benchmark(state, kind, dtype, device, elements); });
          }
          if (has_8bit_variant(kind) && general_kernel_row_wanted(device, elements, info.name, dtype)) {
            register_timed("step8_general/" + suffix, [=](benchmark::State& state) {
              step8_benchmark(state, kind, dtype, device, elements, general_kernel_launch());
            });
          }
        }
      }
    }
  }
}

}  // namespace bitparity::bench
