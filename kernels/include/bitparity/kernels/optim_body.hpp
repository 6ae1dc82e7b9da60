#pragma once
// The 32-bit optimizer step of one element, written once for host and device: load, the
// descriptor's element body (optimizers/), store; and the norm pass terms. Every operation is one
// fp32 operation in the order of ARITHMETIC.md; no fma, no contraction.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "bitparity/kernels/element_access.hpp"
#include "bitparity/kernels/exact_sum.hpp"
#include "bitparity/kernels/optimizer_element_ops.hpp"
#include "bitparity/kernels/optimizer_list.hpp"
#include "bitparity/kernels/optimizer_types.hpp"
#include "bitparity/kernels/strided_index.hpp"

namespace bitparity {

struct OptimizerParams {
  OptimizerKind kind = OptimizerKind::adam;
  StepScalars s;
  void* param = nullptr;
  DType param_dtype = DType::f32;
  StridedIndex param_index;
  const void* grad = nullptr;
  DType grad_dtype = DType::f32;
  StridedIndex grad_index;
  float* state[3] = {nullptr, nullptr, nullptr};
  StridedIndex state_index[3];
  std::int64_t numel = 0;
};

// The element body of an optimizer known at compile time (for LAMB/LARS: the second pass).
template <OptimizerKind K>
BP_HD void optimizer_element_of(const StepScalars& s, ElementValues& e) {
  Descriptor<K>::element(s, e);
}

template <OptimizerKind K>
inline constexpr int states_of = static_cast<int>(sizeof(Descriptor<K>::states) / sizeof(Descriptor<K>::states[0]));

BP_HD constexpr int state_count(OptimizerKind kind) {
  int count = 0;
#define BITPARITY_STATES(id, D) \
  if (kind == OptimizerKind::id) count = states_of<OptimizerKind::id>;
  BITPARITY_OPTIMIZERS(BITPARITY_STATES)
#undef BITPARITY_STATES
  return count;
}

BP_HD constexpr bool norm_based_kind(OptimizerKind kind) {
  bool result = false;
#define BITPARITY_NORM_BASED(id, D) \
  if (kind == OptimizerKind::id) result = D::norm_based;
  BITPARITY_OPTIMIZERS(BITPARITY_NORM_BASED)
#undef BITPARITY_NORM_BASED
  return result;
}

// The norm pass terms of an element: LAMB/LARS their descriptor's (LAMB also updates its moments
// in e); the other optimizers (max_unorm) the parameter and the unclipped update of a trial step
// whose results are discarded.
template <OptimizerKind K>
BP_HD NormTerms norm_terms_of(const StepScalars& s, ElementValues& e) {
  if constexpr (Descriptor<K>::norm_based) {
    return Descriptor<K>::norm_terms(s, e);
  } else {
    ElementValues trial = e;
    StepScalars unclipped = s;
    unclipped.clip_update = false;
    optimizer_element_of<K>(unclipped, trial);
    return {e.p, trial.update};
  }
}

BP_HD void optimizer_element(OptimizerKind kind, const StepScalars& s, ElementValues& e) {
  with_optimizer_kind(kind, [&](auto k) { optimizer_element_of<decltype(k)::value>(s, e); });
}

BP_HD ElementValues load_element(const OptimizerParams& p, std::int64_t i, int states) {
  ElementValues e;
  e.p = load_as_float(p.param, p.param_dtype, p.param_index.storage(i));
  e.g = load_as_float(p.grad, p.grad_dtype, p.grad_index.storage(i));
  for (int k = 0; k < states; ++k) e.s[k] = p.state[k][p.state_index[k].storage(i)];
  return e;
}

BP_HD ElementValues load_element(const OptimizerParams& p, std::int64_t i) {
  return load_element(p, i, state_count(p.kind));
}

BP_HD void store_element(const OptimizerParams& p, std::int64_t i, const ElementValues& e, int states) {
  store_computed_float(p.param, p.param_dtype, p.param_index.storage(i), e.p);
  for (int k = 0; k < states; ++k) p.state[k][p.state_index[k].storage(i)] = canonical_state(e.s[k]);
}

BP_HD void store_element(const OptimizerParams& p, std::int64_t i, const ElementValues& e) {
  store_element(p, i, e, state_count(p.kind));
}

// Whether the norm pass stores the states it computes (LAMB's moments, which the direction needs).
template <OptimizerKind K>
constexpr bool norm_pass_writes_states() {
  if constexpr (Descriptor<K>::norm_based) return Descriptor<K>::norm_pass_writes_states;
  return false;
}

// The first pass of element i of LAMB/LARS: accumulates the squares (LAMB stores its moments).
template <OptimizerKind K>
BP_HD void norm_terms_element_of(const OptimizerParams& p, std::int64_t i, ExactSquareSum& param_sum,
                                 ExactSquareSum& direction_sum) {
  constexpr int states = state_count(K);
  ElementValues e = load_element(p, i, states);
  const NormTerms terms = norm_terms_of<K>(p.s, e);
  param_sum.add_square(terms.param);
  direction_sum.add_square(terms.direction);
  if constexpr (norm_pass_writes_states<K>()) {
    for (int k = 0; k < states; ++k) p.state[k][p.state_index[k].storage(i)] = canonical_state(e.s[k]);
  }
}

// The whole step of element i (the launchers' unit of work), for an optimizer known at compile time.
template <OptimizerKind K>
BP_HD void optimizer_step_element_of(const OptimizerParams& p, std::int64_t i) {
  constexpr int states = state_count(K);
  ElementValues e = load_element(p, i, states);
  optimizer_element_of<K>(p.s, e);
  store_element(p, i, e, states);
}

// True when the gradient element is NaN or infinite (checked before any element is changed).
BP_HD bool nonfinite_gradient_value(float g) { return !(fabsf(g) <= 3.402823466e38f); }

// Whether a gradient element packed in `words` is non-finite, as gradient_nonfinite tests it: the
// little-endian 32-bit words of a contiguous run, one fp32 element each, or two 16-bit elements
// (the first in the low half). The CUDA scan's 16-byte loads.
BP_HD bool packed_gradient_nonfinite(const std::uint32_t* words, int count, DType dtype) {
  bool any = false;
  for (int j = 0; j < count; ++j) {
    if (dtype == DType::f32) {
      any |= nonfinite_gradient_value(float_from_bits(words[j]));
    } else {
      const std::uint16_t halves[2] = {static_cast<std::uint16_t>(words[j]), static_cast<std::uint16_t>(words[j] >> 16)};
      for (int k = 0; k < 2; ++k) {
        any |= nonfinite_gradient_value(dtype == DType::f16 ? load_as<DType::f16>(halves, k) : load_as<DType::bf16>(halves, k));
      }
    }
  }
  return any;
}

BP_HD bool gradient_nonfinite(const OptimizerParams& p, std::int64_t i) {
  return nonfinite_gradient_value(load_as_float(p.grad, p.grad_dtype, p.grad_index.storage(i)));
}

// Whether gradient_nonfinite holds for any of elements [begin, end) of a contiguous gradient of
// dtype D: the same test on bit patterns (a magnitude at or above infinity's bits is NaN or
// infinity), or-ed without an early exit, so that the loop vectorizes. 16-bit gradients are tested
// on their own patterns, with no conversion: widening keeps a value's class.
template <DType D>
BP_HD bool any_gradient_nonfinite_contiguous(const OptimizerParams& p, std::int64_t begin, std::int64_t end) {
  const std::int64_t at = p.grad_index.offset;
  std::uint32_t nonfinite = 0;
  if constexpr (D == DType::f16 || D == DType::bf16) {
    const std::uint16_t* __restrict grad = static_cast<const std::uint16_t*>(p.grad) + at;
    constexpr std::uint16_t kInfinity = D == DType::f16 ? 0x7C00u : 0x7F80u;
    for (std::int64_t i = begin; i < end; ++i) nonfinite |= (grad[i] & 0x7FFFu) >= kInfinity ? 1u : 0u;
  } else {
    const void* __restrict grad = p.grad;
    for (std::int64_t i = begin; i < end; ++i) {
      nonfinite |= (float_bits(load_as<D>(grad, at + i)) & 0x7FFFFFFFu) >= 0x7F800000u ? 1u : 0u;
    }
  }
  return nonfinite != 0;
}

}  // namespace bitparity
