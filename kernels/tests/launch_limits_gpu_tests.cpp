// Every CUDA entry point launched with the largest block a LaunchConfig may ask for (1024 threads)
// runs, and gives the default launch's bits. The quantize kernel once needed 72 registers a thread,
// so a 1024-thread launch failed on the H100 with cudaErrorLaunchOutOfResources; __launch_bounds__
// now caps every kernel for the block sizes it is launched with. A launch on a stream of the
// caller's own (LaunchConfig::cuda_stream) gives the same bits too, and so does one there that
// returns without waiting (LaunchConfig::synchronize false): its results are read after the stream.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "bitparity/fixtures/gtest_environment.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/quantize.hpp"

namespace bitparity {
namespace {

constexpr std::int64_t kElements = 3 * 4096 + 77;
const LaunchConfig kWidest{1024, 0, 0};

// A stream of the test's own on device 0.
class OwnStream {
 public:
  explicit OwnStream(bool non_blocking = false) : stream_(cuda::create_stream(0, non_blocking)) {}
  ~OwnStream() { cuda::destroy_stream(stream_); }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  LaunchConfig launch() const {
    LaunchConfig config;
    config.cuda_stream = stream_;
    return config;
  }

 private:
  void* stream_;
};

// The default launch, the widest blocks, the default launch on a stream of its own, and that launch
// unsynchronised (quantize, dequantize and convert; the optimizer steps always wait).
constexpr int kLaunches = 4;
LaunchConfig launch_number(int run, const OwnStream& stream) {
  if (run < 2) return run == 0 ? LaunchConfig{} : kWidest;
  LaunchConfig launch = stream.launch();
  launch.synchronize = run == 2;
  return launch;
}

// A device buffer initialised from host bytes, read back on request.
class DeviceBytes {
 public:
  explicit DeviceBytes(const std::vector<std::uint8_t>& bytes) : size_(static_cast<std::int64_t>(bytes.size())) {
    pointer_ = cuda::allocate(0, size_);
    cuda::copy_to_device(0, pointer_, bytes.data(), size_);
  }
  ~DeviceBytes() { cuda::release(pointer_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* get() const { return pointer_; }
  std::vector<std::uint8_t> read() const {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size_));
    cuda::copy_to_host(0, bytes.data(), pointer_, size_);
    return bytes;
  }

 private:
  void* pointer_ = nullptr;
  std::int64_t size_ = 0;
};

std::vector<std::uint8_t> float_bytes(std::int64_t n, float scale) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = scale * static_cast<float>((i * 7919) % 2001 - 1000) / 1000.0f;
  std::vector<std::uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<std::uint8_t> positive_float_bytes(std::int64_t n, float value) {
  const std::vector<float> values(static_cast<std::size_t>(n), value);
  std::vector<std::uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(LaunchLimitsGpu, QuantizeAndDequantizeWithTheWidestBlocks) {
  BITPARITY_REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  for (const auto& info : quant_formats()) {
    const DType code_dtype = info.bits == 4 ? DType::packed4 : DType::u8;
    const std::int64_t blocksize = 4096, blocks = (kElements + blocksize - 1) / blocksize;
    const OwnStream stream;
    std::vector<std::uint8_t> results[kLaunches];
    for (int run = 0; run < kLaunches; ++run) {
      const LaunchConfig launch = launch_number(run, stream);
      DeviceBytes input(float_bytes(kElements, 3.0f));
      DeviceBytes codes(std::vector<std::uint8_t>(static_cast<std::size_t>(dtype_storage_bytes(code_dtype, kElements))));
      DeviceBytes absmax(std::vector<std::uint8_t>(static_cast<std::size_t>(blocks * 4)));
      DeviceBytes flags(std::vector<std::uint8_t>(static_cast<std::size_t>(blocks)));
      DeviceBytes output(std::vector<std::uint8_t>(static_cast<std::size_t>(kElements * 4)));
      const QuantizeOutputs outputs{contiguous_view(codes.get(), code_dtype, gpu, {kElements}),
                                    contiguous_view(absmax.get(), DType::f32, gpu, {blocks}),
                                    contiguous_view(flags.get(), DType::u8, gpu, {blocks})};
      QuantizeReport report;
      ASSERT_NO_THROW(report = quantize_blockwise(contiguous_view(input.get(), DType::f32, gpu, {kElements}), info.format,
                                                  blocksize, outputs, {}, launch))
          << info.name;
      EXPECT_EQ(report.counted, launch.synchronize) << info.name << ": an unsynchronised quantize cannot have counted";
      ASSERT_NO_THROW(dequantize_blockwise(outputs.codes, outputs.absmax, info.format, blocksize,
                                           contiguous_view(output.get(), DType::f32, gpu, {kElements}), launch))
          << info.name;
      ASSERT_NO_THROW(convert(contiguous_view(input.get(), DType::f32, gpu, {kElements}),
                              contiguous_view(output.get(), DType::bf16, gpu, {kElements}), launch))
          << info.name;
      results[run] = codes.read();
      const auto values = output.read();
      results[run].insert(results[run].end(), values.begin(), values.end());
    }
    EXPECT_EQ(results[0], results[1]) << info.name << ": the widest launch changed a bit";
    EXPECT_EQ(results[0], results[2]) << info.name << ": the launch on a stream of its own changed a bit";
    EXPECT_EQ(results[0], results[3]) << info.name << ": the unsynchronised launch changed a bit";
  }
}

TEST(LaunchLimitsGpu, OptimizerStepsWithTheWidestBlocks) {
  BITPARITY_REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  for (const auto& info : optimizers()) {
    const OwnStream stream;
    std::vector<std::uint8_t> results[kLaunches];
    for (int run = 0; run < kLaunches; ++run) {
      const LaunchConfig launch = launch_number(run, stream);
      DeviceBytes param(float_bytes(kElements, 1.0f)), grad(float_bytes(kElements, 0.01f));
      std::vector<std::unique_ptr<DeviceBytes>> states;
      std::vector<TensorView> views;
      for (int k = 0; k < info.states; ++k) {
        states.push_back(std::make_unique<DeviceBytes>(float_bytes(kElements, 1e-3f)));
        views.push_back(contiguous_view(states.back()->get(), DType::f32, gpu, {kElements}));
      }
      Hyperparameters h = typical_hyperparameters(info.kind);
      h.step = 2;
      ASSERT_NO_THROW(optimizer_step(info.kind, h, contiguous_view(param.get(), DType::f32, gpu, {kElements}),
                                     contiguous_view(grad.get(), DType::f32, gpu, {kElements}), views, launch))
          << info.name;
      results[run] = param.read();
      if (!has_8bit_variant(info.kind)) continue;
      const std::int64_t blocksize = 256, blocks = (kElements + blocksize - 1) / blocksize;
      std::vector<std::unique_ptr<DeviceBytes>> storage;
      std::vector<QuantizedState> quantized;
      for (int k = 0; k < info.states; ++k) {
        storage.push_back(std::make_unique<DeviceBytes>(std::vector<std::uint8_t>(static_cast<std::size_t>(kElements), 0x80)));
        storage.push_back(std::make_unique<DeviceBytes>(positive_float_bytes(blocks, 1e-3f)));
        quantized.push_back({contiguous_view(storage[storage.size() - 2]->get(), DType::u8, gpu, {kElements}),
                             contiguous_view(storage.back()->get(), DType::f32, gpu, {blocks})});
      }
      ASSERT_NO_THROW(optimizer8_step(info.kind, h, contiguous_view(param.get(), DType::f32, gpu, {kElements}),
                                      contiguous_view(grad.get(), DType::f32, gpu, {kElements}), quantized, blocksize, launch))
          << info.name << " (8-bit)";
      const auto after = param.read();
      results[run].insert(results[run].end(), after.begin(), after.end());
    }
    EXPECT_EQ(results[0], results[1]) << info.name << ": the widest launch changed a bit";
    EXPECT_EQ(results[0], results[2]) << info.name << ": the launch on a stream of its own changed a bit";
    EXPECT_EQ(results[0], results[3]) << info.name << ": a step asked not to synchronise changed a bit";
  }
}

// The first call of a format in a process uploads its code table with a cudaMemcpy from pageable
// memory, which may return before the copy lands and orders only the legacy default stream: a
// kernel queued at once on a non-blocking stream could read a half-written table. The upload now
// waits. Each test runs in a process of its own (gtest_discover_tests), so here every format's
// first call is the one on the non-blocking stream; a race shows as codes that differ from the
// same call made after the upload (not on every run: it is a race).
TEST(LaunchLimitsGpu, FirstTablesUploadedForANonBlockingStream) {
  BITPARITY_REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  const OwnStream stream(true);
  for (const auto& info : quant_formats()) {
    const DType code_dtype = info.bits == 4 ? DType::packed4 : DType::u8;
    const std::int64_t blocksize = 64, blocks = (kElements + blocksize - 1) / blocksize;
    std::vector<std::uint8_t> results[2];
    for (int run = 0; run < 2; ++run) {
      LaunchConfig launch = run == 0 ? stream.launch() : LaunchConfig{};
      launch.synchronize = false;
      DeviceBytes input(float_bytes(kElements, 3.0f));
      DeviceBytes codes(std::vector<std::uint8_t>(static_cast<std::size_t>(dtype_storage_bytes(code_dtype, kElements))));
      DeviceBytes absmax(std::vector<std::uint8_t>(static_cast<std::size_t>(blocks * 4)));
      DeviceBytes flags(std::vector<std::uint8_t>(static_cast<std::size_t>(blocks)));
      const QuantizeOutputs outputs{contiguous_view(codes.get(), code_dtype, gpu, {kElements}),
                                    contiguous_view(absmax.get(), DType::f32, gpu, {blocks}),
                                    contiguous_view(flags.get(), DType::u8, gpu, {blocks})};
      ASSERT_NO_THROW(quantize_blockwise(contiguous_view(input.get(), DType::f32, gpu, {kElements}), info.format, blocksize, outputs,
                                         {}, launch))
          << info.name;
      // Read back on the stream the codes were written on: the default stream does not wait for a
      // non-blocking one.
      results[run].resize(static_cast<std::size_t>(dtype_storage_bytes(code_dtype, kElements)));
      cuda::copy_to_host(0, results[run].data(), codes.get(), static_cast<std::int64_t>(results[run].size()), launch.cuda_stream);
    }
    EXPECT_EQ(results[0], results[1]) << info.name << ": the first call, on a non-blocking stream, gave other codes";
  }
}

}  // namespace
}  // namespace bitparity
