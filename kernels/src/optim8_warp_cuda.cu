// The contiguous 8-bit step: one warp per quant block (optim8_warp_cuda.hpp says when it runs).
#include "optim8_warp_cuda.hpp"

#include <algorithm>

#include "bitparity/kernels/quantize.hpp"
#include "cuda_support.hpp"

namespace bitparity::cuda {

namespace {

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
                                                                                std::int64_t blocks, int* nonfinite_blocks,
                                                                                const float* skip) {
  if (*skip != 0.0f) return;  // the gradient scan found a NaN/Inf: the step writes nothing (every thread returns)
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

template <OptimizerKind K>
void launch_warp_step_of(int device, const Optimizer8Params& p, const CodeTable* tables, std::int64_t blocks, int* counter,
                         const float* skip, cudaStream_t stream) {
  const int threads = kWarp * kWarpsPerBlock;
  const auto grid = static_cast<unsigned>(std::max<std::int64_t>(
      1, std::min((blocks + kWarpsPerBlock - 1) / kWarpsPerBlock, device_filling_grid(device, threads))));
  switch (p.base.param_dtype) {
    case DType::f16: optimizer8_warp_kernel<K, DType::f16><<<grid, threads, 0, stream>>>(p, tables, blocks, counter, skip); break;
    case DType::bf16: optimizer8_warp_kernel<K, DType::bf16><<<grid, threads, 0, stream>>>(p, tables, blocks, counter, skip); break;
    default: optimizer8_warp_kernel<K, DType::f32><<<grid, threads, 0, stream>>>(p, tables, blocks, counter, skip); break;
  }
}

}  // namespace

bool warp_step_applies(const Optimizer8Params& p, const LaunchConfig& launch) {
  if (launch.threads > 0 || launch.max_grid > 0 || launch.blocks_per_launch > 0) return false;
  return p.base.param_index.contiguous && p.base.grad_index.contiguous && p.base.param_dtype == p.base.grad_dtype;
}

void launch_warp_step(int device, const Optimizer8Params& p, const CodeTable* tables, std::int64_t blocks, int* counter,
                      const float* skip, cudaStream_t stream) {
  with_optimizer_kind(p.base.kind, [&](auto kind) {
    constexpr OptimizerKind K = decltype(kind)::value;
    if constexpr (!norm_based_kind(K)) launch_warp_step_of<K>(device, p, tables, blocks, counter, skip, stream);
  });
}

}  // namespace bitparity::cuda
