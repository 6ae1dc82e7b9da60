#pragma once
// Shared pieces of the benchmarks: device buffers, the same-run copy baseline, and the counters
// GBps, copy_GBps and ratio_to_copy.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "bitparity/kernels/quantize.hpp"

namespace bitparity::bench {

inline double seconds_of(auto&& work, int repeats) {
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
}

// The CPU copy baseline uses the same threads as the launchers.
inline void parallel_copy(std::uint8_t* destination, const std::uint8_t* source, std::int64_t bytes) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    const std::int64_t lo = bytes * t / threads, hi = bytes * (t + 1) / threads;
    workers.emplace_back([=] { std::memcpy(destination + lo, source + lo, hi - lo); });
  }
  for (auto& worker : workers) worker.join();
}

// Buffers of the given sizes on a device, the first filled with finite values of `dtype`, plus a
// scratch buffer as large as the largest for the copy baseline.
class DeviceBuffers {
 public:
  DeviceBuffers(Device device, const std::vector<std::int64_t>& sizes, DType first_dtype) : device_(device) {
    std::int64_t largest = 0;
    for (auto size : sizes) largest = std::max(largest, size);
    std::vector<std::int64_t> all = sizes;
    all.push_back(largest);
    std::vector<std::uint8_t> values(static_cast<std::size_t>(sizes.front()));
    std::mt19937 rng(1);
    for (std::size_t i = 0; i + 4 <= values.size(); i += 4) {
      const float x = std::normal_distribution<float>()(rng) * 0.01f;
      std::memcpy(&values[i], &x, 4);
    }
    if (first_dtype != DType::f32) {  // keep 16-bit patterns finite: clear the exponent's top bit
      for (std::size_t i = 1; i < values.size(); i += 2) values[i] &= 0xBF;
    }
    for (auto size : all) {
      if (device.kind == DeviceKind::cpu) {
        host_.emplace_back(static_cast<std::size_t>(size) + 64, 0);
        pointers_.push_back(host_.back().data());
      } else {
        pointers_.push_back(cuda::allocate(device.index, size));
      }
    }
    if (device.kind == DeviceKind::cpu) {
      std::memcpy(pointers_[0], values.data(), values.size());
    } else {
      cuda::copy_to_device(device.index, pointers_[0], values.data(), static_cast<std::int64_t>(values.size()));
    }
    scratch_bytes_ = largest;
    first_bytes_ = sizes.front();
  }
  ~DeviceBuffers() {
    if (device_.kind == DeviceKind::cuda) {
      for (void* p : pointers_) cuda::release(p);
    }
  }
  void* operator[](std::size_t i) const { return pointers_[i]; }

  // Copy `bytes` from buffer 0 into the scratch buffer, in pieces no larger than either.
  void copy(std::int64_t bytes) {
    void* scratch = pointers_.back();
    const std::int64_t piece = std::min(scratch_bytes_, first_bytes_);
    for (std::int64_t done = 0; done < bytes; done += piece) {
      const std::int64_t now = std::min(piece, bytes - done);
      if (device_.kind == DeviceKind::cpu) {
        parallel_copy(static_cast<std::uint8_t*>(scratch), static_cast<const std::uint8_t*>(pointers_[0]), now);
      } else {
        cuda::copy_on_device(device_.index, scratch, pointers_[0], now);
      }
    }
  }

 private:
  Device device_;
  std::vector<std::vector<std::uint8_t>> host_;
  std::vector<void*> pointers_;
  std::int64_t scratch_bytes_ = 0;
  std::int64_t first_bytes_ = 0;
};

// `seconds` is the wall time of the timed loop. A copy reads and writes its bytes: copying
// bytes_moved / 2 moves the same traffic as the kernel.
inline void report(benchmark::State& state, DeviceBuffers& buffers, std::int64_t bytes_moved, double seconds) {
  const double copy_seconds = seconds_of([&] { buffers.copy(bytes_moved / 2); }, 5);
  const double copy_rate = static_cast<double>(bytes_moved) / copy_seconds;
  const double rate = static_cast<double>(bytes_moved) * state.iterations() / seconds;
  state.SetBytesProcessed(state.iterations() * bytes_moved);
  state.counters["GBps"] = rate / 1e9;
  state.counters["copy_GBps"] = copy_rate / 1e9;
  state.counters["ratio_to_copy"] = rate / copy_rate;
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

}  // namespace bitparity::bench
