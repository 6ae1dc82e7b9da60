#pragma once
// The CPU launcher's nearest codes of contiguous f16 and bf16 blocks, decided on the inputs
// themselves (input_keys.hpp) with AVX-512 BW, VBMI and VBMI2: the block's thresholds become 16-bit keys
// once, then the search of count_below runs on 32 keys per vector, each level's candidates picked by
// a permute from registers, and the count becomes the code by a byte permute. No division and no
// gather per element, where the fp32 path pays one of each for every 16 elements. It computes the
// same count, so the same codes: input_keys_tests compares it with the scalar body on every 16-bit
// pattern, P2 with the strided path.
#include <cstdint>
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optim8_body.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "cpu_features.hpp"

namespace bitparity::cpu {

// A map's bf16 level keys at every block absmax of one binade, for launches of many bf16 blocks.
// Scaling by 2^s is exact on bf16's normal values, and so is rounding toward -inf: the key of a
// bound B * 2^s is that of B with s added to its exponent, as long as every key's value and its
// neighbours stay normal. So a block whose absmax is m * 2^s (m in [1, 2), a bf16 significand)
// takes the keys of absmax m, each moved by s binades (+s << 7 on a positive value's key, -s << 7
// on a negative one's), where every moved key's exponent field stays in [2, 253]; other blocks
// compute theirs. Built once per map and kept for the process (quantize_cpu.cpp): 128 rows of keys
// and their checks, about 50 us.
inline constexpr std::int64_t kBlocksForMovedKeys = 256;  // launches with fewer blocks compute every key
static_assert(kBlocksForMovedKeys <= kBlocksForEveryCpuPath, "the layout properties draw launches this large");
struct Bf16KeysByMantissa {
  alignas(64) std::uint16_t keys[128][256];  // the level registers' contents at absmax 1 + j/128
  alignas(64) std::int16_t signs[256];       // +1, -1, or 0 where a key never moves (+inf, unused)
  int lowest_exponent = 0, highest_exponent = 0;  // exponent fields of the moving keys, over every row
  // false where some key at absmax in [1, 2) is not +inf or a normal value of exponent field at
  // least 2 (its neighbour toward zero must be normal too), or changes sign over the rows
  bool usable = false;
};

// Fills `out` for `table`; false (out.usable false) without AVX-512 VBMI2 or where the map's keys do
// not move by exponent.
bool build_bf16_keys_by_mantissa(const CodeTable& table, Bf16KeysByMantissa& out);

// The level keys of a bf16 block of absmax pattern `absmax_bits` from `moved` (input_threshold_keys'
// layout); false where the block's exponent is outside the range the keys move over. For tests.
bool input_threshold_keys_moved(const CodeTable& table, const Bf16KeysByMantissa& moved, std::uint16_t absmax_bits,
                                std::uint16_t* keys);

// Quantizes blocks [first, last) of a contiguous f16, bf16 or fp32 input with nearest rounding
// (absmax, flag and codes) up to the first block it does not apply to, which the body must take:
// returns that block's index, having written nothing for it, or `last`. It does not apply to a block
// with NaN, infinity or only zeros, one shorter than 2 * first_step (where computing the keys costs
// more than it saves), another dtype or layout, or on a CPU without AVX-512 VBMI2. bf16 blocks take
// their keys from `bf16_keys` where it is given, usable and covers the block's absmax.
std::int64_t quantize_blocks_by_keys(const CodeTable& table, const QuantizeParams& p, std::int64_t first, std::int64_t last,
                                     const Bf16KeysByMantissa* bf16_keys = nullptr);
// The same for one block: false where the body must take it.
bool quantize_block_by_keys(const CodeTable& table, const QuantizeParams& p, std::int64_t block,
                            const Bf16KeysByMantissa* bf16_keys = nullptr);

// The level keys of a block (input_threshold_keys) computed in vector lanes; for tests.
bool input_threshold_keys_vector(const CodeTable& table, DType dtype, float absmax, std::uint16_t* keys);

// fp32 blocks (input_keys_f32_cpu.cpp): the same with 32-bit keys, 16 per vector. Called by
// quantize_blocks_by_keys; the keys of a block in vector lanes for tests (input_threshold_keys_f32).
std::int64_t quantize_f32_blocks_by_keys_avx512(const CodeTable& table, const QuantizeParams& p, std::int64_t first,
                                                std::int64_t last);
bool input_threshold_keys_f32_vector(const CodeTable& table, float absmax, std::uint32_t* keys);
// Whether an 8-bit fp32 block of this absmax searches its keys' upper halves (no two of its keys
// that a finite input can meet share one), rather than the whole keys; for tests.
bool f32_upper_half_search_applies(const CodeTable& table, float absmax);

// The nearest 8-bit codes of `count` fp32 values against a given absmax (> 0, finite; every
// |value| at most it), as quantize_contiguous gives them: the 8-bit step's requantization. False,
// having written nothing, where it does not apply (no VBMI2, a 4-bit map, fewer than 2 * first_step
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
