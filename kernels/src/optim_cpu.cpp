// The CPU launcher of the optimizers: the kernel body over worker threads, chunks of elements.
#include <algorithm>
#include <atomic>
#include <mutex>

#include "bitparity/kernels/optim_launch.hpp"
#include "bitparity/kernels/square_sum_bins.hpp"
#include "cpu_clones.hpp"
#include "half_runs_cpu.hpp"
#include "parallel_for.hpp"

namespace bitparity::cpu {

namespace {
constexpr std::int64_t kChunk = 4096;
constexpr std::int64_t kChunksPerPart = 4;  // at least this many in each part a thread claims
static_assert(2 * kChunksPerPart * kChunk <= kElementsForEveryCpuPath, "the layout properties draw launches this large");

template <class Body>
void over_chunks(std::int64_t first, std::int64_t last, const LaunchConfig& launch, Body body) {
  const std::int64_t chunks = (last - first + kChunk - 1) / kChunk;
  detail::parallel_for(0, chunks, launch.threads, kChunksPerPart, [&](std::int64_t chunk) {
    const std::int64_t begin = first + chunk * kChunk;
    body(begin, std::min(last, begin + kChunk));
  });
}

// Every tensor contiguous, parameter and gradient of one dtype: the same element body, loads and
// stores over restrict pointers, a loop the compiler can vectorize (IEEE vector division and sqrt
// give the scalar bits; nothing contracts). The stores are store_element's: a NaN is canonical.
bool contiguous_one_dtype(const OptimizerParams& p) {
  if (p.param_dtype != p.grad_dtype) return false;
  if (!p.param_index.contiguous || !p.grad_index.contiguous) return false;
  for (int k = 0; k < state_count(p.kind); ++k) {
    if (!p.state_index[k].contiguous) return false;
  }
  return true;
}

// Element i of contiguous runs: fp32 parameter and gradient values, the optimizer's states.
template <OptimizerKind K>
ElementValues element_at(const float* param, const float* grad, const float* s0, const float* s1, const float* s2,
                         std::int64_t i) {
  constexpr int states = state_count(K);
  ElementValues e;
  e.p = param[i];
  e.g = grad[i];
  if constexpr (states > 0) e.s[0] = s0[i];
  if constexpr (states > 1) e.s[1] = s1[i];
  if constexpr (states > 2) e.s[2] = s2[i];
  return e;
}

// Stores element i's states, a NaN as the canonical NaN (store_element's values).
template <OptimizerKind K>
void store_states_at(const ElementValues& e, float* s0, float* s1, float* s2, std::int64_t i) {
  constexpr int states = state_count(K);
  if constexpr (states > 0) s0[i] = canonical_state(e.s[0]);
  if constexpr (states > 1) s1[i] = canonical_state(e.s[1]);
  if constexpr (states > 2) s2[i] = canonical_state(e.s[2]);
}

// The element loop over fp32 parameter and gradient values at `param` and `grad`, states in place.
template <OptimizerKind K>
void contiguous_elements(const StepScalars& scalars, float* __restrict param, const float* __restrict grad,
                         float* __restrict s0, float* __restrict s1, float* __restrict s2, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    ElementValues e = element_at<K>(param, grad, s0, s1, s2, i);
    optimizer_element_of<K>(scalars, e);
    param[i] = canonical_state(e.p);  // store_computed_as<f32>'s value
    store_states_at<K>(e, s0, s1, s2, i);
  }
}

// fp32 parameters: the element loop in place, storing the canonical NaN. f16 and bf16: chunks
// widened into local arrays, stepped, and narrowed back (f16 by F16C where the CPU has it). The widening, the step and the narrowing
// each vectorize alone; GCC 12 gives up on some optimizers' loops with all three in one (SGD).
template <OptimizerKind K, DType D>
void contiguous_range(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  constexpr int states = state_count(K);
  float* const s0 = states > 0 ? p.state[0] + p.state_index[0].offset : nullptr;
  float* const s1 = states > 1 ? p.state[1] + p.state_index[1].offset : nullptr;
  float* const s2 = states > 2 ? p.state[2] + p.state_index[2].offset : nullptr;
  const StepScalars scalars = p.s;
  if constexpr (D == DType::f32) {
    contiguous_elements<K>(scalars, static_cast<float*>(p.param) + p.param_index.offset + begin,
                           static_cast<const float*>(p.grad) + p.grad_index.offset + begin,
                           states > 0 ? s0 + begin : nullptr, states > 1 ? s1 + begin : nullptr,
                           states > 2 ? s2 + begin : nullptr, end - begin);
    return;
  }
  constexpr std::int64_t kWidened = 512;
  float param_values[kWidened], grad_values[kWidened];
  for (std::int64_t first = begin; first < end; first += kWidened) {
    const std::int64_t count = std::min(kWidened, end - first);
    void* __restrict param = p.param;
    const void* __restrict grad = p.grad;
    const std::int64_t param_at = p.param_index.offset + first, grad_at = p.grad_index.offset + first;
    widen_run<D>(param, param_at, param_values, count, HalfRunsF16C{});
    widen_run<D>(grad, grad_at, grad_values, count, HalfRunsF16C{});
    contiguous_elements<K>(scalars, param_values, grad_values, states > 0 ? s0 + first : nullptr,
                           states > 1 ? s1 + first : nullptr, states > 2 ? s2 + first : nullptr, count);
    narrow_run<D>(param_values, param, param_at, count, HalfRunsF16C{});
  }
}

template <DType D>
void contiguous_range_of_dtype(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  with_optimizer_kind(p.kind, [&](auto kind) { contiguous_range<decltype(kind)::value, D>(p, begin, end); });
}

BITPARITY_CPU_CLONES void contiguous_range_f32(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  contiguous_range_of_dtype<DType::f32>(p, begin, end);
}
BITPARITY_CPU_CLONES void contiguous_range_f16(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  contiguous_range_of_dtype<DType::f16>(p, begin, end);
}
BITPARITY_CPU_CLONES void contiguous_range_bf16(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  contiguous_range_of_dtype<DType::bf16>(p, begin, end);
}

void contiguous_step(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  switch (p.param_dtype) {
    case DType::f16: contiguous_range_f16(p, begin, end); break;
    case DType::bf16: contiguous_range_bf16(p, begin, end); break;
    default: contiguous_range_f32(p, begin, end); break;
  }
}

// The norm pass terms of `count` elements, as norm_terms_element_of computes them, in a loop the
// compiler can vectorize; the states stored where that pass stores them (LAMB's moments).
template <OptimizerKind K>
void contiguous_norm_terms(const StepScalars& scalars, const float* __restrict param, const float* __restrict grad,
                           float* __restrict s0, float* __restrict s1, float* __restrict s2,
                           float* __restrict param_terms, float* __restrict direction_terms, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    ElementValues e = element_at<K>(param, grad, s0, s1, s2, i);
    const NormTerms terms = norm_terms_of<K>(scalars, e);
    param_terms[i] = terms.param;
    direction_terms[i] = terms.direction;
    if constexpr (norm_pass_writes_states<K>()) store_states_at<K>(e, s0, s1, s2, i);
  }
}

// The norm pass of a contiguous range (parameter and gradient of one dtype): runs of terms, their
// squares into bins, the bins into `sums` (the same exact sums as add_square of each term).
static_assert(kChunk <= SquareSumBins::kMaxAddsBetweenFlushes, "a chunk's squares must fit the bins");
template <OptimizerKind K, DType D>
void contiguous_norm_range(const OptimizerParams& p, std::int64_t begin, std::int64_t end, NormSums& sums) {
  constexpr int states = state_count(K);
  float* const s0 = states > 0 ? p.state[0] + p.state_index[0].offset : nullptr;
  float* const s1 = states > 1 ? p.state[1] + p.state_index[1].offset : nullptr;
  float* const s2 = states > 2 ? p.state[2] + p.state_index[2].offset : nullptr;
  const StepScalars scalars = p.s;
  constexpr std::int64_t kRun = 512;
  float param_values[kRun], grad_values[kRun], param_terms[kRun], direction_terms[kRun];
  SquareSumBins param_bins, direction_bins;
  for (std::int64_t first = begin; first < end; first += kRun) {
    const std::int64_t count = std::min(kRun, end - first);
    const std::int64_t param_at = p.param_index.offset + first, grad_at = p.grad_index.offset + first;
    const float* param = param_values;
    const float* grad = grad_values;
    if constexpr (D == DType::f32) {
      param = static_cast<const float*>(p.param) + param_at;
      grad = static_cast<const float*>(p.grad) + grad_at;
    } else {
      widen_run<D>(p.param, param_at, param_values, count, HalfRunsF16C{});
      widen_run<D>(p.grad, grad_at, grad_values, count, HalfRunsF16C{});
    }
    contiguous_norm_terms<K>(scalars, param, grad, states > 0 ? s0 + first : nullptr, states > 1 ? s1 + first : nullptr,
                             states > 2 ? s2 + first : nullptr, param_terms, direction_terms, count);
    for (std::int64_t j = 0; j < count; ++j) {
      param_bins.add(param_terms[j]);
      direction_bins.add(direction_terms[j]);
    }
  }
  param_bins.flush_into(sums.param);
  direction_bins.flush_into(sums.direction);
}

template <DType D>
void contiguous_norm_of_dtype(const OptimizerParams& p, std::int64_t begin, std::int64_t end, NormSums& sums) {
  with_optimizer_kind(p.kind, [&](auto kind) { contiguous_norm_range<decltype(kind)::value, D>(p, begin, end, sums); });
}

BITPARITY_CPU_CLONES void contiguous_norm_f32(const OptimizerParams& p, std::int64_t begin, std::int64_t end, NormSums& sums) {
  contiguous_norm_of_dtype<DType::f32>(p, begin, end, sums);
}
BITPARITY_CPU_CLONES void contiguous_norm_f16(const OptimizerParams& p, std::int64_t begin, std::int64_t end, NormSums& sums) {
  contiguous_norm_of_dtype<DType::f16>(p, begin, end, sums);
}
BITPARITY_CPU_CLONES void contiguous_norm_bf16(const OptimizerParams& p, std::int64_t begin, std::int64_t end, NormSums& sums) {
  contiguous_norm_of_dtype<DType::bf16>(p, begin, end, sums);
}

void contiguous_norm(const OptimizerParams& p, std::int64_t begin, std::int64_t end, NormSums& sums) {
  switch (p.param_dtype) {
    case DType::f16: contiguous_norm_f16(p, begin, end, sums); break;
    case DType::bf16: contiguous_norm_bf16(p, begin, end, sums); break;
    default: contiguous_norm_f32(p, begin, end, sums); break;
  }
}

BITPARITY_CPU_CLONES bool any_gradient_nonfinite_f32(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  return any_gradient_nonfinite_contiguous<DType::f32>(p, begin, end);
}
BITPARITY_CPU_CLONES bool any_gradient_nonfinite_f16(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  return any_gradient_nonfinite_contiguous<DType::f16>(p, begin, end);
}
BITPARITY_CPU_CLONES bool any_gradient_nonfinite_bf16(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  return any_gradient_nonfinite_contiguous<DType::bf16>(p, begin, end);
}

// Elements [begin, end): the vectorized test on a contiguous gradient, else element by element.
bool any_gradient_nonfinite(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  if (p.grad_index.contiguous) {
    switch (p.grad_dtype) {
      case DType::f16: return any_gradient_nonfinite_f16(p, begin, end);
      case DType::bf16: return any_gradient_nonfinite_bf16(p, begin, end);
      default: return any_gradient_nonfinite_f32(p, begin, end);
    }
  }
  for (std::int64_t i = begin; i < end; ++i) {
    if (gradient_nonfinite(p, i)) return true;
  }
  return false;
}

std::int64_t per_launch(const OptimizerParams& params, const LaunchConfig& launch) {
  return launch.blocks_per_launch > 0 ? launch.blocks_per_launch * kOptimizerElementsPerLaunchBlock : params.numel;
}
}  // namespace

bool gradient_has_nonfinite(const OptimizerParams& params, const LaunchConfig& launch) {
  std::atomic<bool> nonfinite{false};
  over_chunks(0, params.numel, launch, [&](std::int64_t begin, std::int64_t end) {
    if (nonfinite.load(std::memory_order_relaxed)) return;  // found already: the rest cannot change it
    if (any_gradient_nonfinite(params, begin, end)) nonfinite.store(true, std::memory_order_relaxed);
  });
  return nonfinite.load();
}

NormSums norm_pass(const OptimizerParams& params, const LaunchConfig& launch) {
  NormSums total;
  std::mutex merge;
  const bool fast = contiguous_one_dtype(params);
  detail::split_launches(params.numel, per_launch(params, launch), [&](std::int64_t first, std::int64_t last) {
    over_chunks(first, last, launch, [&](std::int64_t begin, std::int64_t end) {
      NormSums partial;  // exact, so merging the chunks in any order gives the same sums
      if (fast) {
        contiguous_norm(params, begin, end, partial);
      } else {
        with_optimizer_kind(params.kind, [&](auto kind) {
          for (std::int64_t i = begin; i < end; ++i) {
            norm_terms_element_of<decltype(kind)::value>(params, i, partial.param, partial.direction);
          }
        });
      }
      const std::lock_guard lock(merge);
      total.param.merge(partial.param);
      total.direction.merge(partial.direction);
    });
  });
  return total;
}

void apply_pass(const OptimizerParams& params, const LaunchConfig& launch) {
  const bool fast = contiguous_one_dtype(params);
  detail::split_launches(params.numel, per_launch(params, launch), [&](std::int64_t first, std::int64_t last) {
    over_chunks(first, last, launch, [&](std::int64_t begin, std::int64_t end) {
      if (fast) {
        contiguous_step(params, begin, end);
        return;
      }
      with_optimizer_kind(params.kind, [&](auto kind) {
        for (std::int64_t i = begin; i < end; ++i) optimizer_step_element_of<decltype(kind)::value>(params, i);
      });
    });
  });
}

}  // namespace bitparity::cpu
