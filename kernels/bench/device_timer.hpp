#pragma once
// Per-call timing for the benchmarks: CUDA events around the call on a GPU (the call's own host
// synchronisation does not matter: the events time the stream), the steady clock on the CPU.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/errors.hpp"

#if defined(BITPARITY_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace bitparity::bench {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

#if defined(BITPARITY_HAVE_CUDA)
inline void cuda_ok(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(ErrorCode::cuda_failure, std::string(what) + ": " + cudaGetErrorString(status));
}

// The copy baseline: one cudaMemcpyAsync on the default stream.
inline void device_copy_async(int device, void* destination, const void* source, std::int64_t bytes) {
  cuda_ok(cudaSetDevice(device), "cudaSetDevice");
  cuda_ok(cudaMemcpyAsync(destination, source, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice, nullptr),
          "cudaMemcpyAsync");
}

inline void device_zero(int device, void* pointer, std::int64_t bytes) {
  cuda_ok(cudaSetDevice(device), "cudaSetDevice");
  cuda_ok(cudaMemset(pointer, 0, static_cast<std::size_t>(bytes)), "cudaMemset");
}

class IterationTimer {
 public:
  explicit IterationTimer(Device device) : device_(device) {
    if (device_.kind != DeviceKind::cuda) return;
    cuda_ok(cudaSetDevice(device_.index), "cudaSetDevice");
    cuda_ok(cudaEventCreate(&start_), "cudaEventCreate");
    cuda_ok(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  IterationTimer(const IterationTimer&) = delete;
  IterationTimer& operator=(const IterationTimer&) = delete;
  ~IterationTimer() {
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }
  template <class Work>
  double time_ms(Work&& work) {
    if (device_.kind != DeviceKind::cuda) return host_ms(work);
    cuda_ok(cudaEventRecord(start_, nullptr), "cudaEventRecord");
    work();
    cuda_ok(cudaEventRecord(stop_, nullptr), "cudaEventRecord");
    cuda_ok(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    cuda_ok(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  template <class Work>
  static double host_ms(Work&& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  Device device_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};
#else
inline void device_copy_async(int, void*, const void*, std::int64_t) {
  throw Error(ErrorCode::cuda_failure, "built without CUDA");
}
inline void device_zero(int, void*, std::int64_t) { throw Error(ErrorCode::cuda_failure, "built without CUDA"); }

class IterationTimer {
 public:
  explicit IterationTimer(Device) {}
  template <class Work>
  double time_ms(Work&& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
};
#endif

}  // namespace bitparity::bench
