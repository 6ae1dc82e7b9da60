#pragma once
// The absmax scan of one quant block, merged over the threads of a CUDA block. Max and or are exact
// and order-free, so the two-level merge gives the bits of the serial one for any thread count.
#include <cuda_runtime.h>

#include "bitparity/kernels/quant_body.hpp"

// __reduce_max_sync, which the scans merge with, exists from sm_80 (A100) on.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "bitparity's CUDA kernels need sm_80 or newer: configure with -DCMAKE_CUDA_ARCHITECTURES=80 or above (default 90)"
#endif

namespace bitparity::cuda {

// Every thread passes its partial scan and gets the block's total. Each warp merges its lanes by
// shuffles (a max of magnitude bits: non-negative floats order as their bits; and an or); one slot
// per warp in shared memory then merges the warps. `absmax_slots` and `flag_slots` hold at least
// one entry per warp; they are free again when this returns. Every thread of the block must call it.
// (Each thread once read every one of 32 slots here: tens of shared loads per element of a small
// block.)
__device__ inline BlockScan merged_block_scan(BlockScan mine, float* absmax_slots, int* flag_slots) {
  const unsigned lane = threadIdx.x % 32u, warp = threadIdx.x / 32u;
  const unsigned lanes = blockDim.x - warp * 32u < 32u ? blockDim.x - warp * 32u : 32u;  // this warp's
  const unsigned mask = lanes == 32u ? 0xFFFFFFFFu : (1u << lanes) - 1u;
  const BlockScan of_warp{float_from_bits(__reduce_max_sync(mask, float_bits(mine.absmax))),
                          __any_sync(mask, mine.nonfinite ? 1 : 0) != 0};
  const unsigned warps = (blockDim.x + 31u) / 32u;
  if (warps == 1) return of_warp;
  if (lane == 0) {
    absmax_slots[warp] = of_warp.absmax;
    flag_slots[warp] = of_warp.nonfinite ? 1 : 0;
  }
  __syncthreads();
  BlockScan total;
  for (unsigned w = 0; w < warps; ++w) merge_scan(total, BlockScan{absmax_slots[w], flag_slots[w] != 0});
  __syncthreads();
  return total;
}

}  // namespace bitparity::cuda
