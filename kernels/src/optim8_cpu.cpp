// The CPU launcher of the 8-bit blockwise step: one quant block per task, a pass for the new states
// and their absmax, a pass that stores. Blocks of contiguous tensors take optim8_block_contiguous,
// compiled for the baseline ISA, AVX2 and AVX-512 (picked at load time); the rest the element loop.
// Compiled with -fno-trapping-math, as quantize_cpu.cpp is, so that the loops vectorize.
#include <algorithm>
#include <vector>

#include "bitparity/kernels/optim8_body.hpp"
#include "bitparity/kernels/optim8_launch.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "cpu_clones.hpp"
#include "half_runs_cpu.hpp"
#include "input_keys_cpu.hpp"
#include "nearest_vector_cpu.hpp"
#include "parallel_for.hpp"
#include "state_values_cpu.hpp"

namespace bitparity::cpu {

namespace {

constexpr std::int64_t kElementsPerPart = 16384;  // the smallest part a thread claims: threads cost more below
static_assert(2 * kElementsPerPart <= kElementsForEveryCpuPath, "the layout properties draw launches this large");

template <DType D>
bool contiguous_block_of_dtype(const Optimizer8Params& p, const CodeTable* tables, std::int64_t block) {
  bool flagged = false;
  with_optimizer_kind(p.base.kind, [&](auto kind) {
    flagged = optim8_block_contiguous<decltype(kind)::value, D>(p, tables, block, DecideNearestVector{}, HalfRunsF16C{},
                                                                StatesOfCodesVector{}, RequantizeStatesByKeys{});
  });
  return flagged;
}

BITPARITY_CPU_CLONES bool contiguous_block_f32(const Optimizer8Params& p, const CodeTable* tables, std::int64_t block) {
  return contiguous_block_of_dtype<DType::f32>(p, tables, block);
}
BITPARITY_CPU_CLONES bool contiguous_block_f16(const Optimizer8Params& p, const CodeTable* tables, std::int64_t block) {
  return contiguous_block_of_dtype<DType::f16>(p, tables, block);
}
BITPARITY_CPU_CLONES bool contiguous_block_bf16(const Optimizer8Params& p, const CodeTable* tables, std::int64_t block) {
  return contiguous_block_of_dtype<DType::bf16>(p, tables, block);
}

// The cache lines of a later block's parameters, gradients and state codes, requested while this
// block computes: the step spends most of its time on arithmetic between the loads of a block, and
// the hardware prefetcher alone left the first loads of each block waiting on memory.
constexpr std::int64_t kBlocksAhead = 2;
constexpr std::int64_t kLine = 64;

void prefetch_lines(const void* base, std::int64_t bytes) {
  const auto* const first = static_cast<const char*>(base);
  for (std::int64_t at = 0; at < bytes; at += kLine) __builtin_prefetch(first + at);
}

void prefetch_block(const Optimizer8Params& p, std::int64_t block) {
  const std::int64_t begin = block_begin(block, p.blocksize);
  const std::int64_t count = block_end(block, p.blocksize, p.base.numel) - begin;
  if (count <= 0) return;
  const std::int64_t word = dtype_storage_bytes(p.base.param_dtype, 1);
  prefetch_lines(static_cast<const char*>(p.base.param) + (p.base.param_index.offset + begin) * word, count * word);
  prefetch_lines(static_cast<const char*>(p.base.grad) + (p.base.grad_index.offset + begin) * word, count * word);
  for (int k = 0; k < state_count(p.base.kind); ++k) prefetch_lines(p.codes[k] + begin, count);
}

bool contiguous_block(const Optimizer8Params& p, const CodeTable* tables, std::int64_t block) {
  switch (p.base.param_dtype) {
    case DType::f16: return contiguous_block_f16(p, tables, block);
    case DType::bf16: return contiguous_block_bf16(p, tables, block);
    default: return contiguous_block_f32(p, tables, block);
  }
}
}  // namespace

void optimizer8_blocks(const Optimizer8Params& p, const LaunchConfig& launch, std::int64_t& nonfinite_blocks) {
  const CodeTable* const tables = code_tables_in_a_row({p.state_format[0], p.state_format[1], p.state_format[2]});
  const std::int64_t blocks = block_count(p.base.numel, p.blocksize);
  const bool contiguous = p.base.param_index.contiguous && p.base.grad_index.contiguous &&
                          p.base.param_dtype == p.base.grad_dtype;
  std::vector<std::uint8_t> flagged(static_cast<std::size_t>(blocks), 0);
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch : blocks;
  detail::split_launches(blocks, per_launch, [&](std::int64_t first, std::int64_t last) {
    detail::parallel_for(first, last, launch.threads, std::max<std::int64_t>(1, kElementsPerPart / p.blocksize), [&](std::int64_t b) {
      if (contiguous) {
        if (b + kBlocksAhead < last) prefetch_block(p, b + kBlocksAhead);
        flagged[b] = contiguous_block(p, tables, b) ? 1 : 0;
        return;
      }
      with_optimizer_kind(p.base.kind, [&](auto kind) {
        constexpr OptimizerKind K = decltype(kind)::value;
        constexpr int states = state_count(K);
        const std::int64_t begin = block_begin(b, p.blocksize), end = block_end(b, p.blocksize, p.base.numel);
        float old_absmax[3] = {0, 0, 0};
        for (int k = 0; k < states; ++k) old_absmax[k] = p.absmax[k][b];
        BlockScan scans[3];
        // Pass 1's element values, kept for pass 2 (recomputing them gives the same bits).
        thread_local std::vector<ElementValues> computed;
        computed.resize(static_cast<std::size_t>(end - begin));
        for (std::int64_t i = begin; i < end; ++i) {
          const ElementValues e = optim8_element<K>(p, tables, old_absmax, i);
          for (int k = 0; k < states; ++k) scan_element(scans[k], e.s[k]);
          computed[static_cast<std::size_t>(i - begin)] = e;
        }
        float new_absmax[3] = {0, 0, 0};
        bool nonfinite[3] = {false, false, false};
        for (int k = 0; k < states; ++k) {
          nonfinite[k] = scans[k].nonfinite;
          new_absmax[k] = new_block_absmax(scans[k]);
          flagged[b] = flagged[b] || nonfinite[k];
        }
        for (std::int64_t i = begin; i < end; ++i) {
          optim8_store<K>(p, tables, new_absmax, nonfinite, i, computed[static_cast<std::size_t>(i - begin)]);
        }
        for (int k = 0; k < states; ++k) p.absmax[k][b] = new_absmax[k];
      });
    });
  });
  for (auto f : flagged) nonfinite_blocks += f;
}

}  // namespace bitparity::cpu
