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

#include <memory>
#include <new>

namespace bitparity::cpu {

namespace {
constexpr std::int64_t kElementsPerTask = 1 << 14;  // below this, threads cost more than they save
static_assert(2 * kElementsPerTask <= kElementsForEveryCpuPath, "the layout properties draw launches this large");

// 8-bit codes into a contiguous fp32 output: each element's product from its code value picked by
// byte permutes where the CPU has them (state_values_cpu.hpp), where the body would select from the
// block's table of outputs by gathers (no gather of 16-bit words: f16 and bf16 keep the table).
// The body takes the tail.
BITPARITY_CPU_CLONES void dequantize_block_f32(const CodeTable& table, const DequantizeParams& p, std::int64_t block) {
  if (p.bits == 8 && p.output_index.contiguous && cpu_has_avx512vbmi()) {
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

// Blocks go to the decision on keys where the CPU has it (input_keys_cpu.hpp), which hands back the
// blocks it does not take.
BITPARITY_CPU_CLONES void quantize_block_f32(const CodeTable& table, const QuantizeParams& p, std::int64_t block) {
  if (quantize_block_by_keys(table, p, block)) return;
  quantize_block<DType::f32>(table, p, block, DecideNearestVector{}, HalfRunsF16C{});
}
BITPARITY_CPU_CLONES void quantize_block_f16(const CodeTable& table, const QuantizeParams& p, std::int64_t block) {
  if (quantize_block_by_keys(table, p, block)) return;
  quantize_block<DType::f16>(table, p, block, DecideNearestVector{}, HalfRunsF16C{});
}
BITPARITY_CPU_CLONES void quantize_block_bf16(const CodeTable& table, const QuantizeParams& p, std::int64_t block,
                                              const Bf16KeysByMantissa* keys) {
  if (quantize_block_by_keys(table, p, block, keys)) return;
  quantize_block<DType::bf16>(table, p, block, DecideNearestVector{}, HalfRunsF16C{});
}

template <DType D>
void quantize_block_of(const CodeTable& table, const QuantizeParams& p, std::int64_t block, const Bf16KeysByMantissa* keys) {
  if constexpr (D == DType::f16) {
    quantize_block_f16(table, p, block);
  } else if constexpr (D == DType::bf16) {
    quantize_block_bf16(table, p, block, keys);
  } else {
    quantize_block_f32(table, p, block);
  }
}

// bf16 launches of many blocks long enough for keys build the map's keys over one binade once
// (about 4 us), and their blocks move them instead of computing their own (input_keys_cpu.hpp).
// Without the memory for them, the blocks compute their keys.
std::unique_ptr<Bf16KeysByMantissa> moved_keys_for(const CodeTable& table, const QuantizeParams& p, std::int64_t blocks) {
  if (p.input_dtype != DType::bf16 || !p.input_index.contiguous || p.rounding.enabled || blocks < kBlocksForMovedKeys ||
      p.blocksize < 2 * table.first_step) {
    return nullptr;
  }
  std::unique_ptr<Bf16KeysByMantissa> keys(new (std::nothrow) Bf16KeysByMantissa());
  if (keys == nullptr || !build_bf16_keys_by_mantissa(table, *keys)) return nullptr;
  return keys;
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
  const std::int64_t min_blocks = std::max<std::int64_t>(1, kElementsPerTask / params.blocksize);
  const std::unique_ptr<Bf16KeysByMantissa> moved_keys = moved_keys_for(table, params, blocks);
  detail::split_launches(blocks, launch.blocks_per_launch, [&](std::int64_t first, std::int64_t last) {
    with_float_dtype(params.input_dtype, [&](auto dtype) {
      detail::parallel_for(first, last, launch.threads, min_blocks, [&](std::int64_t block) {
        quantize_block_of<dtype.value>(table, params, block, moved_keys.get());
      });
    });
  });
}

void dequantize(const CodeTable& table, const DequantizeParams& params, const LaunchConfig& launch) {
  const std::int64_t blocks = block_count(params.numel, params.blocksize);
  const std::int64_t min_blocks = std::max<std::int64_t>(1, kElementsPerTask / params.blocksize);
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
  detail::parallel_for(0, chunks, launch.threads, kElementsPerTask / kChunk, [&](std::int64_t chunk) {
    const std::int64_t end = std::min(params.numel, (chunk + 1) * kChunk);
    for (std::int64_t i = chunk * kChunk; i < end; ++i) convert_element(params, i);
  });
}

}  // namespace bitparity::cpu
