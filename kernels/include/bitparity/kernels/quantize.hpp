#pragma once
// Entry points of the blockwise quantisation kernels. Each validates its arguments, then runs the
// CPU or CUDA launcher for the device the tensors live on.
#include <cstdint>
#include <vector>

#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/kernels/quant_format.hpp"
#include "bitparity/kernels/tensor_view.hpp"

namespace bitparity {

struct QuantizeOutputs {
  TensorView codes;      // contiguous 1-D: u8 with numel elements, or packed4 with numel nibbles
  TensorView absmax;     // contiguous 1-D f32, one per block
  TensorView nonfinite;  // contiguous 1-D u8, one flag per block
};

struct QuantizeReport {
  std::int64_t blocks = 0;
  std::vector<std::int64_t> nonfinite_blocks;  // blocks holding NaN or infinity (absmax NaN, zero codes)
  // false after a CUDA call with LaunchConfig::synchronize false: nonfinite_blocks is then empty,
  // not counted, and the caller reads the output flags once the stream has run.
  bool counted = true;
};

std::int64_t block_count(std::int64_t numel, std::int64_t blocksize);

QuantizeReport quantize_blockwise(const TensorView& input, QuantFormat format, std::int64_t blocksize,
                                  const QuantizeOutputs& outputs, const StochasticRounding& rounding = {},
                                  const LaunchConfig& launch = {});

void dequantize_blockwise(const TensorView& codes, const TensorView& absmax, QuantFormat format,
                          std::int64_t blocksize, const TensorView& output, const LaunchConfig& launch = {});

// Elementwise dtype conversion between f32, f16 and bf16 (round to nearest even once).
void convert(const TensorView& input, const TensorView& output, const LaunchConfig& launch = {});

// The launchers behind the entry points; arguments are already validated.
namespace cpu {
void quantize(const CodeTable& table, const QuantizeParams& params, const LaunchConfig& launch);
void dequantize(const CodeTable& table, const DequantizeParams& params, const LaunchConfig& launch);
void convert(const ConvertParams& params, const LaunchConfig& launch);
}  // namespace cpu
namespace cuda {
// The device reads the format's code table from its own copy (uploaded once). Returns how many
// blocks held a non-finite value, counted on the device: the caller copies the per-block flags back
// only when there are any (a copy of one byte per block cost more than the kernel at 2^28). With
// LaunchConfig::synchronize false it counts nothing, waits for nothing and returns 0.
std::int64_t quantize(int device, QuantFormat format, const QuantizeParams& params, const LaunchConfig& launch);
void dequantize(int device, QuantFormat format, const DequantizeParams& params, const LaunchConfig& launch);
void convert(int device, const ConvertParams& params, const LaunchConfig& launch);
// Device memory helpers for the implementations under test (fixtures/).
void* allocate(int device, std::int64_t bytes);
void release(void* pointer);
// The copies are queued on `stream` (a cudaStream_t; null: the default stream) and waited for.
void copy_to_device(int device, void* destination, const void* source, std::int64_t bytes, void* stream = nullptr);
void copy_to_host(int device, void* destination, const void* source, std::int64_t bytes, void* stream = nullptr);
// A stream of the device's own. Blocking: the legacy default stream still orders against it;
// non-blocking (as PyTorch's side streams are): nothing on the default stream does.
void* create_stream(int device, bool non_blocking = false);
void destroy_stream(void* stream);
// Device-to-device copy, synchronised: the bandwidth baseline of the benchmarks.
void copy_on_device(int device, void* destination, const void* source, std::int64_t bytes);
}  // namespace cuda

}  // namespace bitparity
