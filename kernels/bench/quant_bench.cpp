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

// One benchmark body for both directions: the timed call differs, the buffers and traffic do not.
void blockwise_benchmark(benchmark::State& state, QuantFormat format, DType dtype, Device device, bool quantize) {
  if (device.kind == DeviceKind::cuda && device.index >= cuda_device_count()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const int bits = quant_format_info(format).bits;
  const DType code_dtype = bits == 4 ? DType::packed4 : DType::u8;
  Buffers buffers(device, dtype, bits);
  const std::int64_t blocks = kElements / kBlocksize;
  const TensorView values = flat(buffers.input, dtype, device, kElements);
  const QuantizeOutputs quantized{flat(buffers.codes, code_dtype, device, kElements),
                                  flat(buffers.absmax, DType::f32, device, blocks),
                                  flat(buffers.flags, DType::u8, device, blocks)};
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
  const std::int64_t moved = buffers.input_bytes + dtype_storage_bytes(code_dtype, kElements) + blocks * (quantize ? 5 : 4);
  report(state, buffers, moved, seconds);
}

void register_all() {
  std::vector<Device> devices = {Device::cpu()};
  for (int d = 0; d < cuda_device_count(); ++d) devices.push_back(Device::cuda(d));
  for (const Device& device : devices) {
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

}  // namespace
}  // namespace bitparity

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  bitparity::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
