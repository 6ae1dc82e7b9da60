// Entry points: validate every argument, then dispatch to the launcher of the tensors' device.
#include "bitparity/kernels/quantize.hpp"

#include <sstream>

#include "bitparity/kernels/errors.hpp"

namespace bitparity {

namespace {

void require_dtype(const TensorView& view, DType dtype, const char* role) {
  if (view.dtype != dtype) {
    throw Error(ErrorCode::dtype_mismatch, std::string(role) + " must be " + dtype_name(dtype) + ", got " +
                                               dtype_name(view.dtype));
  }
}

void require_float(const TensorView& view, const char* role) {
  if (!is_float_dtype(view.dtype)) {
    throw Error(ErrorCode::dtype_mismatch,
                std::string(role) + " must be f32, f16 or bf16, got " + dtype_name(view.dtype));
  }
}

// A contiguous 1-D buffer of at least `elements` elements.
void require_buffer(const TensorView& view, std::int64_t elements, const char* role) {
  validate_output(view, role);
  if (!view.index.contiguous || view.index.offset != 0 || view.numel() < elements) {
    throw Error(ErrorCode::invalid_argument, std::string(role) + " must be a contiguous buffer of " +
                                                 std::to_string(elements) + " elements starting at offset 0, got " +
                                                 view.describe());
  }
}

void require_same_device(const Device& expected, const TensorView& view, const char* role) {
  if (!(view.device == expected)) {
    throw Error(ErrorCode::device_mismatch, std::string(role) + " is on " + view.device.str() + " but the input is on " +
                                                expected.str() + "; move it to " + expected.str());
  }
}

void require_device_available(const Device& device) {
  if (device.kind == DeviceKind::cuda) {
    if (!cuda_built()) {
      throw Error(ErrorCode::device_unavailable,
                  "tensors are on " + device.str() + " but this build has no CUDA launchers (nvcc was not found)");
    }
    if (device.index >= cuda_device_count()) {
      throw Error(ErrorCode::device_unavailable, "tensors are on " + device.str() + " but " +
                                                     std::to_string(cuda_device_count()) + " CUDA devices are present");
    }
  }
}

}  // namespace

std::string LaunchConfig::describe() const {
  std::ostringstream out;
  out << "threads=" << threads << " max_grid=" << max_grid << " blocks_per_launch=" << blocks_per_launch;
  if (!synchronize) out << " synchronize=false";
  return out.str();
}

std::int64_t block_count(std::int64_t numel, std::int64_t blocksize) { return (numel + blocksize - 1) / blocksize; }

QuantizeReport quantize_blockwise(const TensorView& input, QuantFormat format, std::int64_t blocksize,
                                  const QuantizeOutputs& outputs, const StochasticRounding& rounding,
                                  const LaunchConfig& launch) {
  validate_block_size(format, blocksize);
  require_float(input, "quantize input");
  validate_input(input, "quantize input");
  const CodeTable& table = code_table(format);
  const std::int64_t numel = input.numel();
  const std::int64_t blocks = block_count(numel, blocksize);
  require_dtype(outputs.codes, table.bits == 4 ? DType::packed4 : DType::u8, "quantize codes");
  require_buffer(outputs.codes, numel, "quantize codes");
  require_dtype(outputs.absmax, DType::f32, "quantize absmax");
  require_buffer(outputs.absmax, blocks, "quantize absmax");
  require_dtype(outputs.nonfinite, DType::u8, "quantize nonfinite flags");
  require_buffer(outputs.nonfinite, blocks, "quantize nonfinite flags");
  for (const TensorView* view : {&outputs.codes, &outputs.absmax, &outputs.nonfinite}) {
    require_same_device(input.device, *view, "a quantize output");
  }
  require_device_available(input.device);

  QuantizeReport report;
  report.blocks = blocks;
  if (numel == 0) return report;
  QuantizeParams params;
  params.input = input.data;
  params.input_dtype = input.dtype;
  params.input_index = input.index;
  params.numel = numel;
  params.blocksize = blocksize;
  params.codes = static_cast<std::uint8_t*>(outputs.codes.data);
  params.absmax = static_cast<float*>(outputs.absmax.data);
  params.nonfinite = static_cast<std::uint8_t*>(outputs.nonfinite.data);
  params.rounding = rounding;

  const std::uint8_t* flags = params.nonfinite;
  std::vector<std::uint8_t> device_flags;
  if (input.device.kind == DeviceKind::cpu) {
    cpu::quantize(table, params, launch);
  } else {
    const std::int64_t flagged = cuda::quantize(input.device.index, format, params, launch);
    report.counted = launch.synchronize;
    if (flagged == 0) return report;
    device_flags.resize(static_cast<std::size_t>(blocks));
    cuda::copy_to_host(input.device.index, device_flags.data(), params.nonfinite, blocks, launch.cuda_stream);
    flags = device_flags.data();
  }
  for (std::int64_t b = 0; b < blocks; ++b) {
    if (flags[b]) report.nonfinite_blocks.push_back(b);
  }
  return report;
}

void dequantize_blockwise(const TensorView& codes, const TensorView& absmax, QuantFormat format,
                          std::int64_t blocksize, const TensorView& output, const LaunchConfig& launch) {
  validate_block_size(format, blocksize);
  require_float(output, "dequantize output");
  validate_output(output, "dequantize output");
  const CodeTable& table = code_table(format);
  const std::int64_t numel = output.numel();
  require_dtype(codes, table.bits == 4 ? DType::packed4 : DType::u8, "dequantize codes");
  validate_input(codes, "dequantize codes");
  if (!codes.index.contiguous || codes.index.offset != 0 || codes.numel() < numel) {
    throw Error(ErrorCode::invalid_argument, "dequantize codes must be a contiguous buffer of " +
                                                 std::to_string(numel) + " codes, got " + codes.describe());
  }
  require_dtype(absmax, DType::f32, "dequantize absmax");
  validate_input(absmax, "dequantize absmax");
  if (!absmax.index.contiguous || absmax.index.offset != 0 || absmax.numel() < block_count(numel, blocksize)) {
    throw Error(ErrorCode::invalid_argument, "dequantize absmax must be a contiguous buffer of " +
                                                 std::to_string(block_count(numel, blocksize)) + " values, got " +
                                                 absmax.describe());
  }
  require_same_device(output.device, codes, "dequantize codes");
  require_same_device(output.device, absmax, "dequantize absmax");
  require_device_available(output.device);
  if (numel == 0) return;
  DequantizeParams params;
  params.codes = static_cast<const std::uint8_t*>(codes.data);
  params.absmax = static_cast<const float*>(absmax.data);
  params.numel = numel;
  params.blocksize = blocksize;
  params.bits = table.bits;
  params.output = output.data;
  params.output_dtype = output.dtype;
  params.output_index = output.index;
  if (output.device.kind == DeviceKind::cpu) {
    cpu::dequantize(table, params, launch);
  } else {
    cuda::dequantize(output.device.index, format, params, launch);
  }
}

void convert(const TensorView& input, const TensorView& output, const LaunchConfig& launch) {
  require_float(input, "convert input");
  require_float(output, "convert output");
  validate_input(input, "convert input");
  validate_output(output, "convert output");
  if (input.numel() != output.numel()) {
    throw Error(ErrorCode::invalid_argument, "convert input has " + std::to_string(input.numel()) +
                                                 " elements but the output has " + std::to_string(output.numel()));
  }
  require_same_device(input.device, output, "convert output");
  require_device_available(input.device);
  if (input.numel() == 0) return;
  ConvertParams params{input.data, input.dtype, input.index, output.data, output.dtype, output.index, input.numel()};
  if (input.device.kind == DeviceKind::cpu) {
    cpu::convert(params, launch);
  } else {
    cuda::convert(input.device.index, params, launch);
  }
}

}  // namespace bitparity
