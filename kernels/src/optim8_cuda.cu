// The CUDA launcher of the 8-bit optimizers: one CUDA block per quant block (grid-stride beyond
// max_grid). Pass 1 computes the new states to reduce their absmax in shared memory (max is exact);
// pass 2 recomputes from the old codes and absmax and stores. Each thread reads and writes only
// its own elements' codes, and the old absmax is kept in shared memory before it is overwritten.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim8_launch.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "cuda_support.hpp"

namespace bitparity {

namespace {

using cuda::check;

constexpr int kThreads8 = 256;

struct Tables8 {
  CodeTable table[2];  // signed, unsigned
};

template <OptimizerKind K>
__global__ void optimizer8_kernel(const Optimizer8Params p, const Tables8 tables, std::int64_t first, std::int64_t last,
                                  int* nonfinite_blocks) {
  constexpr int states = state_count(K);
  __shared__ CodeTable shared_tables[2];
  __shared__ float partial[states][kThreads8];
  __shared__ int partial_nonfinite[states][kThreads8];
  __shared__ float old_absmax[3], new_absmax[3];
  __shared__ bool nonfinite[3];
  {
    const auto* source = reinterpret_cast<const std::uint32_t*>(&tables);
    auto* destination = reinterpret_cast<std::uint32_t*>(shared_tables);
    for (unsigned i = threadIdx.x; i < sizeof(Tables8) / 4; i += blockDim.x) destination[i] = source[i];
    __syncthreads();
  }
  for (std::int64_t b = first + blockIdx.x; b < last; b += gridDim.x) {
    const std::int64_t begin = block_begin(b, p.blocksize), end = block_end(b, p.blocksize, p.base.numel);
    // Strided over the threads: a launch may have fewer threads than states.
    for (int k = threadIdx.x; k < states; k += blockDim.x) old_absmax[k] = p.absmax[k][b];
    __syncthreads();
    BlockScan scans[states];
    for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const ElementValues e = optim8_element<K>(p, shared_tables, old_absmax, i);
      for (int k = 0; k < states; ++k) scan_element(scans[k], e.s[k]);
    }
    for (int k = 0; k < states; ++k) {
      partial[k][threadIdx.x] = scans[k].absmax;
      partial_nonfinite[k][threadIdx.x] = scans[k].nonfinite ? 1 : 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      bool any = false;
      for (int k = 0; k < states; ++k) {
        BlockScan total;
        for (unsigned t = 0; t < blockDim.x; ++t) merge_scan(total, BlockScan{partial[k][t], partial_nonfinite[k][t] != 0});
        nonfinite[k] = total.nonfinite;
        new_absmax[k] = new_block_absmax(total);
        any = any || total.nonfinite;
      }
      if (any) atomicAdd(nonfinite_blocks, 1);
    }
    __syncthreads();
    for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      optim8_store<K>(p, shared_tables, new_absmax, nonfinite, i, optim8_element<K>(p, shared_tables, old_absmax, i));
    }
    __syncthreads();
    for (int k = threadIdx.x; k < states; k += blockDim.x) p.absmax[k][b] = new_absmax[k];
    __syncthreads();
  }
}

}  // namespace

namespace cuda {

void optimizer8_blocks(int device, const Optimizer8Params& p, const LaunchConfig& launch, std::int64_t& nonfinite_blocks) {
  check(cudaSetDevice(device), "cudaSetDevice");
  Tables8 tables;
  tables.table[0] = code_table(QuantFormat::dynamic8_signed);
  tables.table[1] = code_table(QuantFormat::dynamic8_unsigned);
  const int threads = std::clamp(launch.threads > 0 ? launch.threads : kThreads8, 1, kThreads8);
  const std::int64_t blocks = block_count(p.base.numel, p.blocksize);
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
  auto* counter = static_cast<int*>(scratch(device, sizeof(int), kCounterSlot));
  check(cudaMemsetAsync(counter, 0, sizeof(int)), "cudaMemset");
  for (std::int64_t first = 0; first < blocks; first += per_launch) {
    const std::int64_t last = std::min(blocks, first + per_launch);
    std::int64_t grid = last - first;
    if (launch.max_grid > 0) grid = std::min(grid, launch.max_grid);
    with_optimizer_kind(p.base.kind, [&](auto kind) {
      constexpr OptimizerKind K = decltype(kind)::value;
      if constexpr (!norm_based_kind(K)) {
        optimizer8_kernel<K><<<static_cast<unsigned>(grid), threads>>>(p, tables, first, last, counter);
      }
    });
    check(cudaGetLastError(), "8-bit optimizer kernel launch");
  }
  int flagged = 0;
  check(cudaMemcpy(&flagged, counter, sizeof(int), cudaMemcpyDeviceToHost), "8-bit optimizer kernel");
  nonfinite_blocks += flagged;
}

}  // namespace cuda
}  // namespace bitparity
