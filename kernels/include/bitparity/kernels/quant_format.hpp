#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace bitparity {

// A registered code map (code_map.hpp). The named formats are the built-in maps; a map registered
// at run time gets the next free value.
enum class QuantFormat : std::uint8_t {
  dynamic8_signed,
  dynamic8_unsigned,
  linear8,
  nf4,
  fp4,
  dynamic8_signed_fused,
  dynamic8_unsigned_fused,
  linear8_fused,
  fp4_positive_zero,
};
inline constexpr int kMaxCodeMaps = 256;

// Midpoints searched after a bucket's low count: a power of two, so the search is a fixed number of
// branch-free steps. Building a table checks that every bucket's counts fit in it.
inline constexpr int kBucketWindow = 32;

// Buckets of the finer decision index (CodeTable::nearest_*), both signs together: 32 KiB of packed
// entries, of which random data touches a few exponents.
inline constexpr int kNearestBuckets = 8192;
inline constexpr int kNearestLowBits = 16;  // threshold bits an entry holds: buckets of at most 2^16 patterns

// The decision table of one format, plain data for the kernel body.
// Quantization rounds the normalised value v to the nearest of `sorted_values` by counting the
// decision `thresholds` below it: threshold i is the largest fp32 value <= the exact midpoint M_i of
// sorted values i and i+1, so `threshold_i < v` exactly when `M_i < v` (a tie M_i == v goes to the
// lower code).
// Every array starts a cache line: the CPU's vector code loads 16 entries at a time, and loads that
// spanned two lines doubled the fp32 keys' setup (23 against 11 ns a block on a Zen 5).
struct CodeTable {
  int bits = 8;                     // 8, or 4 for packed formats
  int sorted_count = 0;             // distinct code values
  int first_step = 128;             // first step of the searches: 2*first_step >= sorted_count
  alignas(64) float sorted_values[256] = {};    // ascending, distinct; +inf beyond sorted_count
  // The exact midpoint of neighbours rounded down to fp32; +inf beyond, padded so that a search
  // window of kBucketWindow entries starting at any bucket's low count stays inside the array.
  alignas(64) float thresholds[256 + kBucketWindow] = {};
  // The index arrays are 32-bit, not bytes: a vectorized search loads them with gathers, and x86
  // has no byte gather.
  alignas(64) std::int32_t sorted_codes[256] = {};  // code emitted for each sorted value
  alignas(64) float code_values[256] = {};      // value of each code, for dequantisation
  float smallest_magnitude = 0;     // the smallest nonzero |code value| (where fp32 products may underflow)
  std::uint8_t zero_code = 0;       // code of value +0, written for blocks without finite data
  // An index over fp32 bit patterns that makes the nearest-code search short and exact: every v in
  // bucket k = bits(v) >> 20 (sign, exponent, three fraction bits) has at least bucket_low[k] and
  // fewer than bucket_low[k] + kBucketWindow thresholds strictly below it (ARITHMETIC.md).
  alignas(64) std::int32_t bucket_low[4096] = {};
  // A finer index, where the map allows one within kNearestBuckets: buckets of |bits(v)| clamped to
  // [nearest_floor, nearest_ceiling], shifted right by nearest_shift (at most kNearestLowBits), per
  // sign, each holding at most one threshold. The nearest code of v is then one compare
  // (nearest_code_by_bucket; ARITHMETIC.md).
  std::int32_t nearest_ready = 0;  // 0: the map's thresholds are too close for the buckets; search
  std::int32_t nearest_shift = 0;
  std::uint32_t nearest_floor = 0, nearest_ceiling = 0;  // bucket starts, as fp32 magnitude bits
  std::int32_t nearest_per_sign = 0;                     // buckets of one sign; negative ones follow
  std::int32_t nan_code = 0;                             // the code search gives NaN (sorted index 0)
  // Bucket k's entry in one 32-bit word, so that a vector loads it with one 32-bit gather: the low
  // nearest_shift bits of its threshold's magnitude bits (the rest are the bucket's own), then the
  // code where v is not above the threshold (bits 16-23) and the code where it is (bits 24-31). A
  // bucket without a threshold holds the same code twice.
  alignas(64) std::uint32_t nearest_entry[kNearestBuckets] = {};
  // The thresholds in the order the search visits its levels: the one of step first_step, then the
  // two of step first_step/2, ..., then the first_step of step 1 (level l starts at 2^l - 1). The
  // CPU's vector search of 4-bit maps picks each level's candidate by a permute (ARITHMETIC.md).
  alignas(64) float thresholds_by_level[256] = {};
  // Where each of those thresholds t falls among quotients q = x / absmax before fp32 rounding:
  // fl32(q) <= t exactly when q < edge, or q == edge and the edge is closed. The edge is the exact
  // midpoint of t and the next fp32 value above it (+inf for +inf), a double; it is closed where t's
  // last significand bit is 0 (a tie rounds to even, to t). Launchers that decide 16-bit inputs by
  // comparing the inputs themselves turn these into thresholds on x (input_keys.hpp).
  alignas(64) double level_edges[256] = {};
  alignas(64) std::uint8_t level_edge_closed[256] = {};
  // The same edges by the CPU's search position (input_keys_cpu.cpp; entry i at position i + 1;
  // position 0, never read, +inf): negated where open, so that one rounding toward -inf gives
  // every key.
  alignas(64) double key_bounds_by_position[256] = {};
  // The same bounds in fp32 parts, edge = threshold + half_gap (the half gap to the next fp32 value
  // above, a power of two; 0 at the +inf padding), negated alike where open: the bound rounded toward
  // -inf is then one fp32 fma of threshold * absmax + half_gap * absmax, where that last product is
  // exact (at least 2^-126: absmax * smallest_half_gap). smallest_half_gap is 0 where some half gap
  // is below fp32's range (thresholds of at most 2^-126 in magnitude): keys then take the doubles.
  alignas(64) float key_thresholds_by_position[256] = {};
  alignas(64) float key_half_gaps_by_position[256] = {};
  float smallest_half_gap = 0;
  // A bound's sign is the sign of its position's entry above (absmax > 0), so the xor that turns
  // the bound rounded toward -inf into its key is fixed per position: 0x8000...0 for a positive
  // bound, all ones for a negative one, complemented where the edge is open (the key there is
  // ~key - 1, the step all ones). 16-bit keys take the upper halves; bf16's rounding toward -inf
  // adds 0xFFFF to a negative bound's fp32 pattern before dropping its lower half.
  alignas(64) std::uint32_t key_flips_by_position[256] = {};
  alignas(64) std::int32_t key_steps_by_position[256] = {};
  // The same five by sorted count: entry c is the threshold of sorted index c (at its search
  // position), entries from 2 * first_step - 1 on the +inf padding of position 0. The CPU's fp32
  // search on the keys' upper halves checks its count against the key at it (input_keys_f32_cpu.cpp).
  // Its keys are signed (the top bit flipped), and the flips here flip it too: (k ^ f ^ 2^31) + s
  // is (k ^ f) + s + 2^31 modulo 2^32.
  alignas(64) double key_bounds_by_count[256] = {};
  alignas(64) float key_thresholds_by_count[256] = {};
  alignas(64) float key_half_gaps_by_count[256] = {};
  alignas(64) std::uint32_t key_flips_by_count[256] = {};
  alignas(64) std::int32_t key_steps_by_count[256] = {};
  alignas(64) std::uint16_t narrow_key_flips_by_position[256] = {};
  alignas(64) std::int16_t narrow_key_steps_by_position[256] = {};
  alignas(64) std::uint32_t bf16_round_ups_by_position[256] = {};
  alignas(64) std::uint8_t sorted_code_bytes[256] = {};  // sorted_codes as bytes, for the searches' byte permutes
  // code_values as four byte planes (plane b holds byte b of each value, little-endian): the CPU's
  // 8-bit step looks its states up with byte permutes (state_values_cpu.cpp), which have no fp32
  // form over 256 entries.
  alignas(64) std::uint8_t code_value_planes[4][256] = {};
};

// Views into the registry, valid for the life of the program.
struct QuantFormatInfo {
  QuantFormat format;
  std::string_view name;
  int bits;
  std::string_view description;  // the map's provenance
  bool builtin = true;
};

std::vector<QuantFormatInfo> quant_formats();  // every registered map, built-in ones first
const QuantFormatInfo& quant_format_info(QuantFormat format);
QuantFormat parse_quant_format(std::string_view name);  // throws Error(invalid_argument)
const CodeTable& code_table(QuantFormat format);        // built once, immutable
// The tables of three formats side by side (an 8-bit step's states), copied once per triple and
// kept for the process: a step indexes them without copying 3 x 85 KB per call.
const CodeTable* code_tables_in_a_row(const std::array<QuantFormat, 3>& formats);
// Block sizes the kernels accept: powers of two 64..kLargestBlocksize, and 32 for 4-bit formats.
inline constexpr std::int64_t kLargestBlocksize = 4096;
std::vector<std::int64_t> supported_block_sizes(QuantFormat format);
void validate_block_size(QuantFormat format, std::int64_t blocksize);  // throws with the valid list

// The 256 values of bitsandbytes' create_dynamic_map(signed, max_exponent_bits=7, total_bits=8)
// and create_linear_map(signed=True), reproduced in fp32 arithmetic (see ARITHMETIC.md), with
// torch.linspace unfused (its default CPU kernel) or fused (its AVX2/AVX512 kernels).
std::vector<float> dynamic_map_values(bool is_signed, bool fused_linspace = false);
std::vector<float> linear_map_values(bool fused_linspace = false);

}  // namespace bitparity
