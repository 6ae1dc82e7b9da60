// The contiguous fast kernels over tensors many times their grid: each warp of the quantize and the
// 8-bit step takes several quant blocks in turn, and each thread of the dequantize several units.
// The property cases (a few thousand elements) fill a GPU's resident grid once at most, so only
// here do the grid-stride loops of the fast kernels go round; they must give the CPU's bits. The
// same comparison runs on the CPU too (the default launch against one worker thread, on a smaller
// tensor), so the comparison itself is known to work on a machine without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bitparity/fixtures/gtest_environment.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/quantize.hpp"

namespace bitparity {
namespace {

// 2^25 elements. On an H100 (132 SMs): at block size 64, 2^19 quant blocks against the ~5000 warps
// resident for the quantize (about 100 turns of its loop); 2^17 blocks of 256 against the ~4200 of
// the 8-bit step (about 30); 2^22 units of 8 f16/bf16 outputs (2^23 of 4 f32) against the dequantize's
// 1056 x 256 threads of 4 units a turn (about 4 and 8 turns). Odd, so that every kernel has a tail.
constexpr std::int64_t kGpuElements = (std::int64_t{1} << 25) + 77;
constexpr std::int64_t kCpuElements = (std::int64_t{1} << 16) + 77;

// Bytes on a device (CUDA memory, or host memory for the CPU), read back on request.
class Buffer {
 public:
  Buffer(Device device, const std::vector<std::uint8_t>& bytes) : device_(device), host_(bytes) {
    if (device_.kind == DeviceKind::cuda) {
      pointer_ = cuda::allocate(device_.index, static_cast<std::int64_t>(bytes.size()));
      cuda::copy_to_device(device_.index, pointer_, bytes.data(), static_cast<std::int64_t>(bytes.size()));
    }
  }
  ~Buffer() {
    if (pointer_ != nullptr) cuda::release(pointer_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  TensorView view(DType dtype, std::int64_t elements) {
    return contiguous_view(pointer_ != nullptr ? pointer_ : host_.data(), dtype, device_, {elements});
  }
  std::vector<std::uint8_t> read() {
    if (pointer_ != nullptr) cuda::copy_to_host(device_.index, host_.data(), pointer_, static_cast<std::int64_t>(host_.size()));
    return host_;
  }

 private:
  Device device_;
  std::vector<std::uint8_t> host_;
  void* pointer_ = nullptr;
};

std::vector<std::uint8_t> bytes_of_floats(const std::vector<float>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Values whose runs of 64 span the magnitudes `dtype` holds as normal numbers (2^-30 to 2^30; f16
// 2^-14 to 2^14, so that its blocks stay finite); `nonfinite` plants a NaN in one run of 997 and an
// infinity in one of 1009.
std::vector<float> spread_values(std::int64_t n, float scale, bool nonfinite, DType dtype) {
  const int binades = dtype == DType::f16 ? 29 : 61;
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t run = i / 64;
    const float magnitude = std::ldexp(scale, static_cast<int>((run * 37) % binades) - binades / 2);
    float v = magnitude * static_cast<float>((i * 7919) % 2001 - 1000) / 1000.0f;
    if (nonfinite && run % 997 == 5 && i % 64 == 17) v = std::numeric_limits<float>::quiet_NaN();
    if (nonfinite && run % 1009 == 7 && i % 64 == 3) v = -std::numeric_limits<float>::infinity();
    values[static_cast<std::size_t>(i)] = v;
  }
  return values;
}

// The values in `dtype` (rounded to nearest even by the CPU's convert).
std::vector<std::uint8_t> in_dtype(const std::vector<float>& values, DType dtype) {
  std::vector<std::uint8_t> f32 = bytes_of_floats(values);
  if (dtype == DType::f32) return f32;
  const auto n = static_cast<std::int64_t>(values.size());
  std::vector<std::uint8_t> narrow(static_cast<std::size_t>(dtype_storage_bytes(dtype, n)));
  convert(contiguous_view(f32.data(), DType::f32, Device::cpu(), {n}), contiguous_view(narrow.data(), dtype, Device::cpu(), {n}));
  return narrow;
}

// "" when equal; otherwise how many `width`-byte elements differ and the first of them.
std::string difference(const std::vector<std::uint8_t>& expected, const std::vector<std::uint8_t>& actual, int width) {
  if (expected.size() != actual.size()) return "sizes differ: " + std::to_string(expected.size()) + " vs " + std::to_string(actual.size());
  std::int64_t differing = 0, first = -1;
  for (std::size_t e = 0; e + width <= expected.size(); e += width) {
    if (std::memcmp(&expected[e], &actual[e], width) != 0) {
      if (first < 0) first = static_cast<std::int64_t>(e / width);
      ++differing;
    }
  }
  if (differing == 0) return "";
  auto hex = [&](const std::vector<std::uint8_t>& bytes) {
    std::uint32_t word = 0;
    std::memcpy(&word, &bytes[static_cast<std::size_t>(first * width)], width);
    char text[16];
    std::snprintf(text, sizeof text, "0x%0*x", 2 * width, word);
    return std::string(text);
  };
  return std::to_string(differing) + " elements differ; first: element " + std::to_string(first) + ", expected " +
         hex(expected) + " got " + hex(actual);
}

struct QuantRun {
  std::vector<std::uint8_t> codes, absmax, flags, dequantized;
};

// Quantize `input` (n elements of `dtype`) and dequantize its codes back into `dtype`.
QuantRun quantize_and_back(Device device, QuantFormat format, DType dtype, std::int64_t blocksize,
                           const std::vector<std::uint8_t>& input, std::int64_t n, const LaunchConfig& launch) {
  const DType code_dtype = quant_format_info(format).bits == 4 ? DType::packed4 : DType::u8;
  const std::int64_t blocks = block_count(n, blocksize);
  Buffer in(device, input), codes(device, std::vector<std::uint8_t>(static_cast<std::size_t>(dtype_storage_bytes(code_dtype, n)), 0xA5)),
      absmax(device, std::vector<std::uint8_t>(static_cast<std::size_t>(4 * blocks), 0xA5)),
      flags(device, std::vector<std::uint8_t>(static_cast<std::size_t>(blocks), 0xA5)),
      out(device, std::vector<std::uint8_t>(static_cast<std::size_t>(dtype_storage_bytes(dtype, n)), 0xA5));
  const QuantizeOutputs outputs{codes.view(code_dtype, n), absmax.view(DType::f32, blocks), flags.view(DType::u8, blocks)};
  quantize_blockwise(in.view(dtype, n), format, blocksize, outputs, {}, launch);
  dequantize_blockwise(outputs.codes, outputs.absmax, format, blocksize, out.view(dtype, n), launch);
  return {codes.read(), absmax.read(), flags.read(), out.read()};
}

// Every quantize and dequantize of `device` (its default launch: the fast kernels) against `baseline`.
void expect_quantization_as(Device device, const LaunchConfig& launch, Device baseline, const LaunchConfig& baseline_launch,
                            std::int64_t n) {
  for (QuantFormat format : {parse_quant_format("dynamic8-signed"), parse_quant_format("nf4")}) {
    for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
      const std::vector<std::uint8_t> input = in_dtype(spread_values(n, 1.0f, true, dtype), dtype);
      for (std::int64_t blocksize : {64, 256}) {
        const std::string what = std::string(quant_format_info(format).name) + " " + dtype_name(dtype) + " blocksize " +
                                 std::to_string(blocksize) + ", " + std::to_string(n) + " elements, " + device.str() +
                                 " vs " + baseline.str() + ": ";
        const QuantRun expected = quantize_and_back(baseline, format, dtype, blocksize, input, n, baseline_launch);
        const QuantRun actual = quantize_and_back(device, format, dtype, blocksize, input, n, launch);
        EXPECT_EQ(difference(expected.codes, actual.codes, 1), "") << what << "codes (bytes)";
        EXPECT_EQ(difference(expected.absmax, actual.absmax, 4), "") << what << "absmax";
        EXPECT_EQ(difference(expected.flags, actual.flags, 1), "") << what << "non-finite flags";
        EXPECT_EQ(difference(expected.dequantized, actual.dequantized, dtype == DType::f32 ? 4 : 2), "") << what << "dequantized";
      }
    }
  }
}

struct Step8Run {
  Step8Report report;
  std::vector<std::uint8_t> param;
  std::vector<std::vector<std::uint8_t>> codes, absmax;
};

// One 8-bit step of `kind` from fixed states: codes spread over the map, absmax varied per block.
// `map`: the map of every state (empty: each state's own).
Step8Run step8(Device device, OptimizerKind kind, DType dtype, std::int64_t blocksize, std::int64_t n, const LaunchConfig& launch,
               std::optional<QuantFormat> map = {}) {
  std::vector<float> param_values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) param_values[static_cast<std::size_t>(i)] = 1.0f + static_cast<float>((i * 104729) % 4001 - 2000) / 4000.0f;
  Buffer param(device, in_dtype(param_values, dtype)), grad(device, in_dtype(spread_values(n, 1e-3f, false, dtype), dtype));
  const std::int64_t blocks = block_count(n, blocksize);
  const int states = optimizer_info(kind).states;
  std::vector<std::unique_ptr<Buffer>> storage;
  std::vector<QuantizedState> quantized;
  for (int k = 0; k < states; ++k) {
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) codes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i * 131 + k * 17 + i / 997) % 256);
    std::vector<float> absmax(static_cast<std::size_t>(blocks));
    for (std::int64_t b = 0; b < blocks; ++b) absmax[static_cast<std::size_t>(b)] = std::ldexp(1e-3f, static_cast<int>(b % 11) - 5);
    storage.push_back(std::make_unique<Buffer>(device, codes));
    storage.push_back(std::make_unique<Buffer>(device, bytes_of_floats(absmax)));
    quantized.push_back({storage[storage.size() - 2]->view(DType::u8, n), storage.back()->view(DType::f32, blocks), map});
  }
  Hyperparameters h = typical_hyperparameters(kind);
  h.step = 3;
  Step8Run run;
  run.report = optimizer8_step(kind, h, param.view(dtype, n), grad.view(dtype, n), quantized, blocksize, launch);
  run.param = param.read();
  for (int k = 0; k < states; ++k) {
    run.codes.push_back(storage[static_cast<std::size_t>(2 * k)]->read());
    run.absmax.push_back(storage[static_cast<std::size_t>(2 * k + 1)]->read());
  }
  return run;
}

// One step of `kind` on `device` against `baseline`, compared bit for bit.
void expect_8bit_step_as(Device device, const LaunchConfig& launch, Device baseline, const LaunchConfig& baseline_launch,
                         std::int64_t n, OptimizerKind kind, DType dtype, std::optional<QuantFormat> map,
                         const std::string& what) {
  const Step8Run expected = step8(baseline, kind, dtype, 256, n, baseline_launch, map);
  const Step8Run actual = step8(device, kind, dtype, 256, n, launch, map);
  // A step that saw a non-finite gradient writes nothing: equal, and checking nothing.
  ASSERT_FALSE(expected.report.nonfinite_gradient) << what << "the baseline skipped the step";
  ASSERT_FALSE(actual.report.nonfinite_gradient) << what << "the step was skipped";
  EXPECT_EQ(expected.report.nonfinite_state_blocks, actual.report.nonfinite_state_blocks) << what << "non-finite state blocks";
  EXPECT_EQ(difference(expected.param, actual.param, dtype == DType::f32 ? 4 : 2), "") << what << "parameter";
  for (std::size_t k = 0; k < expected.codes.size(); ++k) {
    EXPECT_EQ(difference(expected.codes[k], actual.codes[k], 1), "") << what << "state " << k << " codes";
    EXPECT_EQ(difference(expected.absmax[k], actual.absmax[k], 4), "") << what << "state " << k << " absmax";
  }
}

void expect_8bit_steps_as(Device device, const LaunchConfig& launch, Device baseline, const LaunchConfig& baseline_launch,
                          std::int64_t n) {
  const std::string sizes = ", blocksize 256, " + std::to_string(n) + " elements, " + device.str() + " vs " + baseline.str() + ": ";
  int stepped = 0;
  for (const OptimizerInfo& info : optimizers()) {
    if (!has_8bit_variant(info.kind)) continue;
    for (DType dtype : {DType::f32, DType::bf16}) {
      const std::string what = std::string(info.name) + " 8-bit, " + dtype_name(dtype) + " parameter" + sizes;
      expect_8bit_step_as(device, launch, baseline, baseline_launch, n, info.kind, dtype, {}, what);
      ++stepped;
    }
  }
  EXPECT_GE(stepped, 2) << "no 8-bit optimizer was stepped";
  // Two states of the densest built-in map (linear8-fused: 7422 finer-index entries, 29.7 KB a
  // state): the only default-launch shape whose two-state CUDA step asks for more shared memory than
  // a block gets without opting in (Adam's own maps take 45.6 KB, the three-state ones opt in anyway).
  const QuantFormat dense = parse_quant_format("linear8-fused");
  ASSERT_GT(4 * 2 * nearest_entry_count(code_table(dense)), 48 * 1024 - 2 * 1024) << "linear8-fused no longer needs the opt-in";
  expect_8bit_step_as(device, launch, baseline, baseline_launch, n, OptimizerKind::adam, DType::f32, dense,
                      "adam 8-bit, both states in linear8-fused, f32 parameter" + sizes);
}

TEST(GridStride, CpuComparisonOfQuantizationHolds) {
  LaunchConfig one_thread;
  one_thread.threads = 1;
  expect_quantization_as(Device::cpu(), {}, Device::cpu(), one_thread, kCpuElements);
}

TEST(GridStride, CpuComparisonOf8BitStepsHolds) {
  LaunchConfig one_thread;
  one_thread.threads = 1;
  expect_8bit_steps_as(Device::cpu(), {}, Device::cpu(), one_thread, kCpuElements);
}

TEST(GridStrideGpu, FastQuantizeAndDequantizeGoRoundTheirGridAndGiveTheCpuBits) {
  BITPARITY_REQUIRE_CUDA();
  expect_quantization_as(Device::cuda(0), {}, Device::cpu(), {}, kGpuElements);
}

TEST(GridStrideGpu, Fast8BitStepsGoRoundTheirGridAndGiveTheCpuBits) {
  BITPARITY_REQUIRE_CUDA();
  expect_8bit_steps_as(Device::cuda(0), {}, Device::cpu(), {}, kGpuElements);
}

}  // namespace
}  // namespace bitparity
