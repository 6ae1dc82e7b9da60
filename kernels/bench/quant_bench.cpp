// Quantize and dequantize throughput, as GB/s and as a ratio to a same-run copy of the same bytes
// on the same device. Bytes model, per element of dtype size s: quantize reads the values (s) and
// writes the codes (1, or 1/2 at 4 bits), the absmax and flag (5 per block); dequantize reads the
// codes and absmax (4 per block) and writes the values.
#include "bench_support.hpp"

namespace bitparity::bench {
namespace {

constexpr std::int64_t kBlocksize = 256;

// One benchmark body for both directions: the timed call differs, the buffers and traffic do not.
void blockwise_benchmark(benchmark::State& state, QuantFormat format, DType dtype, Device device, std::int64_t elements,
                         bool quantize, const LaunchConfig& launch = {}) {
  if (skip_without_device(state, device)) return;
  const int bits = quant_format_info(format).bits;
  const DType code_dtype = bits == 4 ? DType::packed4 : DType::u8;
  const std::int64_t blocks = elements / kBlocksize;
  const std::int64_t value_bytes = dtype_storage_bytes(dtype, elements);
  const std::int64_t code_bytes = dtype_storage_bytes(code_dtype, elements);
  DeviceBuffers buffers(device, {value_bytes, code_bytes, blocks * 4, blocks}, dtype);
  const TensorView values = contiguous_view(buffers[0], dtype, device, {elements});
  const QuantizeOutputs quantized{contiguous_view(buffers[1], code_dtype, device, {elements}),
                                  contiguous_view(buffers[2], DType::f32, device, {blocks}),
                                  contiguous_view(buffers[3], DType::u8, device, {blocks})};
  quantize_blockwise(values, format, kBlocksize, quantized);  // valid codes for dequantize
  const std::int64_t bytes_moved = value_bytes + code_bytes + blocks * (quantize ? 5 : 4);
  const Timings timings = timed_against_copy(state, buffers, bytes_moved, [&] {
    if (quantize) {
      quantize_blockwise(values, format, kBlocksize, quantized, {}, launch);
    } else {
      dequantize_blockwise(quantized.codes, quantized.absmax, format, kBlocksize, values, launch);
    }
  });
  report(state, bytes_moved, elements, timings);
}

}  // namespace

void register_quant_benchmarks() {
  for (const Device& device : benchmark_devices()) {
    for (const std::int64_t elements : sizes_for(device)) {
      for (const auto& info : quant_formats()) {
        for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
          const std::string suffix =
              std::string(info.name) + "/" + dtype_name(dtype) + "/" + size_name(elements) + "/" + device.str();
          for (bool quantize : {true, false}) {
            register_timed((quantize ? "quantize/" : "dequantize/") + suffix,
                           [=](benchmark::State& state) {
                             blockwise_benchmark(state, info.format, dtype, device, elements, quantize);
                           });
            if (unsynchronised_row_wanted(device, info.name, dtype)) {
              register_timed((quantize ? "quantize_stream/" : "dequantize_stream/") + suffix, [=](benchmark::State& state) {
                blockwise_benchmark(state, info.format, dtype, device, elements, quantize, unsynchronised_launch());
              });
            }
            if (general_kernel_row_wanted(device, elements, info.name, dtype)) {
              register_timed((quantize ? "quantize_general/" : "dequantize_general/") + suffix, [=](benchmark::State& state) {
                blockwise_benchmark(state, info.format, dtype, device, elements, quantize, general_kernel_launch());
              });
            }
          }
        }
      }
    }
  }
}

}  // namespace bitparity::bench
