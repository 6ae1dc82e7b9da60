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

BP_HD float dequantize_state(const CodeTable& table, std::uint8_t code, float absmax) {
  return static_cast<float>(static_cast<double>(table.code_values[code]) * static_cast<double>(absmax));
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
    p.codes[k][i] = nonfinite[k] ? table.zero_code
                                 : table.sorted_codes[nearest_sorted_index(table, normalize(e.s[k], new_absmax[k]))];
  }
}

}  // namespace bitparity
