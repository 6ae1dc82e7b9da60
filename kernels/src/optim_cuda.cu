// The CUDA launcher of the optimizers: a scan kernel for non-finite gradients, then (only if the
// gradient is finite) a grid-stride kernel running the same element body as the CPU launcher.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim_launch.hpp"

namespace bitparity {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(ErrorCode::cuda_failure, std::string(what) + ": " + cudaGetErrorString(status));
}

__global__ void scan_gradient_kernel(const OptimizerParams p, int* nonfinite) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += stride) {
    if (gradient_nonfinite(p, i)) *nonfinite = 1;  // every writer writes 1: the race is benign
  }
}

template <OptimizerKind K>
__global__ void optimizer_kernel(const OptimizerParams p, std::int64_t first, std::int64_t last) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < last; i += stride) {
    optimizer_step_element_of<K>(p, i);
  }
}

unsigned grid_of(const LaunchConfig& launch, std::int64_t elements, int threads) {
  std::int64_t grid = (elements + threads - 1) / threads;
  if (launch.max_grid > 0) grid = std::min(grid, launch.max_grid);
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(grid, 1 << 30)));
}

}  // namespace

namespace cuda {

bool optimizer_step(int device, const OptimizerParams& p, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const int threads = std::clamp(launch.threads > 0 ? launch.threads : 256, 1, 1024);
  int* flag = nullptr;
  check(cudaMalloc(&flag, sizeof(int)), "cudaMalloc");
  check(cudaMemset(flag, 0, sizeof(int)), "cudaMemset");
  scan_gradient_kernel<<<grid_of(launch, p.numel, threads), threads>>>(p, flag);
  check(cudaGetLastError(), "gradient scan launch");
  int nonfinite = 0;
  check(cudaMemcpy(&nonfinite, flag, sizeof(int), cudaMemcpyDeviceToHost), "gradient scan");
  cudaFree(flag);
  if (nonfinite) return true;
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch * kOptimizerElementsPerLaunchBlock : p.numel;
  for (std::int64_t first = 0; first < p.numel; first += per_launch) {
    const std::int64_t last = std::min(p.numel, first + per_launch);
    with_optimizer_kind(p.kind, [&](auto kind) {
      optimizer_kernel<decltype(kind)::value><<<grid_of(launch, last - first, threads), threads>>>(p, first, last);
    });
    check(cudaGetLastError(), "optimizer kernel launch");
  }
  check(cudaDeviceSynchronize(), "optimizer kernel");
  return false;
}

}  // namespace cuda
}  // namespace bitparity
