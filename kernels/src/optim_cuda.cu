// The CUDA launcher of the optimizers, in the passes of optim_launch.hpp, running the same element
// bodies as the CPU launcher. The norm pass reduces exact accumulators: per thread, then per CUDA
// block in shared memory, then the block sums on the host; exact, so the grouping cannot matter.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim_launch.hpp"
#include "cuda_support.hpp"
#include "optim_lanes_cuda.cuh"

namespace bitparity {

namespace {

using cuda::check;
using cuda::apply_lanes_kernel;
using cuda::kLanes;
using cuda::lanes_apply;
using cuda::scan_gradient_vectors_kernel;
using cuda::scan_vectors;

constexpr int kNormThreads = 256;  // the shared-memory tree of the norm pass holds this many sums
constexpr int kMaxThreads = 1024;  // the most threads per block a launch may ask for (threads_of)

// Kernel parameters are __grid_constant__: no per-thread copy of the (large) parameter struct.
// The non-finite flag is a float, as torch's found_inf, so a caller's flag and the scan's are alike.
__global__ void __launch_bounds__(kMaxThreads) scan_gradient_kernel(const __grid_constant__ OptimizerParams p, std::int64_t first, float* nonfinite) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += stride) {
    if (gradient_nonfinite(p, i)) *nonfinite = 1.0f;  // every writer writes 1: the race is benign
  }
}

// `skip` is a device-side non-finite flag (the scan's, or the caller's found_inf): nonzero, the
// kernel writes nothing. So the elementwise step needs no host round trip before the update.
template <OptimizerKind K>
__global__ void __launch_bounds__(kMaxThreads) apply_kernel(const __grid_constant__ OptimizerParams p, std::int64_t first, std::int64_t last,
                             const float* skip) {
  if (skip != nullptr && *skip != 0.0f) return;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < last; i += stride) {
    optimizer_step_element_of<K>(p, i);
  }
}

__device__ void reduce_block(ExactSquareSum* shared, ExactSquareSum mine, ExactSquareSum* out) {
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x].merge(shared[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = shared[0];
  __syncthreads();
}

template <OptimizerKind K>
__global__ void __launch_bounds__(kNormThreads) norm_kernel(const __grid_constant__ OptimizerParams p, std::int64_t first, std::int64_t last, ExactSquareSum* block_sums) {
  __shared__ ExactSquareSum shared[kNormThreads];
  ExactSquareSum param_sum, direction_sum;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < last; i += stride) {
    norm_terms_element_of<K>(p, i, param_sum, direction_sum);
  }
  reduce_block(shared, param_sum, &block_sums[2 * blockIdx.x]);
  reduce_block(shared, direction_sum, &block_sums[2 * blockIdx.x + 1]);
}

unsigned grid_of(const LaunchConfig& launch, std::int64_t elements, int threads) {
  std::int64_t grid = (elements + threads - 1) / threads;
  if (launch.max_grid > 0) grid = std::min(grid, launch.max_grid);
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(grid, 1 << 30)));
}

int threads_of(const LaunchConfig& launch) { return std::clamp(launch.threads > 0 ? launch.threads : 256, 1, kMaxThreads); }

std::int64_t per_launch(const OptimizerParams& p, const LaunchConfig& launch) {
  return launch.blocks_per_launch > 0 ? launch.blocks_per_launch * kOptimizerElementsPerLaunchBlock : p.numel;
}

}  // namespace

namespace cuda {

const float* queue_gradient_scan(int device, const OptimizerParams& p, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const int threads = threads_of(launch);
  auto* const flag = static_cast<float*>(scratch(device, sizeof(float), kScanFlagSlot));
  check(cudaMemsetAsync(flag, 0, sizeof(float), stream_of(launch)), "cudaMemset");
  std::int64_t first = 0;
  if (const std::int64_t vectors = scan_vectors(p, launch); vectors > 0) {  // then the generic kernel for the tail
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>(
        (vectors + cuda::kScanThreads - 1) / cuda::kScanThreads, cuda::device_filling_grid(device, cuda::kScanThreads)));
    scan_gradient_vectors_kernel<<<grid, cuda::kScanThreads, 0, stream_of(launch)>>>(p, vectors, flag);
    check(cudaGetLastError(), "gradient scan launch");
    first = vectors * (p.grad_dtype == DType::f32 ? 4 : 8);
  }
  if (first < p.numel) {
    scan_gradient_kernel<<<grid_of(launch, p.numel - first, threads), threads, 0, stream_of(launch)>>>(p, first, flag);
    check(cudaGetLastError(), "gradient scan launch");
  }
  return flag;
}

namespace {

// Reads a flag once the work queued on `stream` before it is done.
bool read_flag(const float* flag, cudaStream_t stream) {
  float value = 0;
  check(cudaMemcpyAsync(&value, flag, sizeof(float), cudaMemcpyDeviceToHost, stream), "non-finite flag");
  check(cudaStreamSynchronize(stream), "non-finite flag");
  return value != 0.0f;
}

void launch_apply(const OptimizerParams& p, const LaunchConfig& launch, const float* skip) {
  const int threads = threads_of(launch);
  std::int64_t start = 0;
  if (lanes_apply(p, launch)) {  // the contiguous fast path, then the generic kernel for the tail
    const std::int64_t groups = p.numel / kLanes;
    with_optimizer_kind(p.kind, [&](auto kind) {
      apply_lanes_kernel<decltype(kind)::value><<<grid_of(launch, groups, threads), threads, 0, stream_of(launch)>>>(p, groups, skip);
    });
    check(cudaGetLastError(), "optimizer kernel launch");
    start = groups * kLanes;
  }
  for (std::int64_t first = start; first < p.numel; first += per_launch(p, launch)) {
    const std::int64_t last = std::min(p.numel, first + per_launch(p, launch));
    with_optimizer_kind(p.kind, [&](auto kind) {
      apply_kernel<decltype(kind)::value><<<grid_of(launch, last - first, threads), threads, 0, stream_of(launch)>>>(p, first, last, skip);
    });
    check(cudaGetLastError(), "optimizer kernel launch");
  }
}

}  // namespace

bool gradient_has_nonfinite(int device, const OptimizerParams& p, const LaunchConfig& launch) {
  return read_flag(queue_gradient_scan(device, p, launch), stream_of(launch));
}

bool scan_and_apply(int device, const OptimizerParams& p, const LaunchConfig& launch) {
  const float* flag = queue_gradient_scan(device, p, launch);
  launch_apply(p, launch, flag);
  return read_flag(flag, stream_of(launch));  // waits for both kernels
}

bool apply_unless_found_inf(int device, const OptimizerParams& p, const LaunchConfig& launch, const float* found_inf,
                            bool synchronize) {
  check(cudaSetDevice(device), "cudaSetDevice");
  launch_apply(p, launch, found_inf);
  if (!synchronize) return false;
  return read_flag(found_inf, stream_of(launch));  // waits for the kernel
}

bool found_inf_set(int device, const float* found_inf, void* stream) {
  check(cudaSetDevice(device), "cudaSetDevice");
  return read_flag(found_inf, static_cast<cudaStream_t>(stream));
}

NormSums norm_pass(int device, const OptimizerParams& p, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  // A power of two no larger than the shared tree, for the halving reduction.
  int threads = 1;
  while (threads * 2 <= std::min(threads_of(launch), kNormThreads)) threads *= 2;
  NormSums total;
  for (std::int64_t first = 0; first < p.numel; first += per_launch(p, launch)) {
    const std::int64_t last = std::min(p.numel, first + per_launch(p, launch));
    // A grid that fills the device and no more: the kernel strides over the elements, and every
    // CUDA block adds two accumulators to the host's merge. One block per 256 elements (65536 at
    // 2^24) made the norm pass copy 11.5 MB of sums and merge them on the host: LAMB and LARS took
    // 4.3 ms on the H100 where Adam took 0.2.
    const auto grid = static_cast<unsigned>(
        std::min<std::int64_t>(grid_of(launch, last - first, threads), cuda::device_filling_grid(device, threads)));
    auto* block_sums = static_cast<ExactSquareSum*>(scratch(device, sizeof(ExactSquareSum) * 2 * grid, kBlockSumsSlot));
    with_optimizer_kind(p.kind, [&](auto kind) {
      norm_kernel<decltype(kind)::value><<<grid, threads, 0, stream_of(launch)>>>(p, first, last, block_sums);
    });
    check(cudaGetLastError(), "norm kernel launch");
    std::vector<ExactSquareSum> sums(2 * grid);
    check(cudaMemcpyAsync(sums.data(), block_sums, sizeof(ExactSquareSum) * 2 * grid, cudaMemcpyDeviceToHost, stream_of(launch)),
          "norm kernel");
    wait_for(launch, "norm kernel");
    for (unsigned b = 0; b < grid; ++b) {
      total.param.merge(sums[2 * b]);
      total.direction.merge(sums[2 * b + 1]);
    }
  }
  return total;
}

void apply_pass(int device, const OptimizerParams& p, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  launch_apply(p, launch, nullptr);
  wait_for(launch, "optimizer kernel");
}

}  // namespace cuda
}  // namespace bitparity
