// Quantize and dequantize throughput, as GB/s and as a ratio to a plain copy of the same bytes on
// the same device measured in the same run (counters GBps, copy_GBps, ratio_to_copy).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "bitparity/kernels/quantize.hpp"

namespace bitparity {
namespace {

constexpr std::int64_t kElements = 1 << 24;
constexpr std::int64_t kBlocksize = 256;

double seconds_of(auto&& work, int repeats) {
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
}

// The CPU copy baseline uses the same threads as the launcher.
void parallel_copy(std::uint8_t* destination, const std::uint8_t* source, std::int64_t bytes) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    const std::int64_t lo = bytes * t / threads, hi = bytes * (t + 1) / threads;
    workers.emplace_back([=] { std::memcpy(destination + lo, source + lo, hi - lo); });
  }
  for (auto& worker : workers) worker.join();
}

struct Buffers {
  Device device;
  void* input = nullptr;
  void* codes = nullptr;
  void* absmax = nullptr;
  void* flags = nullptr;
  void* scratch = nullptr;  // copy destination
  std::vector<std::uint8_t> host_storage;
  std::int64_t input_bytes = 0;

  Buffers(Device where, DType dtype, int bits) : device(where) {
    input_bytes = dtype_storage_bytes(dtype, kElements);
    const std::int64_t code_bytes = bits == 4 ? kElements / 2 : kElements;
    const std::int64_t blocks = kElements / kBlocksize;
    std::vector<std::uint8_t> values(input_bytes);
    std::mt19937 rng(1);
    for (std::int64_t i = 0; i < input_bytes; i += 4) {
      const float x = std::normal_distribution<float>()(rng);
      std::memcpy(&values[i], &x, std::min<std::int64_t>(4, input_bytes - i));
    }
    if (dtype != DType::f32) {  // keep 16-bit patterns finite: clear the exponent's top bit
      for (std::int64_t i = 1; i < input_bytes; i += 2) values[i] &= 0xBF;
    }
    const std::int64_t sizes[] = {input_bytes, code_bytes, blocks * 4, blocks, input_bytes};
    void** slots[] = {&input, &codes, &absmax, &flags, &scratch};
    if (where.kind == DeviceKind::cpu) {
      std::int64_t total = 0;
      for (auto size : sizes) total += size + 64;
      host_storage.assign(total, 0);
      std::int64_t at = 0;
      for (int i = 0; i < 5; ++i) {
        *slots[i] = host_storage.data() + at;
        at += sizes[i] + 64;
      }
      std::memcpy(input, values.data(), input_bytes);
    } else {
      for (int i = 0; i < 5; ++i) *slots[i] = cuda::allocate(where.index, sizes[i]);
      cuda::copy_to_device(where.index, input, values.data(), input_bytes);
    }
  }
  ~Buffers() {
    if (device.kind == DeviceKind::cuda) {
      for (void* p : {input, codes, absmax, flags, scratch}) cuda::release(p);
    }
  }

  void copy(std::int64_t bytes) {
    bytes = std::min(bytes, input_bytes);
    if (device.kind == DeviceKind::cpu) {
      parallel_copy(static_cast<std::uint8_t*>(scratch), static_cast<const std::uint8_t*>(input), bytes);
    } else {
      cuda::copy_on_device(device.index, scratch, input, bytes);
    }
  }
};

TensorView flat(void* data, DType dtype, Device device, std::int64_t n) {
  TensorView view = contiguous_view(data, dtype, device, {n});
  return view;
}

// `seconds` is the wall time of the timed loop. A copy reads and writes its bytes: copying
// bytes_moved / 2 moves the same traffic as the kernel.
void report(benchmark::State& state, Buffers& buffers, std::int64_t bytes_moved, double seconds) {
  const double copy_seconds = seconds_of([&] { buffers.copy(bytes_moved / 2); }, 5);
  const double copy_rate = static_cast<double>(bytes_moved) / copy_seconds;
  const double rate = static_cast<double>(bytes_moved) * state.iterations() / seconds;
  state.SetBytesProcessed(state.iterations() * bytes_moved);
  state.counters["GBps"] = rate / 1e9;
  state.counters["copy_GBps"] = copy_rate / 1e9;
  state.counters["ratio_to_copy"] = rate / copy_rate;
}

void quantize_benchmark(benchmark::State& state, QuantFormat format, DType dtype, Device device) {
  if (device.kind == DeviceKind::cuda && device.index >= cuda_device_count()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const int bits = quant_format_info(format).bits;
  Buffers buffers(device, dtype, bits);
  const std::int64_t blocks = kElements / kBlocksize;
  const QuantizeOutputs outputs{flat(buffers.codes, bits == 4 ? DType::packed4 : DType::u8, device, kElements),
                                flat(buffers.absmax, DType::f32, device, blocks), flat(buffers.flags, DType::u8, device, blocks)};
  const TensorView input = flat(buffers.input, dtype, device, kElements);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) quantize_blockwise(input, format, kBlocksize, outputs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::int64_t moved = buffers.input_bytes + dtype_storage_bytes(bits == 4 ? DType::packed4 : DType::u8, kElements) + blocks * 5;
  report(state, buffers, moved, seconds);
}

void dequantize_benchmark(benchmark::State& state, QuantFormat format, DType dtype, Device device) {
  if (device.kind == DeviceKind::cuda && device.index >= cuda_device_count()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const int bits = quant_format_info(format).bits;
  Buffers buffers(device, dtype, bits);
  const std::int64_t blocks = kElements / kBlocksize;
  const TensorView codes = flat(buffers.codes, bits == 4 ? DType::packed4 : DType::u8, device, kElements);
  const TensorView absmax = flat(buffers.absmax, DType::f32, device, blocks);
  const TensorView output = flat(buffers.input, dtype, device, kElements);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) dequantize_blockwise(codes, absmax, format, kBlocksize, output);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::int64_t moved = buffers.input_bytes + dtype_storage_bytes(bits == 4 ? DType::packed4 : DType::u8, kElements) + blocks * 4;
  report(state, buffers, moved, seconds);
}

void register_all() {
  std::vector<Device> devices = {Device::cpu()};
  for (int d = 0; d < cuda_device_count(); ++d) devices.push_back(Device::cuda(d));
  for (const Device& device : devices) {
    for (const auto& info : quant_formats()) {
      for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
        const std::string suffix = std::string(info.name) + "/" + dtype_name(dtype) + "/" + device.str();
        benchmark::RegisterBenchmark(("quantize/" + suffix).c_str(), quantize_benchmark, info.format, dtype, device)
            ->UseRealTime()->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("dequantize/" + suffix).c_str(), dequantize_benchmark, info.format, dtype, device)
            ->UseRealTime()->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace
}  // namespace bitparity

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  bitparity::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
