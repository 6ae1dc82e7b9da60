// The CUDA launcher: the same kernel body as the CPU launcher over the same logical quant blocks.
// A CUDA block walks quant blocks (grid-stride over a grid that fills the device); its threads scan
// a quant block, merge the absmax in two levels (max is exact, so the grouping cannot matter), then
// quantize. Each thread keeps kUnroll loads in flight before it computes or stores. Parameter
// structs are __grid_constant__: indexing a by-value parameter would otherwise copy the whole struct
// into every thread's local memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

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
using cuda::readback_words;

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
// Every kernel that scans blocks counts those with a non-finite value in `nonfinite_blocks` (unless
// it is null: an unsynchronised launch, whose count nobody reads).
__global__ void __launch_bounds__(kMaxThreads) quantize_kernel(const CodeTable* __restrict__ tables, const __grid_constant__ QuantizeParams p,
                                std::int64_t first, std::int64_t last, unsigned int* nonfinite_blocks) {
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
    if (threadIdx.x == 0) {
      finish_block(p, block, total);
      if (total.nonfinite && nonfinite_blocks != nullptr) atomicAdd(nonfinite_blocks, 1u);
    }
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

// The contiguous quantize with nearest rounding: one warp per quant block. The scan merges over the
// warp by shuffles, a max of magnitude bits (non-negative floats order as their bits) and an or,
// exact and order-free as merged_block_scan, with no shared memory and no barrier; each lane then
// decides its own elements (nearest_code_of), reloading them (the block was just read: the caches
// hold it).
constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;

// The warp's merged scan; lane 0 stores the block's absmax and flag and counts a non-finite block.
__device__ BlockScan finish_warp_block(const QuantizeParams& p, std::int64_t block, const BlockScan& scan, int lane,
                                       unsigned int* nonfinite_blocks) {
  const BlockScan total{float_from_bits(__reduce_max_sync(0xFFFFFFFFu, float_bits(scan.absmax))),
                        __any_sync(0xFFFFFFFFu, scan.nonfinite) != 0};
  if (lane == 0) {
    finish_block(p, block, total);
    if (total.nonfinite && nonfinite_blocks != nullptr) atomicAdd(nonfinite_blocks, 1u);
  }
  return total;
}

// Four consecutive elements from element `first` of the input, `first` a multiple of four past an
// aligned start (16 bytes for fp32, 8 for 16-bit): one vector load, as little-endian words.
template <DType D>
__device__ void load_four(const void* input, std::int64_t first, std::uint32_t (&words)[kWordsOfFour<D>]) {
  if constexpr (D == DType::f32) {
    const uint4 loaded = *reinterpret_cast<const uint4*>(static_cast<const float*>(input) + first);
    words[0] = loaded.x, words[1] = loaded.y, words[2] = loaded.z, words[3] = loaded.w;
  } else {
    const uint2 loaded = *reinterpret_cast<const uint2*>(static_cast<const std::uint16_t*>(input) + first);
    words[0] = loaded.x, words[1] = loaded.y;
  }
}

// The values of those four elements (widen_four: load_as's widening).
template <DType D>
__device__ void load_four_values(const void* input, std::int64_t first, float (&x)[4]) {
  std::uint32_t words[kWordsOfFour<D>];
  load_four<D>(input, first, words);
  widen_four<D>(words, x);
}

// A whole block by fours (where by_fours_applies): lane l takes elements 4l..4l+3 of every 128, one
// vector load each, scans them, and after the warp's merge decides them from the registers it
// loaded them into (blocks of up to 512 elements) or from a reload, and stores their codes with
// one store (widen_four, nearest_codes_of_four: the element path's values and codes), a 32-bit word
// of 8-bit codes or 16 bits of 4-bit ones. Where the scalar loop below spends two loads, a byte
// store and their address arithmetic on every element (or two elements), this spends them on four.
template <int Bits>
using FourCodes = std::conditional_t<Bits == 8, std::uint32_t, std::uint16_t>;

// The codes of a lane's `fours` fours of a block (Fours of them, fully unrolled, where Fours > 0:
// values kept in registers are then indexed by constants), decided from their values. `absmax > 0`
// is tested once here, so that normalize's own test of it, the same comparison, folds away in the
// loop (an all-zero block takes the same call: the codes are the same).
template <int Bits, int Fours, class Values, class Store>
__device__ void store_codes_of_fours(const CodeTable& table, const NearestIndex& index, float absmax, int fours,
                                     Values&& values, Store&& store) {
  const auto decide = [&](int f) {
    float x[4];
    values(f, x);
    store(f, static_cast<FourCodes<Bits>>(nearest_codes_of_four<Bits>(table, index, x, absmax)));
  };
  if constexpr (Fours > 0) {
    if (absmax > 0.0f) {
#pragma unroll
      for (int f = 0; f < Fours; ++f) decide(f);
    } else {
#pragma unroll
      for (int f = 0; f < Fours; ++f) decide(f);
    }
  } else if (absmax > 0.0f) {
#pragma unroll 2
    for (int f = 0; f < fours; ++f) decide(f);
  } else {
    for (int f = 0; f < fours; ++f) decide(f);
  }
}

// Groups of 128 elements a lane keeps in registers from the scan to the decision (blocks of up to
// 512 elements: 16 values a lane); larger blocks reload their values (the caches hold them).
constexpr int kResidentGroups = 4;

template <DType D, int Bits, int Groups>
__device__ void quantize_block_by_fours(const CodeTable& table, const NearestIndex& index, const QuantizeParams& p,
                                        std::int64_t block, std::int64_t begin, std::int64_t end, int lane,
                                        unsigned int* nonfinite_blocks) {
  const void* const input = p.input;
  const std::int64_t offset = p.input_index.offset + begin + 4 * lane;  // this lane's first element: four f of it lie at +128 f
  const int fours = static_cast<int>((end - begin) / (4 * kWarp));    // of this lane
  constexpr int kKept = Groups > 0 ? Groups : 1;
  float kept[kKept][4];
  BlockScan scan;
  if constexpr (Groups > 0) {
#pragma unroll
    for (int f = 0; f < Groups; ++f) load_four_values<D>(input, offset + 4 * kWarp * f, kept[f]);
#pragma unroll
    for (int f = 0; f < Groups; ++f) {
#pragma unroll
      for (int j = 0; j < 4; ++j) scan_element(scan, kept[f][j]);
    }
  } else {
#pragma unroll 2
    for (int f = 0; f < fours; ++f) {
      float x[4];
      load_four_values<D>(input, offset + 4 * kWarp * f, x);
#pragma unroll
      for (int j = 0; j < 4; ++j) scan_element(scan, x[j]);
    }
  }
  const BlockScan total = finish_warp_block(p, block, scan, lane, nonfinite_blocks);
  auto* const stores = reinterpret_cast<FourCodes<Bits>*>(p.codes) + (begin + 4 * lane) / 4;  // four f: stores[kWarp * f]
  if (total.nonfinite) {
    const std::uint32_t zero = table.zero_code;
    const auto zeros = static_cast<FourCodes<Bits>>(Bits == 8 ? zero * 0x01010101u : ((zero << 4) | zero) * 0x0101u);
    for (int f = 0; f < fours; ++f) stores[kWarp * f] = zeros;
    return;
  }
  const auto store = [&](int f, FourCodes<Bits> codes) { stores[kWarp * f] = codes; };
  if constexpr (Groups > 0) {
    store_codes_of_fours<Bits, Groups>(table, index, stored_absmax(total), Groups, [&](int f, float (&x)[4]) {
#pragma unroll
      for (int j = 0; j < 4; ++j) x[j] = kept[f][j];
    }, store);
  } else {
    store_codes_of_fours<Bits, 0>(table, index, stored_absmax(total), fours,
                               [&](int f, float (&x)[4]) { load_four_values<D>(input, offset + 4 * kWarp * f, x); }, store);
  }
}

// quantize_block_by_fours with the block's 128-element groups kept in registers where they fit.
template <DType D, int Bits>
__device__ void quantize_block_by_fours_of(const CodeTable& table, const NearestIndex& index, const QuantizeParams& p,
                                           std::int64_t block, std::int64_t begin, std::int64_t end, int lane,
                                           unsigned int* nonfinite_blocks) {
  switch (p.blocksize / (4 * kWarp)) {
    case 1: quantize_block_by_fours<D, Bits, 1>(table, index, p, block, begin, end, lane, nonfinite_blocks); break;
    case 2: quantize_block_by_fours<D, Bits, 2>(table, index, p, block, begin, end, lane, nonfinite_blocks); break;
    case kResidentGroups:
      quantize_block_by_fours<D, Bits, kResidentGroups>(table, index, p, block, begin, end, lane, nonfinite_blocks);
      break;
    default: quantize_block_by_fours<D, Bits, 0>(table, index, p, block, begin, end, lane, nonfinite_blocks); break;
  }
}

template <DType D, int Bits>
__global__ void __launch_bounds__(kWarp * kWarpsPerBlock) quantize_warp_kernel(const CodeTable* __restrict__ tables,
                                                                              const __grid_constant__ QuantizeParams p,
                                                                              std::int64_t blocks, bool by_fours,
                                                                              unsigned int* nonfinite_blocks) {
  const CodeTable& table = *tables;
  // The finer index's entries, copied once per CUDA block: a warp's 32 decisions read 32 scattered
  // entries, which L1 serves a cache line at a time and shared memory a bank at a time.
  extern __shared__ std::uint32_t shared_nearest_entries[];
  const int entries = nearest_entry_count(table);
  for (int e = static_cast<int>(threadIdx.x); e < entries; e += static_cast<int>(blockDim.x)) {
    shared_nearest_entries[e] = table.nearest_entry[e];
  }
  __syncthreads();
  NearestIndex index = nearest_index(table);
  index.entry = shared_nearest_entries;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  const void* const input = p.input;
  const std::int64_t offset = p.input_index.offset;
  // The block index is the same on every lane of a warp, so every shuffle has all 32 lanes.
  for (std::int64_t block = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; block < blocks;
       block += warps) {
    const std::int64_t begin = block_begin(block, p.blocksize);
    const std::int64_t end = block_end(block, p.blocksize, p.numel);
    if (by_fours && end - begin == p.blocksize) {  // a partial last block takes the loops below
      quantize_block_by_fours_of<D, Bits>(table, index, p, block, begin, end, lane, nonfinite_blocks);
      continue;
    }
    BlockScan scan;
#pragma unroll 4
    for (std::int64_t i = begin + lane; i < end; i += kWarp) scan_element(scan, load_as<D>(input, offset + i));
    const BlockScan total = finish_warp_block(p, block, scan, lane, nonfinite_blocks);
    const float absmax = stored_absmax(total);
    const auto decide = [&](float x) { return static_cast<std::uint32_t>(nearest_code_of(table, index, normalize(x, absmax))); };
    if constexpr (Bits == 8) {
#pragma unroll 4
      for (std::int64_t i = begin + lane; i < end; i += kWarp) {
        p.codes[i] = static_cast<std::uint8_t>(
            total.nonfinite ? static_cast<std::uint32_t>(table.zero_code) : decide(load_as<D>(input, offset + i)));
      }
    } else {
      // quantize_packed_byte's bytes: element 2b high, 2b + 1 low (0 past the tensor's end).
      for (std::int64_t byte = begin / 2 + lane; byte < (end + 1) / 2; byte += kWarp) {
        const std::int64_t first = 2 * byte;
        const bool has_low = first + 1 < p.numel;
        std::uint32_t high = table.zero_code, low = has_low ? table.zero_code : 0u;
        if (!total.nonfinite) {
          high = decide(load_as<D>(input, offset + first));
          if (has_low) low = decide(load_as<D>(input, offset + first + 1));
        }
        p.codes[byte] = static_cast<std::uint8_t>((high << 4) | (low & 0x0Fu));
      }
    }
  }
}

// The contiguous dequantize, by units of 16 bytes of output (4 fp32 or 8 16-bit values): a thread
// loads the codes of a unit as one word (2 to 8 bytes) and stores its outputs with one 16-byte store,
// so that each load and store of a warp is one contiguous run (512 bytes of outputs). The vector
// kernel this replaced stored 64 to 128 bytes a thread, runs of 16 bytes 64 or more apart across a
// warp: on the H100 at 2^24, 8-bit codes into fp32 took 0.082 ms there and 0.042-0.045 ms here
// (2^28: 1.17 ms and 0.52). The arithmetic is dequantize_group's (its first outputs; the others are
// never computed). The code values sit in shared memory; each thread keeps kUnitsInFlight units'
// loads in flight. A unit lies in one block (it divides the block size, a power of two: block_shift
// is its log2), and the launcher gives the last block to the kernel above where its length is not a
// whole number of units.
constexpr int kUnitThreads = 256;
constexpr int kUnitsInFlight = 4;

template <DType D, int Bits>
struct OutputUnit {
  static constexpr int kElements = 16 / static_cast<int>(sizeof(OutputWord<D>));
  static constexpr int kCodeBytes = kElements * Bits / 8;
  using Codes = std::conditional_t<kCodeBytes == 2, std::uint16_t, std::conditional_t<kCodeBytes == 4, std::uint32_t, uint2>>;
  // The codes as dequantize_group's little-endian words.
  static __device__ void words_of(const Codes& codes, std::uint32_t (&bytes)[4]) {
    if constexpr (kCodeBytes == 8) {
      bytes[0] = codes.x, bytes[1] = codes.y;
    } else {
      bytes[0] = codes, bytes[1] = 0u;
    }
    bytes[2] = 0u, bytes[3] = 0u;
  }
};

template <DType D, int Bits>
__global__ void __launch_bounds__(kUnitThreads) dequantize_units_kernel(const CodeTable* __restrict__ tables,
                                                                       const __grid_constant__ DequantizeParams p,
                                                                       std::int64_t units, int block_shift) {
  using Unit = OutputUnit<D, Bits>;
  using Word = OutputWord<D>;
  __shared__ float code_values[256];
  const CodeTable& table = *tables;
  for (int c = threadIdx.x; c < 256; c += blockDim.x) code_values[c] = table.code_values[c];
  __syncthreads();
  const auto* const packed = reinterpret_cast<const typename Unit::Codes*>(p.codes);
  auto* const out = reinterpret_cast<uint4*>(static_cast<Word*>(p.output) + p.output_index.offset);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; first < units;
       first += kUnitsInFlight * stride) {
    typename Unit::Codes codes[kUnitsInFlight];
    float absmax[kUnitsInFlight];
#pragma unroll
    for (int j = 0; j < kUnitsInFlight; ++j) {
      const std::int64_t u = first + j * stride;
      codes[j] = u < units ? packed[u] : typename Unit::Codes{};
      absmax[j] = u < units ? p.absmax[(u * Unit::kElements) >> block_shift] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kUnitsInFlight; ++j) {
      const std::int64_t u = first + j * stride;
      if (u >= units) break;
      std::uint32_t bytes[4];
      Unit::words_of(codes[j], bytes);
      Word words[kGroupElements<Bits>];
      dequantize_group<D, Bits>(table, code_values, bytes, absmax[j], words);
      union {
        Word words[Unit::kElements];
        uint4 vector;
      } staged;
#pragma unroll
      for (int k = 0; k < Unit::kElements; ++k) staged.words[k] = words[k];
      out[u] = staged.vector;
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

namespace {

// The warp kernel takes contiguous inputs rounded to nearest, 8-bit or 4-bit codes of even block
// sizes, where the caller asked for no launch shape of its own (those launches take the kernel above,
// so that P3 compares the two).
bool warp_quantize_applies(const QuantizeParams& p, const CodeTable& host_table, const LaunchConfig& launch) {
  if (launch.threads > 0 || launch.max_grid > 0 || launch.blocks_per_launch > 0) return false;
  return p.input_index.contiguous && !p.rounding.enabled && (host_table.bits == 8 || host_table.bits == 4) &&
         p.blocksize % 2 == 0;
}

// Whole blocks go by fours (quantize_block_by_fours) where each is a multiple of 128 elements, the
// input's start is aligned for the vector loads and the codes' for the stores of four codes.
template <DType D>
bool by_fours_applies(const QuantizeParams& p, int bits) {
  constexpr std::uintptr_t kLoadBytes = 4 * (D == DType::f32 ? 4 : 2);
  const auto input = reinterpret_cast<std::uintptr_t>(p.input) + static_cast<std::uintptr_t>(p.input_index.offset) * (kLoadBytes / 4);
  const std::uintptr_t store_bytes = bits == 8 ? 4 : 2;
  return p.blocksize % (4 * kWarp) == 0 && input % kLoadBytes == 0 && reinterpret_cast<std::uintptr_t>(p.codes) % store_bytes == 0;
}

// Its dynamic shared memory holds the finer index's entries (at most kNearestBuckets words, within the
// 48 KB a launch may take without opting in).
static_assert(kNearestBuckets * sizeof(std::uint32_t) <= 48 * 1024, "the finer index fits a block's default shared memory");

template <DType D, int Bits>
void launch_warp_quantize_of(int device, const CodeTable* table, const CodeTable& host_table, const QuantizeParams& p,
                             std::int64_t blocks, unsigned int* nonfinite_blocks, cudaStream_t stream) {
  const int threads = kWarp * kWarpsPerBlock;
  const auto shared_bytes = static_cast<std::size_t>(nearest_entry_count(host_table)) * sizeof(std::uint32_t);
  const std::int64_t resident = resident_grid(device, quantize_warp_kernel<D, Bits>, threads, shared_bytes);
  const auto grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min((blocks + kWarpsPerBlock - 1) / kWarpsPerBlock, resident)));
  quantize_warp_kernel<D, Bits><<<grid, threads, shared_bytes, stream>>>(table, p, blocks, by_fours_applies<D>(p, Bits),
                                                                         nonfinite_blocks);
}

template <DType D>
void launch_warp_quantize(int device, const CodeTable* table, const CodeTable& host_table, const QuantizeParams& p,
                          std::int64_t blocks, unsigned int* nonfinite_blocks, cudaStream_t stream) {
  if (host_table.bits == 8) {
    launch_warp_quantize_of<D, 8>(device, table, host_table, p, blocks, nonfinite_blocks, stream);
  } else {
    launch_warp_quantize_of<D, 4>(device, table, host_table, p, blocks, nonfinite_blocks, stream);
  }
}

// The count of non-finite blocks comes back with the launch's one synchronisation (none, and no
// count, unsynchronised).
std::int64_t nonfinite_count(const LaunchConfig& launch, const unsigned int* counter) {
  if (counter == nullptr) return 0;
  std::uint32_t* const count = readback_words();
  check(cudaMemcpyAsync(count, counter, sizeof(*count), cudaMemcpyDeviceToHost, stream_of(launch)), "quantize kernel");
  wait_for(launch, "quantize kernel");
  return *count;
}

}  // namespace

std::int64_t quantize(int device, QuantFormat format, const QuantizeParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const CodeTable* table = device_code_tables(device, {format});
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const CodeTable& host_table = code_table(format);
  // An unsynchronised call counts nothing: the scratch counter is free only for calls that wait.
  unsigned int* counter = nullptr;
  if (launch.synchronize) {
    counter = static_cast<unsigned int*>(scratch(device, sizeof(unsigned int), kCounterSlot));
    check(cudaMemsetAsync(counter, 0, sizeof(unsigned int), stream_of(launch)), "cudaMemset");
  }
  if (warp_quantize_applies(params, host_table, launch)) {
    switch (params.input_dtype) {
      case DType::f16: launch_warp_quantize<DType::f16>(device, table, host_table, params, blocks, counter, stream_of(launch)); break;
      case DType::bf16: launch_warp_quantize<DType::bf16>(device, table, host_table, params, blocks, counter, stream_of(launch)); break;
      default: launch_warp_quantize<DType::f32>(device, table, host_table, params, blocks, counter, stream_of(launch)); break;
    }
    check(cudaGetLastError(), "quantize kernel launch");
    return nonfinite_count(launch, counter);
  }
  const int threads = threads_for(launch, params.blocksize / kUnroll);
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
  for (std::int64_t first = 0; first < blocks; first += per_launch) {
    const std::int64_t last = std::min(blocks, first + per_launch);
    const auto grid = static_cast<unsigned>(grid_for(device, launch, last - first, threads));
    quantize_kernel<<<grid, threads, 0, stream_of(launch)>>>(table, params, first, last, counter);
    check(cudaGetLastError(), "quantize kernel launch");
  }
  return nonfinite_count(launch, counter);
}

namespace {

bool aligned(const void* pointer, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0; }

// Units the units kernel takes: every unit where the blocks divide into them and the codes and
// output are aligned for its loads and stores, and the caller asked for no launch shape of its own
// (those launches take the kernel above, so that P3 compares the two); but the last block where its
// length is not a whole number of units. 0: the kernel above takes everything.
int unit_elements(DType output) { return output == DType::f32 ? 4 : 8; }

std::int64_t contiguous_units(const DequantizeParams& p, const LaunchConfig& launch) {
  if (launch.threads > 0 || launch.max_grid > 0 || launch.blocks_per_launch > 0) return 0;
  if (!p.output_index.contiguous) return 0;
  const int elements = unit_elements(p.output_dtype);
  const std::int64_t word = p.output_dtype == DType::f32 ? 4 : 2;
  const auto* output = static_cast<const char*>(p.output) + p.output_index.offset * word;
  if (p.blocksize % elements != 0 || !aligned(p.codes, elements * p.bits / 8) || !aligned(output, 16)) return 0;
  if (p.numel % elements == 0) return p.numel / elements;
  return (block_count(p.numel, p.blocksize) - 1) * p.blocksize / elements;
}

template <DType D>
void launch_units_dequantize(int device, const CodeTable* table, const DequantizeParams& p, std::int64_t units,
                             cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(
      std::max<std::int64_t>(1, std::min((units + kUnitThreads - 1) / kUnitThreads, device_filling_grid(device, kUnitThreads))));
  int block_shift = 0;  // block sizes are powers of two
  while ((std::int64_t{1} << block_shift) < p.blocksize) ++block_shift;
  if (p.bits == 8) {
    dequantize_units_kernel<D, 8><<<grid, kUnitThreads, 0, stream>>>(table, p, units, block_shift);
  } else {
    dequantize_units_kernel<D, 4><<<grid, kUnitThreads, 0, stream>>>(table, p, units, block_shift);
  }
}

}  // namespace

void dequantize(int device, QuantFormat format, const DequantizeParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const CodeTable* table = device_code_tables(device, {format});
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const std::int64_t units = contiguous_units(params, launch);
  std::int64_t first_block = 0;
  if (units > 0) {
    switch (params.output_dtype) {
      case DType::f16: launch_units_dequantize<DType::f16>(device, table, params, units, stream_of(launch)); break;
      case DType::bf16: launch_units_dequantize<DType::bf16>(device, table, params, units, stream_of(launch)); break;
      default: launch_units_dequantize<DType::f32>(device, table, params, units, stream_of(launch)); break;
    }
    check(cudaGetLastError(), "dequantize kernel launch");
    const int elements = unit_elements(params.output_dtype);
    // The blocks left: none, or the last.
    first_block = units * elements == params.numel ? blocks : units * elements / params.blocksize;
  }
  const int threads = threads_for(launch, params.blocksize / kUnroll);
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
  for (std::int64_t first = first_block; first < blocks; first += per_launch) {
    const std::int64_t last = std::min(blocks, first + per_launch);
    const auto grid = static_cast<unsigned>(grid_for(device, launch, last - first, threads));
    dequantize_kernel<<<grid, threads, 0, stream_of(launch)>>>(table, params, first, last);
    check(cudaGetLastError(), "dequantize kernel launch");
  }
  if (launch.synchronize) wait_for(launch, "dequantize kernel");
}

void convert(int device, const ConvertParams& params, const LaunchConfig& launch) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const int threads = threads_for(launch, 1024);
  std::int64_t grid = std::max<std::int64_t>(1, (params.numel + threads - 1) / threads);
  if (launch.max_grid > 0) grid = std::min(grid, launch.max_grid);
  grid = std::min<std::int64_t>(grid, 1 << 30);
  convert_kernel<<<static_cast<unsigned>(grid), threads, 0, stream_of(launch)>>>(params);
  check(cudaGetLastError(), "convert kernel launch");
  if (launch.synchronize) wait_for(launch, "convert kernel");
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

void* create_stream(int device, bool non_blocking) {
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault), "cudaStreamCreate");
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
