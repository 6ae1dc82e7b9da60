// Quantize and dequantize throughput, as GB/s and as a ratio to a plain copy of the same bytes on
// the same device measured in the same run.
#include "bench_support.hpp"

namespace bitparity::bench {
namespace {

constexpr std::int64_t kElements = 1 << 24;
constexpr std::int64_t kBlocksize = 256;

// One benchmark body for both directions: the timed call differs, the buffers and traffic do not.
void blockwise_benchmark(benchmark::State& state, QuantFormat format, DType dtype, Device device, bool quantize) {
  if (skip_without_device(state, device)) return;
  const int bits = quant_format_info(format).bits;
  const DType code_dtype = bits == 4 ? DType::packed4 : DType::u8;
  const std::int64_t blocks = kElements / kBlocksize;
  const std::int64_t value_bytes = dtype_storage_bytes(dtype, kElements);
  const std::int64_t code_bytes = dtype_storage_bytes(code_dtype, kElements);
  DeviceBuffers buffers(device, {value_bytes, code_bytes, blocks * 4, blocks}, dtype);
  const TensorView values = contiguous_view(buffers[0], dtype, device, {kElements});
  const QuantizeOutputs quantized{contiguous_view(buffers[1], code_dtype, device, {kElements}),
                                  contiguous_view(buffers[2], DType::f32, device, {blocks}),
                                  contiguous_view(buffers[3], DType::u8, device, {blocks})};
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (quantize) {
      quantize_blockwise(values, format, kBlocksize, quantized);
    } else {
      dequantize_blockwise(quantized.codes, quantized.absmax, format, kBlocksize, values);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Values in or out, codes out or in, absmax (and, when quantizing, the flags).
  report(state, buffers, value_bytes + code_bytes + blocks * (quantize ? 5 : 4), seconds);
}

}  // namespace

void register_quant_benchmarks() {
  for (const Device& device : benchmark_devices()) {
    for (const auto& info : quant_formats()) {
      for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
        const std::string suffix = std::string(info.name) + "/" + dtype_name(dtype) + "/" + device.str();
        for (bool quantize : {true, false}) {
          benchmark::RegisterBenchmark(((quantize ? "quantize/" : "dequantize/") + suffix).c_str(), blockwise_benchmark,
                                       info.format, dtype, device, quantize)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
}

}  // namespace bitparity::bench
