#pragma once
// Shared pieces of the benchmarks: device buffers, per-call timing (CUDA events on a GPU, the
// steady clock on the CPU), the copy baseline of the same bytes timed between the kernel's calls,
// and the counters median_ms, GBps, copy_GBps, ratio_to_copy and bytes_per_element (the kernel's
// bytes model).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
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

// The CUDA launchers' general kernels beside their fast ones, in the same run: the general kernels'
// own shape at block size 256 (64 threads) asked for explicitly, which the fast kernels step aside
// for. A few rows at 2^24, an 8-bit and a 4-bit map (adam for the 8-bit step), f32 and bf16: the
// same-run ratio of a fast kernel to its general one.
inline LaunchConfig general_kernel_launch() {
  LaunchConfig launch;
  launch.threads = 64;
  return launch;
}

inline bool general_kernel_row_wanted(const Device& device, std::int64_t elements, std::string_view entry, DType dtype) {
  return device.kind == DeviceKind::cuda && elements == kSmall && (dtype == DType::f32 || dtype == DType::bf16) &&
         (entry == "dynamic8-signed" || entry == "nf4" || entry == "adam");
}

// The quantize and dequantize rows also launched unsynchronised (LaunchConfig::synchronize false,
// "_stream" rows): queued on the stream as the copy baseline is, with no wait and, for quantize, no
// count read back. An 8-bit and a 4-bit map, f32 and bf16, both sizes.
inline LaunchConfig unsynchronised_launch() {
  LaunchConfig launch;
  launch.synchronize = false;
  return launch;
}

inline bool unsynchronised_row_wanted(const Device& device, std::string_view entry, DType dtype) {
  return device.kind == DeviceKind::cuda && (dtype == DType::f32 || dtype == DType::bf16) &&
         (entry == "dynamic8-signed" || entry == "nf4");
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
      if (copy_source_ != nullptr) cuda::release(copy_source_), cuda::release(copy_destination_);
    }
  }
  void* operator[](std::size_t i) const { return pointers_[i]; }
  Device device() const { return device_; }

  // Milliseconds of one copy of `bytes`: cudaMemcpyAsync device to device timed with events on a
  // GPU, a threaded memcpy on the CPU. The two copy buffers are allocated on the first call and kept.
  double copy_ms(std::int64_t bytes, IterationTimer& timer) {
    if (copy_bytes_ != bytes) {
      if (copy_source_ != nullptr) release(copy_source_), release(copy_destination_);
      copy_source_ = allocate(bytes);
      copy_destination_ = allocate(bytes);
      copy_bytes_ = bytes;
    }
    if (device_ == Device::cpu()) {
      return timer.time_ms([&] {
        parallel_copy(static_cast<std::uint8_t*>(copy_destination_), static_cast<const std::uint8_t*>(copy_source_), bytes);
      });
    }
    return timer.time_ms([&] { device_copy_async(device_.index, copy_destination_, copy_source_, bytes); });
  }

 private:
  void* allocate(std::int64_t bytes) {
    if (device_.kind == DeviceKind::cuda) {
      void* pointer = cuda::allocate(device_.index, bytes);
      device_zero(device_.index, pointer, bytes);
      return pointer;
    }
    host_.emplace_back(static_cast<std::size_t>(bytes) + 64, 0);
    return aligned_to_64(host_.back().data());
  }
  // Host buffers start on a 64-byte line, as a tensor allocator's do (PyTorch's CPU allocator aligns
  // to 64). A vector's start is only 16-byte aligned (a large one's is 16 bytes past a page), which
  // split every 64-byte load and store of the launchers across two lines: a cost that aligned
  // tensors do not pay.
  static std::uint8_t* aligned_to_64(std::uint8_t* data) {
    return data + ((64 - reinterpret_cast<std::uintptr_t>(data) % 64) % 64);
  }
  void release(void* pointer) {
    if (device_.kind == DeviceKind::cuda) {
      cuda::release(pointer);
      return;
    }
    for (auto it = host_.begin(); it != host_.end(); ++it) {
      if (aligned_to_64(it->data()) == pointer) {
        host_.erase(it);
        return;
      }
    }
  }

  Device device_;
  std::vector<std::vector<std::uint8_t>> host_;
  std::vector<void*> pointers_;
  void* copy_source_ = nullptr;
  void* copy_destination_ = nullptr;
  std::int64_t copy_bytes_ = 0;
};

// The kernel's times and the copy's, one of each per iteration.
struct Timings {
  std::vector<double> kernel_ms, copy_ms;
};

// Times each call of `work` as one benchmark iteration (manual time) and, right after it, one copy
// that moves the same traffic as the kernel's bytes model (`bytes_moved`: a copy reads and writes
// its bytes, so it copies bytes_moved / 2). Interleaved, both see the same machine: a neighbour
// that takes memory bandwidth for a while slows both, and the ratio of their medians stays put.
template <class Work>
Timings timed_against_copy(benchmark::State& state, DeviceBuffers& buffers, std::int64_t bytes_moved, Work&& work) {
  IterationTimer timer(buffers.device());
  Timings timings;
  for (int warm = 0; warm < 2; ++warm) {  // pages, caches and the copy buffers
    work();
    buffers.copy_ms(bytes_moved / 2, timer);
  }
  for (auto _ : state) {
    const double ms = timer.time_ms(work);
    state.SetIterationTime(ms / 1e3);
    timings.kernel_ms.push_back(ms);
    state.PauseTiming();
    timings.copy_ms.push_back(buffers.copy_ms(bytes_moved / 2, timer));
    state.ResumeTiming();
  }
  return timings;
}

// `bytes_moved` is the kernel's bytes model: what it must read plus what it must write.
inline void report(benchmark::State& state, std::int64_t bytes_moved, std::int64_t elements, const Timings& timings) {
  const double ms = median(timings.kernel_ms), copy = median(timings.copy_ms);
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
