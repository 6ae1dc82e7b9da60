#pragma once
// What every CUDA launcher shares: the error check that turns a CUDA status into Error, device
// scratch kept per host thread, device and slot, so that a step allocates nothing, the code tables
// kept on each device, and the grid that fills a device.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity::cuda {

// Throws Error(cuda_failure) naming the call when a CUDA runtime call fails.
inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(ErrorCode::cuda_failure, std::string(what) + ": " + cudaGetErrorString(status));
}

// The stream a launch is queued on (LaunchConfig::cuda_stream; null is the default stream).
inline cudaStream_t stream_of(const LaunchConfig& launch) { return static_cast<cudaStream_t>(launch.cuda_stream); }

// Waits for the launch's stream and reports an error of its work, naming `what`.
inline void wait_for(const LaunchConfig& launch, const char* what) { check(cudaStreamSynchronize(stream_of(launch)), what); }

// Scratch is per host thread, device and slot: a launcher that waits for its stream before it
// returns (all of them do) leaves it free for the next call, whatever stream that call takes.
inline void* scratch(int device, std::size_t bytes, int slot) {
  struct Buffer {
    void* pointer = nullptr;
    std::size_t bytes = 0;
  };
  thread_local std::map<std::pair<int, int>, Buffer> buffers;
  Buffer& buffer = buffers[{device, slot}];
  if (buffer.bytes < bytes) {
    if (buffer.pointer) cudaFree(buffer.pointer);
    buffer.pointer = nullptr;
    check(cudaMalloc(&buffer.pointer, bytes), "cudaMalloc (scratch)");
    buffer.bytes = bytes;
  }
  return buffer.pointer;
}

// A grid that fills the device once: as many blocks of `threads` as its SMs hold at a time. Kernels
// loop (grid-stride) beyond it, so per-block set-up (a code table copied to shared memory) is paid
// once per resident block, not once per quant block.
inline std::int64_t multiprocessor_count(int device) {
  thread_local std::map<int, int> sm_counts;
  auto found = sm_counts.find(device);
  if (found == sm_counts.end()) {
    int count = 0;
    check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    found = sm_counts.emplace(device, count).first;
  }
  return found->second;
}

inline std::int64_t device_filling_grid(int device, int threads) {
  const int per_sm = std::max(1, std::min(32, 2048 / std::max(1, threads)));
  return multiprocessor_count(device) * per_sm;
}

// The same from the occupancy calculator, for a kernel whose registers or dynamic shared memory
// (`shared_bytes`) let an SM hold fewer blocks than its thread limit: every block is resident from
// the start, so per-block set-up runs once per block slot and no second wave runs with the SMs
// part empty. `device` must be the current device.
template <class Kernel>
std::int64_t resident_grid(int device, Kernel kernel, int threads, std::size_t shared_bytes) {
  thread_local std::map<std::tuple<const void*, int, int, std::size_t>, int> blocks_per_sm;
  const std::tuple<const void*, int, int, std::size_t> key{reinterpret_cast<const void*>(kernel), device, threads, shared_bytes};
  auto found = blocks_per_sm.find(key);
  if (found == blocks_per_sm.end()) {
    int per_sm = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    // None fits (shared memory past what the kernel may take): say so here, not as a failed launch.
    if (per_sm < 1) {
      throw Error(ErrorCode::cuda_failure, "a kernel of " + std::to_string(threads) + " threads and " +
                                               std::to_string(shared_bytes) + " bytes of dynamic shared memory fits no "
                                               "multiprocessor of device " + std::to_string(device));
    }
    found = blocks_per_sm.emplace(key, per_sm).first;
  }
  return multiprocessor_count(device) * found->second;
}

// Code tables on a device, uploaded once per device and list of formats and kept for the process:
// kernels read them through the L1 cache rather than copying them (85 KB each) into shared memory,
// which would cap the blocks an SM holds. The one part a decision reads at scattered places, the
// finer index's entries in use (nearest_entry_count: 4.5-30 KB for the built-in maps), the
// contiguous quantize and the 8-bit warp step (one copy per state) copy into shared memory once per
// CUDA block.
inline const CodeTable* device_code_tables(int device, std::initializer_list<QuantFormat> formats) {
  static std::mutex mutex;
  static std::map<std::pair<int, std::vector<int>>, void*> uploaded;
  std::vector<int> key;
  for (QuantFormat f : formats) key.push_back(static_cast<int>(f));
  const std::lock_guard<std::mutex> lock(mutex);
  void*& pointer = uploaded[{device, key}];
  if (pointer == nullptr) {
    std::vector<CodeTable> tables;
    for (QuantFormat f : formats) tables.push_back(code_table(f));
    check(cudaMalloc(&pointer, sizeof(CodeTable) * tables.size()), "cudaMalloc (code tables)");
    check(cudaMemcpy(pointer, tables.data(), sizeof(CodeTable) * tables.size(), cudaMemcpyHostToDevice),
          "cudaMemcpy (code tables)");
    // From pageable memory, cudaMemcpy may return before the DMA lands, ordered only on the legacy
    // stream: a kernel on a caller's non-blocking stream could read a half-written table. Once per
    // device and list of formats.
    check(cudaDeviceSynchronize(), "cudaMemcpy (code tables)");
  }
  return static_cast<const CodeTable*>(pointer);
}

// Page-locked host words of this host thread that launchers copy device answers into: a copy into
// page-locked memory is queued like a kernel (one into pageable memory waits for it), so several
// answers come back with the one wait that follows them. Kept for the thread's life.
inline std::uint32_t* readback_words() {
  constexpr std::size_t kWords = 4;
  thread_local std::uint32_t* words = nullptr;
  if (words == nullptr) check(cudaMallocHost(reinterpret_cast<void**>(&words), kWords * sizeof(std::uint32_t)), "cudaMallocHost");
  return words;
}

// Slots: one per use, so that two scratch buffers of one call never share memory.
inline constexpr int kScanFlagSlot = 0;
inline constexpr int kBlockSumsSlot = 1;
inline constexpr int kCounterSlot = 2;

}  // namespace bitparity::cuda
