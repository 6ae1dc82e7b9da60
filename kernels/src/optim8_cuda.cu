// The CUDA launcher of the 8-bit optimizers. Contiguous tensors launched with the default shape take
// the warp kernel (optim8_warp_cuda.cu); every other call takes the general kernel here: a CUDA block walks quant blocks
// (grid-stride over a grid that fills the device); each state's code table is read through the L1
// cache from the device's own copy.
// The gradient's non-finite scan runs first on the same stream; the kernels skip themselves when it
// found one, so the step waits once, for both answers.
// Pass 1 computes the new states to merge their absmax (max is exact); pass 2 stores, reusing the
// element values of pass 1 kept in registers (the first kCached per thread) and recomputing the rest
// from the old codes and absmax, which are bitwise the same. Each thread reads and writes only its
// own elements' codes, and the old absmax is kept in shared memory before it is overwritten.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim8_launch.hpp"
#include "bitparity/kernels/optim_launch.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "block_scan_cuda.cuh"
#include "cuda_support.hpp"
#include "optim8_warp_cuda.hpp"

namespace bitparity {

namespace {

using cuda::check;
using cuda::device_code_tables;

constexpr int kThreads8 = 256;
constexpr int kCached = 4;  // element values per thread kept from pass 1 to pass 2

template <OptimizerKind K>
__global__ void __launch_bounds__(kThreads8) optimizer8_kernel(const __grid_constant__ Optimizer8Params p, const CodeTable* __restrict__ tables,
                                  std::int64_t first, std::int64_t last, int* nonfinite_blocks, const float* skip) {
  // tables: the code table of each state (tables[k] for state k), in device memory.
  if (*skip != 0.0f) return;  // the gradient scan found a NaN/Inf: the step writes nothing
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

}  // namespace

namespace cuda {

bool scan_and_step8(int device, const Optimizer8Params& p, const LaunchConfig& launch, std::int64_t& nonfinite_blocks) {
  const float* const skip = queue_gradient_scan(device, p.base, launch);
  const CodeTable* tables = device_code_tables(device, {p.state_format[0], p.state_format[1], p.state_format[2]});
  const std::int64_t blocks = block_count(p.base.numel, p.blocksize);
  auto* counter = static_cast<int*>(scratch(device, sizeof(int), kCounterSlot));
  check(cudaMemsetAsync(counter, 0, sizeof(int), stream_of(launch)), "cudaMemset");
  if (warp_step_applies(p, launch)) {
    launch_warp_step(device, p, tables, blocks, counter, skip, stream_of(launch));
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
          optimizer8_kernel<K><<<static_cast<unsigned>(grid), threads, 0, stream_of(launch)>>>(p, tables, first, last, counter, skip);
        }
      });
      check(cudaGetLastError(), "8-bit optimizer kernel launch");
    }
  }
  std::uint32_t* const answers = readback_words();  // the scan's flag, then the count
  check(cudaMemcpyAsync(&answers[0], skip, sizeof(float), cudaMemcpyDeviceToHost, stream_of(launch)), "8-bit optimizer kernel");
  check(cudaMemcpyAsync(&answers[1], counter, sizeof(int), cudaMemcpyDeviceToHost, stream_of(launch)), "8-bit optimizer kernel");
  wait_for(launch, "8-bit optimizer kernel");  // the one host synchronisation of the step
  if (float_from_bits(answers[0]) != 0.0f) return true;
  nonfinite_blocks += static_cast<std::int32_t>(answers[1]);
  return false;
}

}  // namespace cuda
}  // namespace bitparity
