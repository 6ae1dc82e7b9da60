// The CUDA launcher: the same kernel body as the CPU launcher over the same logical quant blocks.
// One CUDA block per quant block (grid-stride beyond max_grid); its threads scan the block, reduce
// the absmax in shared memory (max is exact, so the reduction order cannot matter), then quantize.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quantize.hpp"

#include "cuda_support.hpp"

namespace bitparity {

namespace {

using cuda::check;

constexpr int kMaxThreads = 1024;

int threads_for(const LaunchConfig& launch, std::int64_t work_per_block) {
  int threads = launch.threads > 0 ? launch.threads : 256;
  threads = std::min(threads, kMaxThreads);
  threads = static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(32, work_per_block)));
  return std::max(1, threads);
}

std::int64_t grid_for(const LaunchConfig& launch, std::int64_t blocks) {
  std::int64_t grid = blocks;
  if (launch.max_grid > 0) grid = std::min(grid, launch.max_grid);
  return std::min<std::int64_t>(grid, 1 << 30);
}

// Each CUDA block copies the decision table into shared memory once.
__device__ void load_table(CodeTable& shared, const CodeTable& table) {
  const auto* source = reinterpret_cast<const std::uint32_t*>(&table);
  auto* destination = reinterpret_cast<std::uint32_t*>(&shared);
  for (unsigned i = threadIdx.x; i < sizeof(CodeTable) / 4; i += blockDim.x) destination[i] = source[i];
  __syncthreads();
}

__global__ void quantize_kernel(const CodeTable table, const QuantizeParams p, std::int64_t first, std::int64_t last) {
  __shared__ CodeTable shared_table;
  __shared__ float block_absmax[kMaxThreads];
  __shared__ int block_nonfinite[kMaxThreads];
  load_table(shared_table, table);
  for (std::int64_t block = first + blockIdx.x; block < last; block += gridDim.x) {
    const std::int64_t begin = block_begin(block, p.blocksize);
    const std::int64_t end = block_end(block, p.blocksize, p.numel);
    BlockScan scan;
    for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      scan_element(scan, load_as_float(p.input, p.input_dtype, p.input_index.storage(i)));
    }
    block_absmax[threadIdx.x] = scan.absmax;
    block_nonfinite[threadIdx.x] = scan.nonfinite ? 1 : 0;
    __syncthreads();
    if (threadIdx.x == 0) {
      BlockScan total;
      for (unsigned t = 0; t < blockDim.x; ++t) merge_scan(total, BlockScan{block_absmax[t], block_nonfinite[t] != 0});
      block_absmax[0] = finish_block(p, block, total);
      block_nonfinite[0] = total.nonfinite ? 1 : 0;
    }
    __syncthreads();
    const float absmax = block_absmax[0];
    const bool nonfinite = block_nonfinite[0] != 0;
    if (shared_table.bits == 4) {
      for (std::int64_t byte = begin / 2 + threadIdx.x; byte < (end + 1) / 2; byte += blockDim.x) {
        p.codes[byte] = quantize_packed_byte(shared_table, p, byte, absmax, nonfinite);
      }
    } else {
      for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        p.codes[i] = nonfinite ? shared_table.zero_code : quantize_element(shared_table, p, i, absmax);
      }
    }
    __syncthreads();  // block_absmax is reused by the next quant block
  }
}

__global__ void dequantize_kernel(const CodeTable table, const DequantizeParams p, std::int64_t first,
                                  std::int64_t last) {
  __shared__ CodeTable shared_table;
  load_table(shared_table, table);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < last; i += stride) {
    dequantize_element(shared_table, p, i);
  }
}

__global__ void convert_kernel(const ConvertParams p) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += stride) {
    convert_element(p, i);
  }
}

}  // namespace

bool cuda_built() { return true; }

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: treat as zero devices
    return 0;
  }
  return count;
}

namespace cuda {

void quantize(int device, const CodeTable& table, const QuantizeParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const int threads = threads_for(launch, table.bits == 4 ? params.blocksize / 2 : params.blocksize);
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
  for (std::int64_t first = 0; first < blocks; first += per_launch) {
    const std::int64_t last = std::min(blocks, first + per_launch);
    quantize_kernel<<<static_cast<unsigned>(grid_for(launch, last - first)), threads>>>(table, params, first, last);
    check(cudaGetLastError(), "quantize kernel launch");
  }
  check(cudaDeviceSynchronize(), "quantize kernel");
}

void dequantize(int device, const CodeTable& table, const DequantizeParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const int threads = threads_for(launch, 1024);
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
  for (std::int64_t first = 0; first < blocks; first += per_launch) {
    const std::int64_t begin = first * params.blocksize;
    const std::int64_t end = std::min(params.numel, std::min(blocks, first + per_launch) * params.blocksize);
    const std::int64_t grid = grid_for(launch, (end - begin + threads - 1) / threads);
    dequantize_kernel<<<static_cast<unsigned>(grid), threads>>>(table, params, begin, end);
    check(cudaGetLastError(), "dequantize kernel launch");
  }
  check(cudaDeviceSynchronize(), "dequantize kernel");
}

void convert(int device, const ConvertParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const int threads = threads_for(launch, 1024);
  const std::int64_t grid = grid_for(launch, (params.numel + threads - 1) / threads);
  convert_kernel<<<static_cast<unsigned>(grid), threads>>>(params);
  check(cudaGetLastError(), "convert kernel launch");
  check(cudaDeviceSynchronize(), "convert kernel");
}

void* allocate(int device, std::int64_t bytes) {
  check(cudaSetDevice(device), "cudaSetDevice");
  void* pointer = nullptr;
  check(cudaMalloc(&pointer, static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1))), "cudaMalloc");
  return pointer;
}

void release(void* pointer) { cudaFree(pointer); }

void copy_to_device(int device, void* destination, const void* source, std::int64_t bytes) {
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaMemcpy(destination, source, static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}

void copy_to_host(int device, void* destination, const void* source, std::int64_t bytes) {
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaMemcpy(destination, source, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

void copy_on_device(int device, void* destination, const void* source, std::int64_t bytes) {
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaMemcpy(destination, source, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
  check(cudaDeviceSynchronize(), "cudaMemcpy D2D");
}

}  // namespace cuda
}  // namespace bitparity
