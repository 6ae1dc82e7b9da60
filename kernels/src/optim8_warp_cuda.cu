// The contiguous 8-bit step: one warp per quant block (optim8_warp_cuda.hpp says when it runs).
#include "optim8_warp_cuda.hpp"

#include <algorithm>
#include <set>

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

// Each state's finer-index entries in use (nearest_entry_count) are copied into dynamic shared memory
// one after another, as the contiguous quantize copies its map's: the requantization's decisions read
// them at scattered places. The registers are held to what 4 blocks an SM allow (64) with up to two
// states, 3 blocks (80) with three: ptxas (sm_90) spills nothing in any of them, where without the
// bound it took up to 115 registers, and before the copy 64-84 with up to 32 bytes spilled. Shared
// memory lets that many stay resident with the dynamic8 maps (48 KB a block for Adam, 72 KB for three
// states); larger maps (linear8-fused: 30 KB each) hold fewer blocks, with registers to spare.
template <OptimizerKind K>
inline constexpr int kMinBlocksPerSm8 = state_count(K) <= 2 ? 4 : 3;

template <OptimizerKind K, DType D>
__global__ void __launch_bounds__(kWarp * kWarpsPerBlock, kMinBlocksPerSm8<K>) optimizer8_warp_kernel(
    const __grid_constant__ Optimizer8Params p, const CodeTable* __restrict__ tables, std::int64_t blocks,
    int* nonfinite_blocks, const float* skip) {
  if (*skip != 0.0f) return;  // the gradient scan found a NaN/Inf: the step writes nothing (every thread returns)
  constexpr int states = state_count(K);
  __shared__ float code_values[states][256];
  extern __shared__ std::uint32_t shared_nearest_entries[];
  NearestIndex indexes[states];
  int copied = 0;
  for (int k = 0; k < states; ++k) {
    for (int c = threadIdx.x; c < 256; c += blockDim.x) code_values[k][c] = tables[k].code_values[c];
    const int entries = nearest_entry_count(tables[k]);
    for (int e = threadIdx.x; e < entries; e += blockDim.x) shared_nearest_entries[copied + e] = tables[k].nearest_entry[e];
    indexes[k] = nearest_index(tables[k]);
    indexes[k].entry = shared_nearest_entries + copied;
    copied += entries;
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
      if (i < end) optim8_store_contiguous<K, D>(p, tables, indexes, new_absmax, nonfinite, i, cached[j]);
    }
    for (std::int64_t i = begin + lane + kWarpCached * kWarp; i < end; i += kWarp) {
      optim8_store_contiguous<K, D>(p, tables, indexes, new_absmax, nonfinite, i,
                                    optim8_element_contiguous<K, D>(p, values, old_absmax, i));
    }
    // Every lane read the old absmax at the block's start; lane 0 replaces it only after them all.
    __syncwarp();
    if (lane == 0) {
      for (int k = 0; k < states; ++k) p.absmax[k][b] = new_absmax[k];
    }
  }
}

// The bytes of every state's finer-index entries in use: the kernel's dynamic shared memory.
template <OptimizerKind K>
std::size_t shared_entry_bytes(const Optimizer8Params& p) {
  std::size_t entries = 0;
  for (int k = 0; k < state_count(K); ++k) entries += static_cast<std::size_t>(nearest_entry_count(code_table(p.state_format[k])));
  return entries * sizeof(std::uint32_t);
}

// Past the 48 KB a launch takes without opting in (two states of large maps, or three), the kernel
// opts in; the H100 gives a block up to 227 KB. It opts in to the most any maps need (or what the
// device allows, where that is less), not this launch's bytes, so that host threads launching it
// with other maps never lower it under each other.
constexpr std::size_t kSharedBytesWithoutOptIn = 48 * 1024;
template <OptimizerKind K>
constexpr std::size_t kMostSharedEntryBytes = static_cast<std::size_t>(state_count(K)) * kNearestBuckets * sizeof(std::uint32_t);
template <OptimizerKind K>
constexpr std::size_t kStaticSharedBytes = static_cast<std::size_t>(state_count(K)) * 256 * sizeof(float);  // code_values

// Once per device and kernel, as resident_grid caches its occupancy: the attribute holds for the
// process, and a step should not pay two driver calls each time.
template <OptimizerKind K, DType D>
void opt_in_to_shared_entries(int device) {
  thread_local std::set<int> opted_in;
  if (opted_in.count(device) != 0) return;
  int device_most = 0;
  check(cudaDeviceGetAttribute(&device_most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        "cudaDeviceGetAttribute (shared memory a block may opt in to)");
  const std::size_t dynamic_most = static_cast<std::size_t>(device_most) > kStaticSharedBytes<K>
                                       ? static_cast<std::size_t>(device_most) - kStaticSharedBytes<K>
                                       : 0;
  check(cudaFuncSetAttribute(optimizer8_warp_kernel<K, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(std::min(kMostSharedEntryBytes<K>, dynamic_most))),
        "8-bit optimizer kernel: shared memory for its maps' decision entries");
  opted_in.insert(device);
}

template <OptimizerKind K, DType D>
void launch_warp_step_as(int device, const Optimizer8Params& p, const CodeTable* tables, std::int64_t blocks, int* counter,
                         const float* skip, cudaStream_t stream) {
  const int threads = kWarp * kWarpsPerBlock;
  const std::size_t shared_bytes = shared_entry_bytes<K>(p);
  if (shared_bytes + kStaticSharedBytes<K> > kSharedBytesWithoutOptIn) opt_in_to_shared_entries<K, D>(device);
  const std::int64_t resident = resident_grid(device, optimizer8_warp_kernel<K, D>, threads, shared_bytes);
  const auto grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min((blocks + kWarpsPerBlock - 1) / kWarpsPerBlock, resident)));
  optimizer8_warp_kernel<K, D><<<grid, threads, shared_bytes, stream>>>(p, tables, blocks, counter, skip);
}

template <OptimizerKind K>
void launch_warp_step_of(int device, const Optimizer8Params& p, const CodeTable* tables, std::int64_t blocks, int* counter,
                         const float* skip, cudaStream_t stream) {
  switch (p.base.param_dtype) {
    case DType::f16: launch_warp_step_as<K, DType::f16>(device, p, tables, blocks, counter, skip, stream); break;
    case DType::bf16: launch_warp_step_as<K, DType::bf16>(device, p, tables, blocks, counter, skip, stream); break;
    default: launch_warp_step_as<K, DType::f32>(device, p, tables, blocks, counter, skip, stream); break;
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
