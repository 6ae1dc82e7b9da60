#pragma once
// The 8-bit blockwise optimizer step, written once for host and device: for every element of a
// block, dequantize the states (fp32 rounding of code value * old absmax), run the 32-bit element
// body, then requantize the new states with the new block absmax (their exact maximum) to the
// nearest code. The parameter update uses the fp32 new states, never the requantized ones.
#include <cstdint>

#include "bitparity/kernels/optim_body.hpp"
#include "bitparity/kernels/quant_body.hpp"

namespace bitparity {

struct Optimizer8Params {
  OptimizerParams base;                 // param, grad, scalars; base.state unused
  std::uint8_t* codes[3] = {nullptr, nullptr, nullptr};
  float* absmax[3] = {nullptr, nullptr, nullptr};
  // The map of each state; the launchers pass their tables in this order (tables[k] for state k).
  QuantFormat state_format[3] = {QuantFormat::dynamic8_signed, QuantFormat::dynamic8_signed, QuantFormat::dynamic8_signed};
  std::int64_t blocksize = 256;
};

// fl32(code value * absmax): one fp32 multiply is that rounding of the exact product (which a
// double holds exactly, so rounding it from double gives the same bits).
BP_HD float dequantize_state(const float* code_values, std::uint8_t code, float absmax) {
  return code_values[code] * absmax;
}

BP_HD float dequantize_state(const CodeTable& table, std::uint8_t code, float absmax) {
  return dequantize_state(table.code_values, code, absmax);
}

// The new absmax of a state's block: the exact maximum of the new states, or the canonical NaN when
// one of them is not finite (the block is stored as zero codes and reported).
BP_HD float new_block_absmax(const BlockScan& scan) {
  return stored_absmax(scan);
}

// Load element i with its states dequantized against the block's old absmax, and run the step.
template <OptimizerKind K>
BP_HD ElementValues optim8_element(const Optimizer8Params& p, const CodeTable* tables, const float* old_absmax,
                                   std::int64_t i) {
  constexpr int states = state_count(K);
  ElementValues e;
  e.p = load_as_float(p.base.param, p.base.param_dtype, p.base.param_index.storage(i));
  e.g = load_as_float(p.base.grad, p.base.grad_dtype, p.base.grad_index.storage(i));
  for (int k = 0; k < states; ++k) e.s[k] = dequantize_state(tables[k], p.codes[k][i], old_absmax[k]);
  optimizer_element_of<K>(p.base.s, e);
  return e;
}

// Store the new parameter and the requantized states of element i.
template <OptimizerKind K>
BP_HD void optim8_store(const Optimizer8Params& p, const CodeTable* tables, const float* new_absmax,
                        const bool* nonfinite, std::int64_t i, const ElementValues& e) {
  constexpr int states = state_count(K);
  store_computed_float(p.base.param, p.base.param_dtype, p.base.param_index.storage(i), e.p);
  for (int k = 0; k < states; ++k) {
    const CodeTable& table = tables[k];
    p.codes[k][i] = nonfinite[k] ? table.zero_code : nearest_code_of(table, normalize(e.s[k], new_absmax[k]));
  }
}

// optim8_element and optim8_store where parameter and gradient are contiguous, both of dtype D: the
// same values from loads whose dtype is known at compile time, and the code values from a copy of
// each state's (a CUDA launcher's shared memory). The CUDA warp kernel's element body.
template <OptimizerKind K, DType D>
BP_HD ElementValues optim8_element_contiguous(const Optimizer8Params& p, const float* const* code_values,
                                              const float* old_absmax, std::int64_t i) {
  constexpr int states = state_count(K);
  ElementValues e;
  e.p = load_as<D>(p.base.param, p.base.param_index.offset + i);
  e.g = load_as<D>(p.base.grad, p.base.grad_index.offset + i);
  for (int k = 0; k < states; ++k) e.s[k] = dequantize_state(code_values[k], p.codes[k][i], old_absmax[k]);
  optimizer_element_of<K>(p.base.s, e);
  return e;
}

// `indexes[k]` is nearest_index(tables[k]), its entries perhaps a copy (the CUDA kernel's, in shared
// memory).
template <OptimizerKind K, DType D>
BP_HD void optim8_store_contiguous(const Optimizer8Params& p, const CodeTable* tables, const NearestIndex* indexes,
                                   const float* new_absmax, const bool* nonfinite, std::int64_t i, const ElementValues& e) {
  constexpr int states = state_count(K);
  store_computed_as<D>(p.base.param, p.base.param_index.offset + i, e.p);
  for (int k = 0; k < states; ++k) {
    const CodeTable& table = tables[k];
    p.codes[k][i] = nonfinite[k] ? table.zero_code : nearest_code_of(table, indexes[k], normalize(e.s[k], new_absmax[k]));
  }
}

constexpr std::int64_t kMaxOptim8Block = kLargestBlocksize;

// The dequantized states of `count` codes of one block (dequantize_state of each). A launcher may
// pass its own lookup (the CPU's byte permutes, where this loop gathers): it must give these values.
struct StatesOfCodes {
  BP_HD void operator()(const CodeTable& table, const std::uint8_t* __restrict codes, float absmax,
                        float* __restrict out, std::int64_t count) const {
    for (std::int64_t j = 0; j < count; ++j) out[j] = dequantize_state(table, codes[j], absmax);
  }
};

// The codes of a block's new states against their new absmax (finite): quantize_contiguous's
// nearest codes. A launcher may pass its own (the CPU's decision on keys): it must give these codes.
struct RequantizeStates {
  template <class Decide>
  BP_HD void operator()(const CodeTable& table, const float* states, float absmax, std::uint8_t* out,
                        std::int64_t count, const Decide& decide) const {
    quantize_contiguous<DType::f32>(table, states, 0, out, absmax, 0, count, decide);
  }
};

// The element pass of a contiguous block: parameter and gradient as fp32 in, the dequantized states
// in and out of the same scratch arrays (each element reads and writes only its own), the new
// parameter into another. Each restrict pointer is a parameter of this function, and none of the
// objects they reach is written through another name here, so restrict holds by the letter; the
// parameter tensor is written only later, by the caller.
template <OptimizerKind K>
BP_HD void optim8_elements_contiguous(const StepScalars scalars, const float* __restrict param_values,
                                      const float* __restrict grad_values, float* __restrict param_out,
                                      float (*__restrict state)[kMaxOptim8Block], std::int64_t count) {
  constexpr int states = state_count(K);
  for (std::int64_t j = 0; j < count; ++j) {
    ElementValues e;
    e.p = param_values[j];
    e.g = grad_values[j];
    for (int k = 0; k < states; ++k) e.s[k] = state[k][j];
    optimizer_element_of<K>(scalars, e);
    param_out[j] = e.p;
    for (int k = 0; k < states; ++k) state[k][j] = e.s[k];
  }
}

// One block whose parameter, gradient and codes are contiguous, with parameter and gradient of
// dtype D: optim8_element, the scan and optim8_store, in passes over the block. Results go to local
// arrays first, so that every loop vectorizes (a store straight into a tensor could alias the code
// tables the loops gather from). Returns whether a state of the block was not finite.
// `decide` takes the nearest codes of the new states (DecideNearest, or a launcher's own), `halves`
// widens and narrows f16 runs (HalfRunsByElement, or a launcher's own), `states_of` dequantizes the
// old states (StatesOfCodes, or a launcher's own), `requantize` codes the new ones (RequantizeStates,
// or a launcher's own).
template <OptimizerKind K, DType D, class Decide = DecideNearest, class HalfRuns = HalfRunsByElement,
          class StatesOf = StatesOfCodes, class Requantize = RequantizeStates>
BP_HD bool optim8_block_contiguous(const Optimizer8Params& p, const CodeTable* tables, std::int64_t block,
                                   const Decide& decide = {}, const HalfRuns& halves = {},
                                   const StatesOf& states_of = {}, const Requantize& requantize = {}) {
  constexpr int states = state_count(K);
  struct {
    float widened_param[kMaxOptim8Block];  // f16 and bf16 inputs as fp32
    float widened_grad[kMaxOptim8Block];
    float param[kMaxOptim8Block];
    float state[3][kMaxOptim8Block];
  } scratch;
  const std::int64_t begin = block_begin(block, p.blocksize);
  const std::int64_t count = block_end(block, p.blocksize, p.base.numel) - begin;
  void* const param = p.base.param;
  const void* const grad = p.base.grad;
  const std::int64_t param_at = p.base.param_index.offset + begin, grad_at = p.base.grad_index.offset + begin;
  // f16 and bf16 are widened into the scratch first: GCC 12 vectorizes the widening and the step
  // apart, but gives up on some optimizers' loops (SGD) with both in one.
  const float* param_values = scratch.widened_param;
  const float* grad_values = scratch.widened_grad;
  if constexpr (D == DType::f32) {
    param_values = static_cast<const float*>(param) + param_at;
    grad_values = static_cast<const float*>(grad) + grad_at;
  } else {
    widen_run<D>(param, param_at, scratch.widened_param, count, halves);
    widen_run<D>(grad, grad_at, scratch.widened_grad, count, halves);
  }
  // The scalars go by value: the body reads some under a condition, and loads from the parameters
  // under a condition are not hoisted out of the loop (they would keep it scalar).
  for (int k = 0; k < states; ++k) states_of(tables[k], p.codes[k] + begin, p.absmax[k][block], scratch.state[k], count);
  optim8_elements_contiguous<K>(p.base.s, param_values, grad_values, scratch.param, scratch.state, count);
  bool any_nonfinite = false;
  for (int k = 0; k < states; ++k) {
    const BlockScan scan = scan_contiguous<DType::f32>(scratch.state[k], 0, 0, count);
    const float new_absmax = new_block_absmax(scan);
    std::uint8_t* const out = p.codes[k] + begin;
    if (scan.nonfinite) {
      for (std::int64_t j = 0; j < count; ++j) out[j] = static_cast<std::uint8_t>(tables[k].zero_code);
    } else {
      requantize(tables[k], scratch.state[k], new_absmax, out, count, decide);
    }
    p.absmax[k][block] = new_absmax;
    any_nonfinite = any_nonfinite || scan.nonfinite;
  }
  narrow_run<D>(scratch.param, param, param_at, count, halves);
  return any_nonfinite;
}

}  // namespace bitparity
