// The CUDA launcher: the same kernel body as the CPU launcher over the same logical quant blocks.
// A CUDA block walks quant blocks (grid-stride over a grid that fills the device); its threads scan
// a quant block, merge the absmax in two levels (max is exact, so the grouping cannot matter), then
// quantize. Each thread keeps kUnroll loads in flight before it computes or stores. Parameter
// structs are __grid_constant__: indexing a by-value parameter would otherwise copy the whole struct
// into every thread's local memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quantize.hpp"

#include "block_scan_cuda.cuh"
#include "cuda_support.hpp"

namespace bitparity {

namespace {

using cuda::check;
using cuda::device_code_tables;
using cuda::device_filling_grid;
using cuda::merged_block_scan;

constexpr int kMaxThreads = 1024;

int threads_for(const LaunchConfig& launch, std::int64_t work_per_block) {
  int threads = launch.threads > 0 ? launch.threads : 256;
  threads = std::min(threads, kMaxThreads);
  threads = static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(32, work_per_block)));
  return std::max(1, threads);
}

// No more blocks than the work has, than fill the device, or than the caller's cap.
std::int64_t grid_for(int device, const LaunchConfig& launch, std::int64_t blocks, int threads) {
  std::int64_t grid = std::min(blocks, device_filling_grid(device, threads));
  if (launch.max_grid > 0) grid = std::min(grid, launch.max_grid);
  return std::max<std::int64_t>(1, std::min<std::int64_t>(grid, 1 << 30));
}

constexpr int kUnroll = 4;  // elements a thread loads before it computes or stores any
// Every kernel is declared for the largest block it may be launched with (__launch_bounds__), so
// the compiler keeps its registers within what such a block can hold: 72 registers x 1024 threads
// failed to launch on the H100 (cudaErrorLaunchOutOfResources).

// The code table is read through the L1 cache from the device's own copy (device_code_tables).
__global__ void __launch_bounds__(kMaxThreads) quantize_kernel(const CodeTable* __restrict__ tables, const __grid_constant__ QuantizeParams p,
                                std::int64_t first, std::int64_t last) {
  __shared__ float absmax_slots[kMaxThreads];
  __shared__ int flag_slots[kMaxThreads];
  const CodeTable& table = *tables;
  const std::int64_t stride = blockDim.x;
  for (std::int64_t block = first + blockIdx.x; block < last; block += gridDim.x) {
    const std::int64_t begin = block_begin(block, p.blocksize);
    const std::int64_t end = block_end(block, p.blocksize, p.numel);
    BlockScan scan;
    for (std::int64_t base = begin + threadIdx.x; base < end; base += kUnroll * stride) {
      float x[kUnroll];
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        const std::int64_t i = base + j * stride;
        x[j] = i < end ? load_as_float(p.input, p.input_dtype, p.input_index.storage(i)) : 0.0f;  // 0 leaves a scan as it is
      }
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) scan_element(scan, x[j]);
    }
    const BlockScan total = merged_block_scan(scan, absmax_slots, flag_slots);
    if (threadIdx.x == 0) finish_block(p, block, total);
    const float absmax = stored_absmax(total);
    if (table.bits == 4) {
      for (std::int64_t byte = begin / 2 + threadIdx.x; byte < (end + 1) / 2; byte += stride) {
        p.codes[byte] = quantize_packed_byte(table, p, byte, absmax, total.nonfinite);
      }
    } else if (total.nonfinite) {
      for (std::int64_t i = begin + threadIdx.x; i < end; i += stride) p.codes[i] = table.zero_code;
    } else {
      for (std::int64_t base = begin + threadIdx.x; base < end; base += kUnroll * stride) {
        float x[kUnroll];
#pragma unroll
        for (int j = 0; j < kUnroll; ++j) {
          const std::int64_t i = base + j * stride;
          x[j] = i < end ? load_as_float(p.input, p.input_dtype, p.input_index.storage(i)) : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < kUnroll; ++j) {
          const std::int64_t i = base + j * stride;
          if (i < end) p.codes[i] = quantize_value(table, p, i, x[j], absmax);
        }
      }
    }
  }
}

// One quant block at a time per CUDA block: its absmax is loaded once; each thread loads kUnroll
// codes, then stores their values.
__global__ void __launch_bounds__(kMaxThreads) dequantize_kernel(const CodeTable* __restrict__ tables, const __grid_constant__ DequantizeParams p,
                                  std::int64_t first, std::int64_t last) {
  const CodeTable& table = *tables;
  const std::int64_t stride = blockDim.x;
  for (std::int64_t block = first + blockIdx.x; block < last; block += gridDim.x) {
    const float absmax = p.absmax[block];
    const std::int64_t end = block_end(block, p.blocksize, p.numel);
    for (std::int64_t base = block_begin(block, p.blocksize) + threadIdx.x; base < end; base += kUnroll * stride) {
      std::uint8_t code[kUnroll];
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        const std::int64_t i = base + j * stride;
        code[j] = i < end ? code_at(p, i) : 0;
      }
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        const std::int64_t i = base + j * stride;
        if (i < end) store_dequantized(table, p, i, code[j], absmax);
      }
    }
  }
}

__global__ void __launch_bounds__(kMaxThreads) convert_kernel(const __grid_constant__ ConvertParams p) {
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

std::string cuda_device_description(int index) {
  cudaDeviceProp properties{};
  if (index < 0 || index >= cuda_device_count() || cudaGetDeviceProperties(&properties, index) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return std::string(properties.name) + ", sm_" + std::to_string(properties.major) + std::to_string(properties.minor) +
         ", driver " + version(driver) + ", runtime " + version(runtime);
}

namespace cuda {

void quantize(int device, QuantFormat format, const QuantizeParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const CodeTable* table = device_code_tables(device, {format});
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const int threads = threads_for(launch, params.blocksize / kUnroll);
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
  for (std::int64_t first = 0; first < blocks; first += per_launch) {
    const std::int64_t last = std::min(blocks, first + per_launch);
    const auto grid = static_cast<unsigned>(grid_for(device, launch, last - first, threads));
    quantize_kernel<<<grid, threads, 0, stream_of(launch)>>>(table, params, first, last);
    check(cudaGetLastError(), "quantize kernel launch");
  }
  wait_for(launch, "quantize kernel");
}

void dequantize(int device, QuantFormat format, const DequantizeParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const CodeTable* table = device_code_tables(device, {format});
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const int threads = threads_for(launch, params.blocksize / kUnroll);
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
  for (std::int64_t first = 0; first < blocks; first += per_launch) {
    const std::int64_t last = std::min(blocks, first + per_launch);
    const auto grid = static_cast<unsigned>(grid_for(device, launch, last - first, threads));
    dequantize_kernel<<<grid, threads, 0, stream_of(launch)>>>(table, params, first, last);
    check(cudaGetLastError(), "dequantize kernel launch");
  }
  wait_for(launch, "dequantize kernel");
}

void convert(int device, const ConvertParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const int threads = threads_for(launch, 1024);
  std::int64_t grid = std::max<std::int64_t>(1, (params.numel + threads - 1) / threads);
  if (launch.max_grid > 0) grid = std::min(grid, launch.max_grid);
  grid = std::min<std::int64_t>(grid, 1 << 30);
  convert_kernel<<<static_cast<unsigned>(grid), threads, 0, stream_of(launch)>>>(params);
  check(cudaGetLastError(), "convert kernel launch");
  wait_for(launch, "convert kernel");
}

void* allocate(int device, std::int64_t bytes) {
  check(cudaSetDevice(device), "cudaSetDevice");
  void* pointer = nullptr;
  check(cudaMalloc(&pointer, static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1))), "cudaMalloc");
  return pointer;
}

void release(void* pointer) { cudaFree(pointer); }

void copy_to_device(int device, void* destination, const void* source, std::int64_t bytes, void* stream) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const auto queue = static_cast<cudaStream_t>(stream);
  check(cudaMemcpyAsync(destination, source, static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice, queue), "cudaMemcpy H2D");
  check(cudaStreamSynchronize(queue), "cudaMemcpy H2D");  // the host buffer may change after the return
}

void copy_to_host(int device, void* destination, const void* source, std::int64_t bytes, void* stream) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const auto queue = static_cast<cudaStream_t>(stream);
  check(cudaMemcpyAsync(destination, source, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost, queue), "cudaMemcpy D2H");
  check(cudaStreamSynchronize(queue), "cudaMemcpy D2H");
}

void* create_stream(int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  return stream;
}

void destroy_stream(void* stream) {
  if (stream != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

void copy_on_device(int device, void* destination, const void* source, std::int64_t bytes) {
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaMemcpy(destination, source, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
  check(cudaDeviceSynchronize(), "cudaMemcpy D2D");
}

}  // namespace cuda
}  // namespace bitparity
