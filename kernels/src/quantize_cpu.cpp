// The CPU launcher: the kernel body of quant_body.hpp over worker threads, one quant block per task.
#include "bitparity/kernels/quantize.hpp"
#include "code_outputs_cpu.hpp"
#include "code_select_cpu.hpp"
#include "cpu_clones.hpp"
#include "half_runs_cpu.hpp"
#include "input_keys_cpu.hpp"
#include "nearest_vector_cpu.hpp"
#include "nibble_select_cpu.hpp"
#include "parallel_for.hpp"
#include "state_values_cpu.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <new>

namespace bitparity::cpu {

namespace {
constexpr std::int64_t kElementsPerPart = 1 << 14;  // the smallest part a thread claims: threads cost more below
static_assert(2 * kElementsPerPart <= kElementsForEveryCpuPath, "the layout properties draw launches this large");

// 8-bit codes into a contiguous fp32 output: each element's product from its code value picked by
// byte permutes where the CPU has them (state_values_cpu.hpp), where the body would select from the
// block's table of outputs by gathers (no gather of 16-bit words: f16 and bf16 keep the table).
// The body takes the tail.
BITPARITY_CPU_CLONES void dequantize_block_f32(const CodeTable& table, const DequantizeParams& p, std::int64_t block) {
  if (p.bits == 8 && p.output_index.contiguous && cpu_has_avx512vbmi2()) {
    const std::int64_t begin = block_begin(block, p.blocksize);
    const std::int64_t end = block_end(block, p.blocksize, p.numel);
    const float absmax = p.absmax[block];
    float* const out = static_cast<float*>(p.output) + p.output_index.offset;
    const std::int64_t done = dequantized_f32_of_codes_avx512(table, p.codes + begin, absmax, out + begin, end - begin);
    dequantize_contiguous<DType::f32>(table, p.codes, p.output, p.output_index.offset, absmax, begin + done, end,
                                      HalfRunsF16C{}, SelectByCodeVector{}, OutputsOfCodesVector{});
    return;
  }
  dequantize_block<DType::f32>(table, p, block, SelectByNibblesVector{}, HalfRunsF16C{}, SelectByCodeVector{},
                                OutputsOfCodesVector{});
}
BITPARITY_CPU_CLONES void dequantize_block_f16(const CodeTable& table, const DequantizeParams& p, std::int64_t block) {
  dequantize_block<DType::f16>(table, p, block, SelectByNibblesVector{}, HalfRunsF16C{}, SelectByCodeVector{},
                                OutputsOfCodesVector{});
}
BITPARITY_CPU_CLONES void dequantize_block_bf16(const CodeTable& table, const DequantizeParams& p, std::int64_t block) {
  dequantize_block<DType::bf16>(table, p, block, SelectByNibblesVector{}, HalfRunsF16C{}, SelectByCodeVector{},
                                OutputsOfCodesVector{});
}

// The body's blocks: those the decision on keys (input_keys_cpu.hpp) does not take.
BITPARITY_CPU_CLONES void quantize_block_f32(const CodeTable& table, const QuantizeParams& p, std::int64_t block) {
  quantize_block<DType::f32>(table, p, block, DecideNearestVector{}, HalfRunsF16C{});
}
BITPARITY_CPU_CLONES void quantize_block_f16(const CodeTable& table, const QuantizeParams& p, std::int64_t block) {
  quantize_block<DType::f16>(table, p, block, DecideNearestVector{}, HalfRunsF16C{});
}
BITPARITY_CPU_CLONES void quantize_block_bf16(const CodeTable& table, const QuantizeParams& p, std::int64_t block) {
  quantize_block<DType::bf16>(table, p, block, DecideNearestVector{}, HalfRunsF16C{});
}

template <DType D>
void quantize_block_of(const CodeTable& table, const QuantizeParams& p, std::int64_t block) {
  if constexpr (D == DType::f16) {
    quantize_block_f16(table, p, block);
  } else if constexpr (D == DType::bf16) {
    quantize_block_bf16(table, p, block);
  } else {
    quantize_block_f32(table, p, block);
  }
}

// Blocks [first, last): runs of them by keys where the CPU and the layout allow, the rest by the body.
template <DType D>
void quantize_blocks(const CodeTable& table, const QuantizeParams& p, std::int64_t first, std::int64_t last,
                     const Bf16KeysByMantissa* keys) {
  for (std::int64_t block = first; block < last;) {
    block = quantize_blocks_by_keys(table, p, block, last, keys);
    if (block < last) quantize_block_of<D>(table, p, block++);
  }
}

// bf16 launches of many blocks long enough for keys take the map's keys over one binade
// (input_keys_cpu.hpp), built on the map's first such launch and kept for the process: they depend on
// the map alone, and building them (about 50 us, plus 64 KB to allocate) cost more than a launch of a
// few hundred blocks saves. Only the registry's tables, whose addresses last for the process, are
// kept; another table's launch, or one without the memory, computes its blocks' keys.
bool registered_table(const CodeTable& table) {
  for (const QuantFormatInfo& info : quant_formats()) {
    if (&code_table(info.format) == &table) return true;
  }
  return false;
}

const Bf16KeysByMantissa* moved_keys_for(const CodeTable& table, const QuantizeParams& p, std::int64_t blocks) {
  if (p.input_dtype != DType::bf16 || !p.input_index.contiguous || p.rounding.enabled || blocks < kBlocksForMovedKeys ||
      p.blocksize < 2 * table.first_step || !registered_table(table)) {
    return nullptr;
  }
  static std::mutex mutex;
  static std::map<const CodeTable*, std::unique_ptr<Bf16KeysByMantissa>> built;  // null: the map's keys do not move
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = built.find(&table);
  if (found != built.end()) return found->second.get();
  std::unique_ptr<Bf16KeysByMantissa> keys(new (std::nothrow) Bf16KeysByMantissa());
  if (keys == nullptr) return nullptr;  // not kept: a later launch tries again
  if (!build_bf16_keys_by_mantissa(table, *keys)) keys.reset();
  return built.emplace(&table, std::move(keys)).first->second.get();
}

template <DType D>
void dequantize_block_of(const CodeTable& table, const DequantizeParams& p, std::int64_t block) {
  if constexpr (D == DType::f16) {
    dequantize_block_f16(table, p, block);
  } else if constexpr (D == DType::bf16) {
    dequantize_block_bf16(table, p, block);
  } else {
    dequantize_block_f32(table, p, block);
  }
}
}  // namespace

void quantize(const CodeTable& table, const QuantizeParams& params, const LaunchConfig& launch) {
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const std::int64_t min_blocks = std::max<std::int64_t>(1, kElementsPerPart / params.blocksize);
  const Bf16KeysByMantissa* const moved_keys = moved_keys_for(table, params, blocks);
  detail::split_launches(blocks, launch.blocks_per_launch, [&](std::int64_t first, std::int64_t last) {
    with_float_dtype(params.input_dtype, [&](auto dtype) {
      detail::parallel_for_parts(first, last, launch.threads, min_blocks, [&](std::int64_t lo, std::int64_t hi) {
        quantize_blocks<dtype.value>(table, params, lo, hi, moved_keys);
      });
    });
  });
}

void dequantize(const CodeTable& table, const DequantizeParams& params, const LaunchConfig& launch) {
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const std::int64_t min_blocks = std::max<std::int64_t>(1, kElementsPerPart / params.blocksize);
  detail::split_launches(blocks, launch.blocks_per_launch, [&](std::int64_t first, std::int64_t last) {
    with_float_dtype(params.output_dtype, [&](auto dtype) {
      detail::parallel_for(first, last, launch.threads, min_blocks,
                           [&](std::int64_t block) { dequantize_block_of<dtype.value>(table, params, block); });
    });
  });
}

void convert(const ConvertParams& params, const LaunchConfig& launch) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t chunks = (params.numel + kChunk - 1) / kChunk;
  detail::parallel_for(0, chunks, launch.threads, kElementsPerPart / kChunk, [&](std::int64_t chunk) {
    const std::int64_t end = std::min(params.numel, (chunk + 1) * kChunk);
    for (std::int64_t i = chunk * kChunk; i < end; ++i) convert_element(params, i);
  });
}

}  // namespace bitparity::cpu
