#pragma once
#include <cstdint>
#include <string>

namespace bitparity {

// How the work is laid out; results never depend on it (property P3).
struct LaunchConfig {
  int threads = 0;                      // CPU worker threads (at most 4096), or CUDA threads per block; 0 = default
  std::int64_t max_grid = 0;            // CUDA: cap on blocks per grid (grid-stride beyond); 0 = none
  std::int64_t blocks_per_launch = 0;   // split the work into launches of this many quant blocks; 0 = one
  // CUDA: the stream (a cudaStream_t) the work is queued on and the launcher waits for; null: the
  // default stream. The launchers wait for this stream only, never for the whole device.
  void* cuda_stream = nullptr;
  // CUDA quantize, dequantize and convert: false queues the work on cuda_stream and returns at once,
  // with no host synchronisation (later work on that stream, or the caller's own wait, orders after
  // it). A quantize so launched counts nothing for its report (QuantizeReport::counted false): its
  // per-block flags are in its outputs. The CPU launchers finish before they return either way.
  bool synchronize = true;
  std::string describe() const;
};

// Sizes from which a CPU launch takes every path it has: bf16 keys built once per launch (from 256
// quant blocks, input_keys_cpu.hpp) and two worker threads or more (from twice the 2^14 elements of
// the smallest part a thread claims). The layout properties draw some cases this large, so that each
// of those paths is compared with the strided one; each launcher static_asserts its own threshold
// against these.
inline constexpr std::int64_t kBlocksForEveryCpuPath = 256;
inline constexpr std::int64_t kElementsForEveryCpuPath = std::int64_t{2} << 14;

int cuda_device_count();  // 0 when CUDA is not built or no driver/device is present
bool cuda_built();
// "NVIDIA H100 80GB HBM3, sm_90, driver 13.0, runtime 13.0" for reports; "" without that device.
std::string cuda_device_description(int index);
// "AMD EPYC, 2 threads, vector paths AVX-512 BW, AVX2, F16C" for reports and benchmarks: the
// CPU launchers' speed depends on the vector paths they take here, their results do not (P2).
std::string cpu_device_description();

}  // namespace bitparity
