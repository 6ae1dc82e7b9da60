// The CUDA launcher of the 8-bit optimizers. Contiguous tensors launched with the default shape take
// the warp kernel below; every other call takes the general kernel: a CUDA block walks quant blocks
// (grid-stride over a grid that fills the device); each state's code table is read through the L1
// cache from the device's own copy.
// Pass 1 computes the new states to merge their absmax (max is exact); pass 2 stores, reusing the
// element values of pass 1 kept in registers (the first kCached per thread) and recomputing the rest
// from the old codes and absmax, which are bitwise the same. Each thread reads and writes only its
// own elements' codes, and the old absmax is kept in shared memory before it is overwritten.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim8_launch.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "block_scan_cuda.cuh"
#include "cuda_support.hpp"

namespace bitparity {

namespace {

using cuda::check;
using cuda::device_code_tables;
using cuda::device_filling_grid;

constexpr int kThreads8 = 256;
constexpr int kCached = 4;  // element values per thread kept from pass 1 to pass 2

template <OptimizerKind K>
__global__ void __launch_bounds__(kThreads8) optimizer8_kernel(const __grid_constant__ Optimizer8Params p, const CodeTable* __restrict__ tables,
                                  std::int64_t first, std::int64_t last, int* nonfinite_blocks) {
  // tables: the code table of each state (tables[k] for state k), in device memory.
  constexpr int states = state_count(K);
  __shared__ float absmax_slots[kThreads8];
  __shared__ int flag_slots[kThreads8];
  __shared__ float old_absmax[3];
  const std::int64_t stride = blockDim.x;
  for (std::int64_t b = first + blockIdx.x; b < last; b += gridDim.x) {
    const std::int64_t begin = block_begin(b, p.blocksize), end = block_end(b, p.blocksize, p.base.numel);
    // Strided over the threads: a launch may have fewer threads than states.
    for (int k = threadIdx.x; k < states; k += blockDim.x) old_absmax[k] = p.absmax[k][b];
    __syncthreads();
    const std::int64_t mine = begin + threadIdx.x;
    BlockScan scans[states];
    ElementValues cached[kCached];
#pragma unroll
    for (int j = 0; j < kCached; ++j) {
      const std::int64_t i = mine + j * stride;
      if (i < end) {
        cached[j] = optim8_element<K>(p, tables, old_absmax, i);
        for (int k = 0; k < states; ++k) scan_element(scans[k], cached[j].s[k]);
      }
    }
    for (std::int64_t i = mine + kCached * stride; i < end; i += stride) {
      const ElementValues e = optim8_element<K>(p, tables, old_absmax, i);
      for (int k = 0; k < states; ++k) scan_element(scans[k], e.s[k]);
    }
    float new_absmax[states];
    bool nonfinite[states];
    bool any = false;
    for (int k = 0; k < states; ++k) {
      const BlockScan total = cuda::merged_block_scan(scans[k], absmax_slots, flag_slots);
      nonfinite[k] = total.nonfinite;
      new_absmax[k] = new_block_absmax(total);
      any = any || total.nonfinite;
    }
    if (threadIdx.x == 0 && any) atomicAdd(nonfinite_blocks, 1);
#pragma unroll
    for (int j = 0; j < kCached; ++j) {
      const std::int64_t i = mine + j * stride;
      if (i < end) optim8_store<K>(p, tables, new_absmax, nonfinite, i, cached[j]);
    }
    for (std::int64_t i = mine + kCached * stride; i < end; i += stride) {
      optim8_store<K>(p, tables, new_absmax, nonfinite, i, optim8_element<K>(p, tables, old_absmax, i));
    }
    __syncthreads();  // old_absmax is read by every thread before the next quant block replaces it
    if (threadIdx.x == 0) {
      for (int k = 0; k < states; ++k) p.absmax[k][b] = new_absmax[k];
    }
  }
}

// The contiguous 8-bit step (parameter and gradient contiguous, of one dtype): one warp per quant
// block, as the contiguous quantize. Each lane takes elements lane, lane + 32, ...: every load and
// store of a warp is one coalesced run. The scans merge by shuffles (exact and order-free, as
// merged_block_scan), so no quant block waits at a barrier; each state's code values sit in shared
// memory. A lane keeps its first kWarpCached elements' values from pass 1 to pass 2 (all of a
// 256-element block) and recomputes the rest from the old codes and absmax, which gives the same bits.
// Each lane reads and writes only its own elements, and lane 0 replaces the block's absmax after
// every lane has used the old one (they all reached the shuffles).
constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kWarpCached = 8;

template <OptimizerKind K, DType D>
__global__ void __launch_bounds__(kWarp * kWarpsPerBlock) optimizer8_warp_kernel(const __grid_constant__ Optimizer8Params p,
                                                                                const CodeTable* __restrict__ tables,
                                                                                std::int64_t blocks, int* nonfinite_blocks) {
  constexpr int states = state_count(K);
  __shared__ float code_values[states][256];
  for (int k = 0; k < states; ++k) {
    for (int c = threadIdx.x; c < 256; c += blockDim.x) code_values[k][c] = tables[k].code_values[c];
  }
  __syncthreads();
  const float* values[states];
  for (int k = 0; k < states; ++k) values[k] = code_values[k];
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  // The block index is the same on every lane of a warp, so every shuffle has all 32 lanes.
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; b < blocks; b += warps) {
    const std::int64_t begin = block_begin(b, p.blocksize), end = block_end(b, p.blocksize, p.base.numel);
    float old_absmax[states];
    for (int k = 0; k < states; ++k) old_absmax[k] = p.absmax[k][b];
    BlockScan scans[states];
    ElementValues cached[kWarpCached];
#pragma unroll
    for (int j = 0; j < kWarpCached; ++j) {
      const std::int64_t i = begin + lane + j * kWarp;
      if (i < end) {
        cached[j] = optim8_element_contiguous<K, D>(p, values, old_absmax, i);
        for (int k = 0; k < states; ++k) scan_element(scans[k], cached[j].s[k]);
      }
    }
    for (std::int64_t i = begin + lane + kWarpCached * kWarp; i < end; i += kWarp) {
      const ElementValues e = optim8_element_contiguous<K, D>(p, values, old_absmax, i);
      for (int k = 0; k < states; ++k) scan_element(scans[k], e.s[k]);
    }
    float new_absmax[states];
    bool nonfinite[states];
    bool any = false;
    for (int k = 0; k < states; ++k) {
      const BlockScan total{float_from_bits(__reduce_max_sync(0xFFFFFFFFu, float_bits(scans[k].absmax))),
                            __any_sync(0xFFFFFFFFu, scans[k].nonfinite) != 0};
      nonfinite[k] = total.nonfinite;
      new_absmax[k] = new_block_absmax(total);
      any = any || total.nonfinite;
    }
    if (lane == 0 && any) atomicAdd(nonfinite_blocks, 1);
#pragma unroll
    for (int j = 0; j < kWarpCached; ++j) {
      const std::int64_t i = begin + lane + j * kWarp;
      if (i < end) optim8_store_contiguous<K, D>(p, tables, new_absmax, nonfinite, i, cached[j]);
    }
    for (std::int64_t i = begin + lane + kWarpCached * kWarp; i < end; i += kWarp) {
      optim8_store_contiguous<K, D>(p, tables, new_absmax, nonfinite, i,
                                    optim8_element_contiguous<K, D>(p, values, old_absmax, i));
    }
    if (lane == 0) {
      for (int k = 0; k < states; ++k) p.absmax[k][b] = new_absmax[k];
    }
  }
}

// The warp kernel takes contiguous parameters and gradients of one dtype where the caller asked for
// no launch shape of its own (those launches take the kernel above, so that P3q compares the two).
bool warp_step_applies(const Optimizer8Params& p, const LaunchConfig& launch) {
  if (launch.threads > 0 || launch.max_grid > 0 || launch.blocks_per_launch > 0) return false;
  return p.base.param_index.contiguous && p.base.grad_index.contiguous && p.base.param_dtype == p.base.grad_dtype;
}

template <OptimizerKind K>
void launch_warp_step(int device, const Optimizer8Params& p, const CodeTable* tables, std::int64_t blocks, int* counter,
                      cudaStream_t stream) {
  const int threads = kWarp * kWarpsPerBlock;
  const auto grid = static_cast<unsigned>(std::max<std::int64_t>(
      1, std::min((blocks + kWarpsPerBlock - 1) / kWarpsPerBlock, device_filling_grid(device, threads))));
  switch (p.base.param_dtype) {
    case DType::f16: optimizer8_warp_kernel<K, DType::f16><<<grid, threads, 0, stream>>>(p, tables, blocks, counter); break;
    case DType::bf16: optimizer8_warp_kernel<K, DType::bf16><<<grid, threads, 0, stream>>>(p, tables, blocks, counter); break;
    default: optimizer8_warp_kernel<K, DType::f32><<<grid, threads, 0, stream>>>(p, tables, blocks, counter); break;
  }
}

}  // namespace

namespace cuda {

void optimizer8_blocks(int device, const Optimizer8Params& p, const LaunchConfig& launch, std::int64_t& nonfinite_blocks) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const CodeTable* tables = device_code_tables(device, {p.state_format[0], p.state_format[1], p.state_format[2]});
  const std::int64_t blocks = block_count(p.base.numel, p.blocksize);
  auto* counter = static_cast<int*>(scratch(device, sizeof(int), kCounterSlot));
  check(cudaMemsetAsync(counter, 0, sizeof(int), stream_of(launch)), "cudaMemset");
  if (warp_step_applies(p, launch)) {
    with_optimizer_kind(p.base.kind, [&](auto kind) {
      constexpr OptimizerKind K = decltype(kind)::value;
      if constexpr (!norm_based_kind(K)) launch_warp_step<K>(device, p, tables, blocks, counter, stream_of(launch));
    });
    check(cudaGetLastError(), "8-bit optimizer kernel launch");
  } else {
    // kCached elements of a quant block per thread, from 32 up to kThreads8 threads, unless the caller chose.
    const int wanted = launch.threads > 0 ? launch.threads
                                          : static_cast<int>(std::min<std::int64_t>(kThreads8, std::max<std::int64_t>(32, p.blocksize / kCached)));
    const int threads = std::clamp(wanted, 1, kThreads8);
    const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
    for (std::int64_t first = 0; first < blocks; first += per_launch) {
      const std::int64_t last = std::min(blocks, first + per_launch);
      std::int64_t grid = std::min(last - first, device_filling_grid(device, threads));
      if (launch.max_grid > 0) grid = std::min(grid, launch.max_grid);
      with_optimizer_kind(p.base.kind, [&](auto kind) {
        constexpr OptimizerKind K = decltype(kind)::value;
        if constexpr (!norm_based_kind(K)) {
          optimizer8_kernel<K><<<static_cast<unsigned>(grid), threads, 0, stream_of(launch)>>>(p, tables, first, last, counter);
        }
      });
      check(cudaGetLastError(), "8-bit optimizer kernel launch");
    }
  }
  int flagged = 0;
  check(cudaMemcpyAsync(&flagged, counter, sizeof(int), cudaMemcpyDeviceToHost, stream_of(launch)), "8-bit optimizer kernel");
  wait_for(launch, "8-bit optimizer kernel");  // the one host synchronisation of the step
  nonfinite_blocks += flagged;
}

}  // namespace cuda
}  // namespace bitparity
