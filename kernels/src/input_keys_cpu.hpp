#pragma once
// The CPU launcher's nearest codes of contiguous f16 and bf16 blocks, decided on the inputs
// themselves (input_keys.hpp) with AVX-512 BW and VBMI: the block's thresholds become 16-bit keys
// once, then the search of count_below runs on 32 keys per vector, each level's candidates picked by
// a permute from registers, and the count becomes the code by a byte permute. No division and no
// gather per element, where the fp32 path pays one of each for every 16 elements. It computes the
// same count, so the same codes: input_keys_tests compares it with the scalar body on every 16-bit
// pattern, P2 with the strided path.
#include <cstdint>
#include "bitparity/kernels/optim8_body.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "cpu_features.hpp"

namespace bitparity::cpu {

// Quantizes block `block` of a contiguous f16, bf16 or fp32 input with nearest rounding: absmax, flag and
// codes. Returns false, having written nothing, where it does not apply and the body must: a block
// with NaN, infinity or only zeros, one shorter than 2 * first_step (where computing the keys costs
// more than it saves), another dtype, or a CPU without AVX-512 VBMI.
bool quantize_block_by_keys(const CodeTable& table, const QuantizeParams& p, std::int64_t block);

// The level keys of a block (input_threshold_keys) computed in vector lanes; for tests.
bool input_threshold_keys_vector(const CodeTable& table, DType dtype, float absmax, std::uint16_t* keys);

// fp32 blocks (input_keys_f32_cpu.cpp): the same with 32-bit keys, 16 per vector. Called by
// quantize_block_by_keys; the keys of a block in vector lanes for tests (input_threshold_keys_f32).
bool quantize_f32_block_by_keys_avx512(const CodeTable& table, const QuantizeParams& p, std::int64_t block);
bool input_threshold_keys_f32_vector(const CodeTable& table, float absmax, std::uint32_t* keys);

// The nearest 8-bit codes of `count` fp32 values against a given absmax (> 0, finite; every
// |value| at most it), as quantize_contiguous gives them: the 8-bit step's requantization. False,
// having written nothing, where it does not apply (no VBMI, a 4-bit map, fewer than 2 * first_step
// values, another absmax).
bool codes_of_f32_by_keys(const CodeTable& table, const float* values, float absmax, std::uint8_t* codes,
                          std::int64_t count);

// The 8-bit step's requantization (optim8_body.hpp, RequantizeStates) by keys where it applies.
struct RequantizeStatesByKeys {
  template <class Decide>
  void operator()(const CodeTable& table, const float* states, float absmax, std::uint8_t* out, std::int64_t count,
                  const Decide& decide) const {
    if (!codes_of_f32_by_keys(table, states, absmax, out, count)) RequantizeStates{}(table, states, absmax, out, count, decide);
  }
};

}  // namespace bitparity::cpu
