#pragma once
// The absmax scan of one quant block, merged over the threads of a CUDA block. Max and or are exact
// and order-free, so the two-level merge gives the bits of the serial one for any thread count.
#include <cuda_runtime.h>

#include "bitparity/kernels/quant_body.hpp"

namespace bitparity::cuda {

// Every thread passes its partial scan and gets the block's total. `absmax_slots` and `flag_slots`
// hold blockDim.x entries in shared memory; they are free again when this returns.
__device__ inline BlockScan merged_block_scan(BlockScan mine, float* absmax_slots, int* flag_slots) {
  absmax_slots[threadIdx.x] = mine.absmax;
  flag_slots[threadIdx.x] = mine.nonfinite ? 1 : 0;
  __syncthreads();
  const unsigned lanes = blockDim.x < 32u ? blockDim.x : 32u;
  // Level 1: thread t < lanes merges the slots t, t + lanes, ... and writes slot t (which only it reads).
  if (threadIdx.x < lanes) {
    BlockScan part;
    for (unsigned t = threadIdx.x; t < blockDim.x; t += lanes) merge_scan(part, BlockScan{absmax_slots[t], flag_slots[t] != 0});
    absmax_slots[threadIdx.x] = part.absmax;
    flag_slots[threadIdx.x] = part.nonfinite ? 1 : 0;
  }
  __syncthreads();
  // Level 2: every thread merges the (at most 32) level-1 results, read as broadcasts.
  BlockScan total;
  for (unsigned t = 0; t < lanes; ++t) merge_scan(total, BlockScan{absmax_slots[t], flag_slots[t] != 0});
  __syncthreads();
  return total;
}

}  // namespace bitparity::cuda
