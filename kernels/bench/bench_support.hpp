#pragma once
// Shared pieces of the benchmarks: device buffers, per-call timing (CUDA events on a GPU, the
// steady clock on the CPU), the same-run copy baseline of the same bytes, and the counters
// median_ms, GBps, copy_GBps, ratio_to_copy and bytes_per_element (the kernel's bytes model).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bitparity/kernels/quantize.hpp"
#include "device_timer.hpp"

namespace bitparity::bench {

// The sizes the targets name; 2^28 only on a GPU (a CPU run at that size takes minutes).
inline constexpr std::int64_t kSmall = std::int64_t{1} << 24;
inline constexpr std::int64_t kLarge = std::int64_t{1} << 28;

inline std::string size_name(std::int64_t elements) {
  return elements == kLarge ? "2^28" : (elements == kSmall ? "2^24" : std::to_string(elements));
}

inline std::vector<std::int64_t> sizes_for(const Device& device) {
  if (device.kind == DeviceKind::cuda) return {kSmall, kLarge};
  return {kSmall};
}

// Finite values of `dtype` from a counter hash: cheap enough for 2^28 elements, and the same bytes
// in every run. Magnitudes spread over about 2^-20 .. 2^0, both signs.
inline std::vector<std::uint8_t> finite_values(DType dtype, std::int64_t bytes) {
  std::vector<std::uint8_t> values(static_cast<std::size_t>(bytes));
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (std::size_t i = 0; i + 4 <= values.size(); i += 4) {
    state += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = (state ^ (state >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    // f32: sign, exponent 107..126, random mantissa.
    std::uint32_t word = static_cast<std::uint32_t>(z & 0x807FFFFFu) | ((107u + static_cast<std::uint32_t>((z >> 40) % 20)) << 23);
    if (dtype == DType::f16) {  // two halves, exponents 5..14
      const auto half = [](std::uint64_t r) { return static_cast<std::uint32_t>((r & 0x83FF) | ((5 + (r >> 16) % 10) << 10)); };
      word = half(z >> 8) | (half(z >> 32) << 16);
    } else if (dtype == DType::bf16) {  // two bfloat16, exponents 107..126
      const auto brain = [](std::uint64_t r) { return static_cast<std::uint32_t>((r & 0x807F) | ((107 + (r >> 16) % 20) << 7)); };
      word = brain(z >> 8) | (brain(z >> 32) << 16);
    }
    std::memcpy(&values[i], &word, 4);
  }
  return values;
}

// The CPU copy baseline uses as many threads as the launchers.
inline void parallel_copy(std::uint8_t* destination, const std::uint8_t* source, std::int64_t bytes) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    const std::int64_t lo = bytes * t / threads, hi = bytes * (t + 1) / threads;
    workers.emplace_back([=] { std::memcpy(destination + lo, source + lo, hi - lo); });
  }
  for (auto& worker : workers) worker.join();
}

// Buffers of the given sizes on a device, the first filled with finite values of `dtype`, the rest
// zero (so optimizer states and flags start finite).
class DeviceBuffers {
 public:
  DeviceBuffers(Device device, const std::vector<std::int64_t>& sizes, DType first_dtype) : device_(device) {
    for (auto size : sizes) pointers_.push_back(allocate(size));
    const std::vector<std::uint8_t> values = finite_values(first_dtype, sizes.front());
    if (device.kind == DeviceKind::cpu) {
      std::memcpy(pointers_[0], values.data(), values.size());
    } else {
      cuda::copy_to_device(device.index, pointers_[0], values.data(), static_cast<std::int64_t>(values.size()));
    }
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers() {
    if (device_.kind == DeviceKind::cuda) {
      for (void* p : pointers_) cuda::release(p);
    }
  }
  void* operator[](std::size_t i) const { return pointers_[i]; }
  Device device() const { return device_; }

  // Milliseconds of one copy of `bytes` (median of `repeats`): cudaMemcpyAsync device to device
  // timed with events on a GPU, a threaded memcpy on the CPU.
  double copy_ms(std::int64_t bytes, int repeats) {
    void* source = allocate(bytes);
    void* destination = allocate(bytes);
    IterationTimer timer(device_);
    std::vector<double> times;
    for (int r = 0; r < repeats + 2; ++r) {
      const double ms = device_ == Device::cpu()
                            ? timer.time_ms([&] {
                                parallel_copy(static_cast<std::uint8_t*>(destination),
                                              static_cast<const std::uint8_t*>(source), bytes);
                              })
                            : timer.time_ms([&] { device_copy_async(device_.index, destination, source, bytes); });
      if (r >= 2) times.push_back(ms);  // the first two warm the pages and the caches
    }
    release(source);
    release(destination);
    return median(times);
  }

 private:
  void* allocate(std::int64_t bytes) {
    if (device_.kind == DeviceKind::cuda) {
      void* pointer = cuda::allocate(device_.index, bytes);
      device_zero(device_.index, pointer, bytes);
      return pointer;
    }
    host_.emplace_back(static_cast<std::size_t>(bytes) + 64, 0);
    return host_.back().data();
  }
  void release(void* pointer) {
    if (device_.kind == DeviceKind::cuda) {
      cuda::release(pointer);
      return;
    }
    for (auto it = host_.begin(); it != host_.end(); ++it) {
      if (it->data() == pointer) {
        host_.erase(it);
        return;
      }
    }
  }

  Device device_;
  std::vector<std::vector<std::uint8_t>> host_;
  std::vector<void*> pointers_;
};

// Times each call of `work` as one benchmark iteration (manual time) and keeps the times for the
// median.
template <class Work>
std::vector<double> timed_iterations(benchmark::State& state, Device device, Work&& work) {
  IterationTimer timer(device);
  std::vector<double> times;
  for (int warm = 0; warm < 2; ++warm) work();
  for (auto _ : state) {
    const double ms = timer.time_ms(work);
    state.SetIterationTime(ms / 1e3);
    times.push_back(ms);
  }
  return times;
}

// `bytes_moved` is the kernel's bytes model: what it must read plus what it must write. A copy
// reads and writes its bytes, so copying bytes_moved / 2 moves the same traffic.
inline void report(benchmark::State& state, DeviceBuffers& buffers, std::int64_t bytes_moved, std::int64_t elements,
                   const std::vector<double>& times) {
  const double ms = median(times);
  const double copy = buffers.copy_ms(bytes_moved / 2, 11);
  state.SetBytesProcessed(state.iterations() * bytes_moved);
  state.counters["median_ms"] = ms;
  state.counters["GBps"] = static_cast<double>(bytes_moved) / (ms * 1e6);
  state.counters["copy_GBps"] = static_cast<double>(bytes_moved) / (copy * 1e6);
  state.counters["ratio_to_copy"] = copy / ms;
  state.counters["bytes_per_element"] = static_cast<double>(bytes_moved) / static_cast<double>(elements);
}

inline bool skip_without_device(benchmark::State& state, Device device) {
  if (device.kind == DeviceKind::cuda && device.index >= cuda_device_count()) {
    state.SkipWithError("no CUDA device");
    return true;
  }
  return false;
}

inline std::vector<Device> benchmark_devices() {
  std::vector<Device> devices = {Device::cpu()};
  for (int d = 0; d < cuda_device_count(); ++d) devices.push_back(Device::cuda(d));
  return devices;
}

template <class Function>
void register_timed(const std::string& name, Function&& function) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<Function>(function))
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace bitparity::bench
