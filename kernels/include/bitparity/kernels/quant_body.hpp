#pragma once
// The arithmetic of blockwise quantisation, written once for host and device. The CPU and CUDA
// launchers run these functions over the same logical blocks; see ARITHMETIC.md.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "bitparity/kernels/element_access.hpp"
#include "bitparity/kernels/philox.hpp"
#include "bitparity/kernels/quant_format.hpp"
#include "bitparity/kernels/strided_index.hpp"

namespace bitparity {

struct StochasticRounding {
  bool enabled = false;
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  // Global logical index of this call's element 0: a tensor quantised in pieces at their global
  // offsets draws the same random numbers as the whole tensor.
  std::uint64_t element_offset = 0;
};

struct QuantizeParams {
  const void* input = nullptr;
  DType input_dtype = DType::f32;
  StridedIndex input_index;
  std::int64_t numel = 0;
  std::int64_t blocksize = 0;
  std::uint8_t* codes = nullptr;      // one byte per element, or two elements per byte (4-bit)
  float* absmax = nullptr;            // one per block
  std::uint8_t* nonfinite = nullptr;  // one flag per block
  StochasticRounding rounding;
};

struct DequantizeParams {
  const std::uint8_t* codes = nullptr;
  const float* absmax = nullptr;
  std::int64_t numel = 0;
  std::int64_t blocksize = 0;
  int bits = 8;
  void* output = nullptr;
  DType output_dtype = DType::f32;
  StridedIndex output_index;
};

// Running state of one block's scan: exact and order-free (max, or).
struct BlockScan {
  float absmax = 0.0f;
  bool nonfinite = false;
};

BP_HD void scan_element(BlockScan& scan, float x) {
  const float magnitude = fabsf(x);
  if (!(magnitude <= FLT_MAX)) {
    scan.nonfinite = true;  // NaN or infinity
  } else if (magnitude > scan.absmax) {
    scan.absmax = magnitude;
  }
}

BP_HD void merge_scan(BlockScan& into, const BlockScan& other) {
  if (other.absmax > into.absmax) into.absmax = other.absmax;
  into.nonfinite = into.nonfinite || other.nonfinite;
}

BP_HD std::int64_t block_begin(std::int64_t block, std::int64_t blocksize) { return block * blocksize; }
BP_HD std::int64_t block_end(std::int64_t block, std::int64_t blocksize, std::int64_t numel) {
  const std::int64_t end = (block + 1) * blocksize;
  return end < numel ? end : numel;
}

// v = x / absmax, one IEEE division. An all-zero block (absmax 0) normalises to 0.
BP_HD float normalize(float x, float absmax) { return absmax > 0.0f ? x / absmax : 0.0f; }

// Number of entries of an ascending table that are < v (or <= v), by a binary search over
// descending powers of two from `first_step`, with no data-dependent branch. The tables are padded
// with +inf up to 255 entries, which never count for a finite v.
BP_HD int count_below(const float* ascending, int first_step, float v, bool or_equal) {
  int count = 0;
  for (int step = first_step; step > 0; step >>= 1) {
    const float entry = ascending[count + step - 1];
    count += (or_equal ? entry <= v : entry < v) ? step : 0;
  }
  return count;
}

// count_below with the steps fixed at compile time (Step, Step/2, ..., 1) and added to `count`:
// straight-line code that a compiler can vectorize over elements.
template <int Step>
BP_HD int count_below_from(const float* ascending, int count, float v) {
  count += ascending[count + Step - 1] < v ? Step : 0;
  if constexpr (Step > 1) {
    return count_below_from<Step / 2>(ascending, count, v);
  } else {
    return count;
  }
}

// Index into sorted_values of the nearest code: the number of thresholds strictly below v, which is
// the number of exact midpoints below v (a tie goes to the lower code). The bucket of v's bit pattern
// has `low` of them below every v it holds and fewer than low + kBucketWindow; they are ascending, so a
// branch-free search of the window after `low` counts the rest exactly. A NaN compares false and
// stays at its bucket's low of 0; +inf shares that bucket, and every threshold is below it.
// (`last` is read unconditionally: a load under the select would keep a loop of this scalar.)
BP_HD int nearest_sorted_index(const CodeTable& table, float v) {
  const int low = table.bucket_low[float_bits(v) >> 20];
  const int count = count_below_from<kBucketWindow / 2>(table.thresholds, low, v);
  const int last = table.sorted_count - 1;
  return v > FLT_MAX ? last : count;
}

// The same count by a binary search over all thresholds (builds the index; tests compare the two).
BP_HD int nearest_sorted_index_by_search(const CodeTable& table, float v) {
  return count_below(table.thresholds, table.first_step, v, false);
}

// The bucket of v in the finer index: its magnitude bits, clamped to the index's range, per sign.
BP_HD int nearest_bucket(const CodeTable& table, float v) {
  const std::uint32_t bits = float_bits(v);
  std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  magnitude = magnitude < table.nearest_floor ? table.nearest_floor : magnitude;
  magnitude = magnitude > table.nearest_ceiling ? table.nearest_ceiling : magnitude;
  return static_cast<int>((magnitude - table.nearest_floor) >> table.nearest_shift) +
         static_cast<int>(bits >> 31) * table.nearest_per_sign;
}

// The finer index's scalars, copied out of the table once per loop: read through the table in the
// loop, they might alias the codes it stores, and the loop stayed scalar.
struct NearestIndex {
  std::uint32_t floor, ceiling, shift;
  std::int32_t per_sign, nan_code;
  const std::uint32_t* entry;
};

BP_HD NearestIndex nearest_index(const CodeTable& table) {
  return NearestIndex{table.nearest_floor, table.nearest_ceiling, static_cast<std::uint32_t>(table.nearest_shift),
                      table.nearest_per_sign, table.nan_code, table.nearest_entry};
}

// The code of nearest_sorted_index(v) through the finer index (only where nearest_ready): every v of
// a bucket has the same thresholds below it but the bucket's one, so one compare decides, with one
// load where the search makes six dependent ones. The threshold's magnitude is the bucket's high
// bits and the entry's low ones; `threshold < v` compares magnitudes (v's own, not the clamped one),
// the other way round for a negative v, whose bucket's threshold is negative too.
BP_HD int nearest_code_by_bucket(const NearestIndex& index, float v) {
  // Every load is unconditional: a load under a select would keep the loop scalar.
  const std::uint32_t bits = float_bits(v);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  std::uint32_t clamped = magnitude < index.floor ? index.floor : magnitude;
  clamped = clamped > index.ceiling ? index.ceiling : clamped;
  const std::uint32_t low_mask = (1u << index.shift) - 1u;
  const std::uint32_t negative = bits >> 31;
  const auto bucket = static_cast<std::int32_t>((clamped - index.floor) >> index.shift) +
                      static_cast<std::int32_t>(negative) * index.per_sign;
  const std::uint32_t entry = index.entry[bucket];
  const std::uint32_t threshold = (clamped & ~low_mask) | (entry & low_mask);
  // A negative v is above its threshold where its magnitude is below the threshold's: flipping every
  // bit of both magnitudes (flip all ones) turns that into the positive case's one unsigned compare,
  // where selecting between two compares cost the GPU six instructions. A 0/1 word, not a bool:
  // GCC 12 did not vectorize a select on a compare's mask.
  const std::uint32_t flip = 0u - negative;
  const std::uint32_t above = (magnitude ^ flip) > (threshold ^ flip) ? 1u : 0u;
  const auto code = static_cast<int>(above != 0 ? entry >> 24 : (entry >> 16) & 0xFFu);
  return v != v ? index.nan_code : code;
}

BP_HD int nearest_code_by_bucket(const CodeTable& table, float v) {
  return nearest_code_by_bucket(nearest_index(table), v);
}

// The finer index's entries in use, both signs (a bucket is below per_sign, plus per_sign for a
// negative value); 0 where the map has none. A launcher may copy these into faster memory.
BP_HD int nearest_entry_count(const CodeTable& table) { return table.nearest_ready != 0 ? 2 * table.nearest_per_sign : 0; }

// The nearest code of one normalized value: DecideNearest's decision for a single element (the
// finer index where the map has one, else the search; the two give the same code). The element
// paths and the CUDA kernels take it: one load where the search makes several dependent ones.
// `index` is nearest_index(table), its entries perhaps a launcher's copy of the table's first
// nearest_entry_count (the CUDA quantize's, in shared memory).
BP_HD std::uint8_t nearest_code_of(const CodeTable& table, const NearestIndex& index, float v) {
  return static_cast<std::uint8_t>(table.nearest_ready != 0 ? nearest_code_by_bucket(index, v)
                                                            : table.sorted_codes[nearest_sorted_index(table, v)]);
}

BP_HD std::uint8_t nearest_code_of(const CodeTable& table, float v) { return nearest_code_of(table, nearest_index(table), v); }

// The unit of the CUDA launcher's contiguous quantize: four consecutive elements of one block from
// the little-endian 32-bit words of one vector load (four words of fp32, or two words of two 16-bit
// values, the first element in the low bits), and their nearest codes as one store writes them: four
// 8-bit codes as a little-endian word (the first element's code in the low byte), or four 4-bit
// codes as the low 16 bits (bytes as quantize_packed_byte's: the first element in the high nibble of
// the low byte). The widening is load_as's and the decision nearest_code_of's, so the codes are the
// element path's.
template <DType D>
inline constexpr int kWordsOfFour = D == DType::f32 ? 4 : 2;

template <DType D>
BP_HD void widen_four(const std::uint32_t (&words)[kWordsOfFour<D>], float (&x)[4]) {
  BP_UNROLL for (int j = 0; j < 4; ++j) {
    if constexpr (D == DType::f32) {
      x[j] = float_from_bits(words[j]);
    } else {
      const auto half = static_cast<std::uint16_t>(words[j / 2] >> (16 * (j % 2)));
      x[j] = load_as<D>(&half, 0);
    }
  }
}

template <int Bits>
BP_HD std::uint32_t nearest_codes_of_four(const CodeTable& table, const NearestIndex& index, const float (&x)[4],
                                          float absmax) {
  static_assert(Bits == 8 || Bits == 4, "8-bit or 4-bit codes");
  std::uint32_t word = 0;
  BP_UNROLL for (int j = 0; j < 4; ++j) {
    const auto code = static_cast<std::uint32_t>(nearest_code_of(table, index, normalize(x[j], absmax)));
    word |= Bits == 8 ? code << (8 * j) : code << (8 * (j / 2) + (j % 2 == 0 ? 4 : 0));
  }
  return word;
}

// Stochastic rounding between the two codes that bracket v: up with probability
// (v - below) / (above - below), decided by the uniform draw r in [0, 1).
BP_HD int stochastic_sorted_index(const CodeTable& table, float v, float r) {
  const int last = table.sorted_count - 1;
  if (!(v > table.sorted_values[0])) return 0;
  if (!(v < table.sorted_values[last])) return last;
  const int lo = count_below(table.sorted_values, table.first_step, v, true) - 1;  // sorted_values[lo] <= v
  const float below = table.sorted_values[lo];
  const float above = table.sorted_values[lo + 1];
  const float probability_up = (v - below) / (above - below);
  return r < probability_up ? lo + 1 : lo;
}

// The code of element `logical` (call-local index), whose value x is already loaded, of a block with
// the given absmax.
BP_HD std::uint8_t quantize_value(const CodeTable& table, const QuantizeParams& p, std::int64_t logical, float x,
                                  float absmax) {
  const float v = normalize(x, absmax);
  if (p.rounding.enabled) {
    const std::uint64_t global = p.rounding.element_offset + static_cast<std::uint64_t>(logical);
    return table.sorted_codes[stochastic_sorted_index(table, v, stochastic_uniform(p.rounding.seed, p.rounding.stream, global))];
  }
  return nearest_code_of(table, v);
}

BP_HD std::uint8_t quantize_element(const CodeTable& table, const QuantizeParams& p, std::int64_t logical,
                                   float absmax) {
  return quantize_value(table, p, logical, load_as_float(p.input, p.input_dtype, p.input_index.storage(logical)), absmax);
}

// Write the absmax and flag of a block once its scan is complete. A block with NaN or infinity
// gets absmax NaN, its flag set, and every code set to the zero code.
BP_HD float stored_absmax(const BlockScan& scan) {
  return scan.nonfinite ? float_from_bits(kCanonicalNanF32) : scan.absmax;
}

BP_HD float finish_block(const QuantizeParams& p, std::int64_t block, const BlockScan& scan) {
  p.nonfinite[block] = scan.nonfinite ? 1 : 0;
  const float absmax = stored_absmax(scan);
  p.absmax[block] = absmax;
  return absmax;
}

// Codes of the byte `byte_index` of a 4-bit output: elements 2i (high nibble) and 2i+1.
BP_HD std::uint8_t quantize_packed_byte(const CodeTable& table, const QuantizeParams& p, std::int64_t byte_index,
                                       float absmax, bool nonfinite) {
  const std::int64_t first = 2 * byte_index;
  std::uint8_t high = table.zero_code, low = 0;
  if (!nonfinite) high = quantize_element(table, p, first, absmax);
  if (first + 1 < p.numel) low = nonfinite ? table.zero_code : quantize_element(table, p, first + 1, absmax);
  return static_cast<std::uint8_t>((high << 4) | (low & 0x0F));
}

// The scan of elements [begin, end) of a contiguous input: scan_element's result, computed on bit
// patterns so that the loops vectorize. A finite magnitude's bits order as its value, so the
// largest bits are the absmax; a magnitude at or above infinity's bits is NaN or infinity. The
// largest of all magnitudes comes first, two operations per element: below infinity it is the
// absmax. Only a block holding a NaN or infinity takes the second loop, which leaves those out
// (with the second loop alone, the 8-bit step ran 5-7 % slower on AVX-512).
template <DType D>
BP_HD BlockScan scan_contiguous(const void* __restrict input, std::int64_t offset, std::int64_t begin,
                                std::int64_t end) {
  constexpr std::uint32_t kInfinityBits = 0x7F800000u;
  std::uint32_t largest = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::uint32_t magnitude = float_bits(load_as<D>(input, offset + i)) & 0x7FFFFFFFu;
    largest = largest > magnitude ? largest : magnitude;
  }
  if (largest < kInfinityBits) return BlockScan{float_from_bits(largest), false};
  largest = 0;
  std::uint32_t nonfinite = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::uint32_t magnitude = float_bits(load_as<D>(input, offset + i)) & 0x7FFFFFFFu;
    const std::uint32_t finite = magnitude < kInfinityBits ? 1u : 0u;
    nonfinite |= finite ^ 1u;
    const std::uint32_t candidate = magnitude & (0u - finite);  // 0 for NaN and infinity
    largest = largest > candidate ? largest : candidate;
  }
  return BlockScan{float_from_bits(largest), nonfinite != 0};
}

// Nearest codes (quantize_value's nearest rounding) of `count` <= kNearestChunk contiguous elements
// from `first`, into a local array: the loops vectorize (the second with gathers), where a byte
// store straight into the codes could alias the table.
inline constexpr std::int64_t kNearestChunk = 256;  // even, so a chunk of 4-bit codes starts on a byte

// The nearest codes of `count` normalized values: the finer index where the map has one, else the
// search. A launcher may pass another decision (the CPU's vector search): it must give these codes.
struct DecideNearest {
  BP_HD void operator()(const CodeTable& table, const float* __restrict v, std::int32_t* __restrict chosen,
                        std::int64_t count) const {
    if (table.nearest_ready != 0) {
      const NearestIndex index = nearest_index(table);
      BP_LOOP_INDEPENDENT for (std::int64_t j = 0; j < count; ++j) chosen[j] = nearest_code_by_bucket(index, v[j]);
    } else {
      for (std::int64_t j = 0; j < count; ++j) chosen[j] = table.sorted_codes[nearest_sorted_index(table, v[j])];
    }
  }
};

template <DType D, class Decide>
BP_HD void nearest_codes_of_chunk(const CodeTable& table, const void* __restrict input, std::int64_t first,
                                  float absmax, std::int64_t count, std::int32_t* __restrict chosen,
                                  const Decide& decide) {
  float normalized[kNearestChunk];
  for (std::int64_t j = 0; j < count; ++j) normalized[j] = normalize(load_as<D>(input, first + j), absmax);
  decide(table, normalized, chosen, count);
}

// Nearest codes of elements [begin, end) of a contiguous input into 8-bit codes, chunk by chunk.
template <DType D, class Decide = DecideNearest>
BP_HD void quantize_contiguous(const CodeTable& table, const void* __restrict input, std::int64_t offset,
                               std::uint8_t* __restrict codes, float absmax, std::int64_t begin, std::int64_t end,
                               const Decide& decide = {}) {
  std::int32_t chosen[kNearestChunk];
  for (std::int64_t first = begin; first < end; first += kNearestChunk) {
    const std::int64_t count = end - first < kNearestChunk ? end - first : kNearestChunk;
    nearest_codes_of_chunk<D>(table, input, offset + first, absmax, count, chosen, decide);
    for (std::int64_t j = 0; j < count; ++j) codes[first + j] = static_cast<std::uint8_t>(chosen[j]);
  }
}

// The same into 4-bit codes, two per byte (high nibble first), from an even `begin`. An odd `end`
// (the tensor's last element) leaves the low nibble of its byte 0, as quantize_packed_byte does.
template <DType D, class Decide = DecideNearest>
BP_HD void quantize_contiguous_packed(const CodeTable& table, const void* __restrict input, std::int64_t offset,
                                      std::uint8_t* __restrict codes, float absmax, std::int64_t begin,
                                      std::int64_t end, const Decide& decide = {}) {
  std::int32_t chosen[kNearestChunk];
  for (std::int64_t first = begin; first < end; first += kNearestChunk) {
    const std::int64_t count = end - first < kNearestChunk ? end - first : kNearestChunk;
    nearest_codes_of_chunk<D>(table, input, offset + first, absmax, count, chosen, decide);
    std::uint8_t* const out = codes + first / 2;
    for (std::int64_t k = 0; k < count / 2; ++k) {
      out[k] = static_cast<std::uint8_t>((chosen[2 * k] << 4) | (chosen[2 * k + 1] & 0x0F));
    }
    if (count % 2 != 0) out[count / 2] = static_cast<std::uint8_t>(chosen[count - 1] << 4);
  }
}

// The whole of one block on one thread (the CPU launcher's unit of work), reading input dtype D.
// `decide` takes the nearest codes of contiguous data (DecideNearest, or a launcher's own), `halves`
// widens f16 runs (HalfRunsByElement, or a launcher's own).
template <DType D, class Decide = DecideNearest, class HalfRuns = HalfRunsByElement>
BP_HD void quantize_block(const CodeTable& table, const QuantizeParams& p, std::int64_t block,
                          const Decide& decide = {}, const HalfRuns& halves = {}) {
  const std::int64_t begin = block_begin(block, p.blocksize);
  const std::int64_t end = block_end(block, p.blocksize, p.numel);
  if constexpr (D != DType::f32) {
    // A contiguous f16 or bf16 block is widened once, exactly, and quantized as fp32 values: the
    // scan and the decision would otherwise each widen it. Same values, so the same codes.
    if (p.input_index.contiguous && end - begin <= kLargestBlocksize) {
      float widened[kLargestBlocksize];
      widen_run<D>(p.input, p.input_index.offset + begin, widened, end - begin, halves);
      QuantizeParams of_widened = p;
      of_widened.input = widened;
      of_widened.input_dtype = DType::f32;
      of_widened.input_index.offset = -begin;  // element i of the tensor is widened[i - begin]
      quantize_block<DType::f32>(table, of_widened, block, decide, halves);
      return;
    }
  }
  const auto load = [&](std::int64_t i) { return load_as<D>(p.input, p.input_index.storage(i)); };
  BlockScan scan;
  if (p.input_index.contiguous) {
    scan = scan_contiguous<D>(p.input, p.input_index.offset, begin, end);
  } else {
    for (std::int64_t i = begin; i < end; ++i) scan_element(scan, load(i));
  }
  const float absmax = finish_block(p, block, scan);
  if (p.input_index.contiguous && !p.rounding.enabled && !scan.nonfinite) {
    if (table.bits == 8) {
      quantize_contiguous<D>(table, p.input, p.input_index.offset, p.codes, absmax, begin, end, decide);
      return;
    }
    if (begin % 2 == 0) {  // every block of a valid (even) block size starts on a byte
      quantize_contiguous_packed<D>(table, p.input, p.input_index.offset, p.codes, absmax, begin, end, decide);
      return;
    }
  }
  if (table.bits == 4) {
    for (std::int64_t byte = begin / 2; byte < (end + 1) / 2; ++byte) {
      p.codes[byte] = quantize_packed_byte(table, p, byte, absmax, scan.nonfinite);
    }
  } else if (scan.nonfinite) {
    for (std::int64_t i = begin; i < end; ++i) p.codes[i] = table.zero_code;
  } else {
    for (std::int64_t i = begin; i < end; ++i) p.codes[i] = quantize_value(table, p, i, load(i), absmax);
  }
}

BP_HD std::uint8_t code_at(const DequantizeParams& p, std::int64_t logical) {
  if (p.bits == 4) {
    const std::uint8_t byte = p.codes[logical / 2];
    return (logical % 2 == 0) ? static_cast<std::uint8_t>(byte >> 4) : static_cast<std::uint8_t>(byte & 0x0F);
  }
  return p.codes[logical];
}

// out = round(code_value * absmax): the product of two fp32 values is exact in double, so the
// only rounding is the one to the output dtype.
// `absmax` is the absmax of the element's block (launchers that walk a block load it once).
// `code` is the element's code, already loaded (launchers load several before storing any).
BP_HD double dequantized_exact(const CodeTable& table, std::uint8_t code, float absmax) {
  return static_cast<double>(table.code_values[code]) * static_cast<double>(absmax);
}

BP_HD void store_dequantized(const CodeTable& table, const DequantizeParams& p, std::int64_t logical, std::uint8_t code,
                             float absmax) {
  store_rounded_double(p.output, p.output_dtype, p.output_index.storage(logical), dequantized_exact(table, code, absmax));
}

BP_HD void dequantize_element_in_block(const CodeTable& table, const DequantizeParams& p, std::int64_t logical,
                                       float absmax) {
  store_dequantized(table, p, logical, code_at(p, logical), absmax);
}

// The stored word of an output dtype: float for f32, the 16 bits of f16 and bf16.
template <DType D>
using OutputWord = std::conditional_t<D == DType::f32, float, std::uint16_t>;

// The same rounding of code_value * absmax in fp32 lanes, twice as many per vector as in double: an
// fp32 output is the fp32 product itself; f16 and bf16 round its round-to-odd fp32 value
// (product_rounded_to_odd) again to nearest, the single rounding (Boldo and Melquiond). Only where
// products_round_in_fp32 says that the product's error term is exact or cannot matter.
template <DType D>
BP_HD OutputWord<D> dequantized_in_fp32(float code_value, float absmax) {
  if constexpr (D == DType::f32) {
    const float product = code_value * absmax;
    return product != product ? float_from_bits(kCanonicalNanF32) : product;
  } else {
    const float odd = product_rounded_to_odd(code_value, absmax);
    constexpr bool half = D == DType::f16;
    const std::uint16_t rounded = half ? round_float_to_narrow<5, 10>(odd) : round_float_to_narrow<8, 7>(odd);
    return odd != odd ? (half ? kCanonicalNanF16 : kCanonicalNanBF16) : rounded;
  }
}

// Whether a block's products round in fp32 lanes: always for fp32 and f16 outputs (an error term
// can be inexact only for products below 2^-101, which f16 rounds to zero whatever the sticky bit);
// for bf16, whose subnormals reach down to 2^-133, when every nonzero product is at least 2^-101
// (checked on the fp32 product of absmax and the smallest nonzero code, rounded at most 2^-24 low),
// or the absmax is not finite. Other bf16 blocks keep the double product.
template <DType D>
BP_HD bool products_round_in_fp32(const CodeTable& table, float absmax) {
  return D != DType::bf16 || !(absmax * table.smallest_magnitude < 0x1p-100f);
}

// The outputs of `count` elements into out[0, count), element j's code value being value_of(j)
// (table.code_values[code]): in fp32 lanes where the block allows (dequantized_in_fp32), else the
// element body's exact product (dequantized_exact); loops the compiler can vectorize. f16 and bf16
// outputs take the round-to-odd products of a run first, then narrow them (narrow_run:
// store_computed_as's rounding to nearest and canonical NaN, as dequantized_in_fp32 does; f16 by
// `halves`). Two loops: GCC 12 spilled registers in the one that did both.
template <DType D, class HalfRuns, class ValueOf>
BP_HD void dequantized_of_values(const CodeTable& table, const ValueOf& value_of, OutputWord<D>* __restrict out,
                                 float absmax, std::int64_t count, const HalfRuns& halves) {
  if (products_round_in_fp32<D>(table, absmax)) {
    if constexpr (D != DType::f32) {
      constexpr std::int64_t kRun = 256;
      float odd[kRun];
      for (std::int64_t first = 0; first < count; first += kRun) {
        const std::int64_t run = count - first < kRun ? count - first : kRun;
        for (std::int64_t j = 0; j < run; ++j) odd[j] = product_rounded_to_odd(value_of(first + j), absmax);
        narrow_run<D>(odd, out, first, run, halves);
      }
    } else {
      for (std::int64_t j = 0; j < count; ++j) out[j] = dequantized_in_fp32<D>(value_of(j), absmax);
    }
    return;
  }
  for (std::int64_t j = 0; j < count; ++j) {
    store_rounded_double_as<D>(out, j, static_cast<double>(value_of(j)) * static_cast<double>(absmax));
  }
}

// The unit of the CUDA launcher's contiguous dequantize: the codes of one 16-byte load (16 elements
// of 8-bit codes, 32 of 4-bit, high nibble first), all of one block, whose absmax is given. `bytes`
// holds the 16 bytes as little-endian words, as the load gives them. The same arithmetic as
// dequantize_contiguous: fp32 lanes where products_round_in_fp32 allows, else the element body's
// exact product. `code_values` is the table's code_values, wherever the launcher keeps it.
template <int Bits>
inline constexpr int kGroupElements = Bits == 8 ? 16 : 32;

template <DType D, int Bits>
BP_HD void dequantize_group(const CodeTable& table, const float* code_values, const std::uint32_t (&bytes)[4],
                            float absmax, OutputWord<D> (&words)[kGroupElements<Bits>]) {
  static_assert(Bits == 8 || Bits == 4, "8-bit or 4-bit codes");
  constexpr int kPerByte = Bits == 8 ? 1 : 2;
  const bool in_fp32 = products_round_in_fp32<D>(table, absmax);
  BP_UNROLL for (int j = 0; j < kGroupElements<Bits>; ++j) {
    const int byte_index = j / kPerByte;
    const std::uint32_t byte = (bytes[byte_index / 4] >> (8 * (byte_index % 4))) & 0xFFu;
    const std::uint32_t code = Bits == 8 ? byte : (j % 2 == 0 ? byte >> 4 : byte & 0x0Fu);
    const float value = code_values[code];
    if (in_fp32) {
      words[j] = dequantized_in_fp32<D>(value, absmax);
    } else {
      store_rounded_double_as<D>(words, j, static_cast<double>(value) * static_cast<double>(absmax));
    }
  }
}

// A block's table of outputs, one per code: 256 for an 8-bit map, 16 for a 4-bit one. An element's
// output is a function of its code and the block's absmax alone, so this is the element body's
// rounding run per code (dequantized_of_values of every code value, in fp32 lanes where the block
// allows: the exact double product rounded in software took most of a 256-element block's time into
// f16). A launcher may pass its own (the CPU's vector lanes): it must give these words.
struct OutputsOfCodes {
  template <DType D, class HalfRuns>
  BP_HD void compute(const CodeTable& table, float absmax, OutputWord<D>* of_code, const HalfRuns& halves,
                     int codes = 256) const {
    const float* const code_values = table.code_values;
    dequantized_of_values<D>(table, [&](std::int64_t code) { return code_values[code]; }, of_code, absmax, codes,
                             halves);
  }
};

// Outputs of `count` 8-bit codes selected from a block's table of 256 (dequantized_of_values of
// every code). A launcher may pass another selection: it only moves the table's words.
struct SelectByCode {
  template <class Word>
  BP_HD void operator()(const Word* of_code, const std::uint8_t* __restrict codes, Word* __restrict out,
                        std::int64_t count) const {
    for (std::int64_t j = 0; j < count; ++j) out[j] = of_code[codes[j]];
  }
};

// Elements [begin, end) of 8-bit codes into a contiguous output. A block of at least 256 elements
// computes the output of each code once (an output is a function of its code and the block's
// absmax alone) and then selects: no gather of the code values, and the rounding runs on 256 words
// instead of the block's. A shorter block computes each element's.
template <DType D, class HalfRuns = HalfRunsByElement, class SelectCode = SelectByCode, class OfCodes = OutputsOfCodes>
BP_HD void dequantize_contiguous(const CodeTable& table, const std::uint8_t* __restrict codes, void* __restrict output,
                                 std::int64_t output_offset, float absmax, std::int64_t begin, std::int64_t end,
                                 const HalfRuns& halves = {}, const SelectCode& select_code = {},
                                 const OfCodes& of_codes = {}) {
  OutputWord<D>* const out = static_cast<OutputWord<D>*>(output) + output_offset;
  constexpr int kCodes = 256;
  const float* const code_values = table.code_values;
  if (end - begin >= kCodes) {
    OutputWord<D> of_code[kCodes];
    of_codes.template compute<D>(table, absmax, of_code, halves);
    select_code(of_code, codes + begin, out + begin, end - begin);
    return;
  }
  const std::uint8_t* const block_codes = codes + begin;
  dequantized_of_values<D>(table, [&](std::int64_t j) { return code_values[block_codes[j]]; }, out + begin, absmax,
                           end - begin, halves);
}

// Outputs of `bytes` whole bytes of 4-bit codes (high nibble first), selected from the block's table
// of 16 (OutputsOfCodes). Launchers may pass another selection (the CPU's vector permutes): it
// only moves the table's words, so the bits are the element body's either way.
struct SelectByNibbles {
  template <class Word>
  BP_HD void operator()(const Word* of_code, const std::uint8_t* __restrict codes, Word* __restrict out,
                        std::int64_t bytes) const {
    for (std::int64_t j = 0; j < bytes; ++j) {
      const std::uint8_t byte = codes[j];
      out[2 * j] = of_code[byte >> 4];
      out[2 * j + 1] = of_code[byte & 0x0F];
    }
  }
};

// The same for 4-bit codes, two elements per byte, from an even `begin`: the block's 16 outputs
// once, then a selection over whole bytes; the odd last element of a tensor is taken alone.
template <DType D, class Select, class HalfRuns = HalfRunsByElement, class OfCodes = OutputsOfCodes>
BP_HD void dequantize_contiguous_packed(const CodeTable& table, const std::uint8_t* __restrict codes,
                                        void* __restrict output, std::int64_t output_offset, float absmax,
                                        std::int64_t begin, std::int64_t end, const Select& select,
                                        const HalfRuns& halves = {}, const OfCodes& of_codes = {}) {
  OutputWord<D> of_code[16];
  of_codes.template compute<D>(table, absmax, of_code, halves, 16);
  const std::int64_t first_byte = begin / 2;
  const std::int64_t whole_bytes = (end - begin) / 2;
  OutputWord<D>* const out = static_cast<OutputWord<D>*>(output) + output_offset + begin;
  select(of_code, codes + first_byte, out, whole_bytes);
  if ((end - begin) % 2 != 0) out[2 * whole_bytes] = of_code[codes[first_byte + whole_bytes] >> 4];
}

// The whole of one block on one thread (the CPU launcher's unit of work), writing output dtype D.
// `select` and `select_code` pick 4-bit and 8-bit outputs from the block's table (SelectByNibbles,
// SelectByCode, or a launcher's own), `halves` narrows f16 runs (HalfRunsByElement, or its own),
// `of_codes` computes a block's table (OutputsOfCodes, or the launcher's own).
template <DType D, class Select = SelectByNibbles, class HalfRuns = HalfRunsByElement, class SelectCode = SelectByCode,
          class OfCodes = OutputsOfCodes>
BP_HD void dequantize_block(const CodeTable& table, const DequantizeParams& p, std::int64_t block,
                            const Select& select = {}, const HalfRuns& halves = {},
                            const SelectCode& select_code = {}, const OfCodes& of_codes = {}) {
  const std::int64_t begin = block_begin(block, p.blocksize);
  const std::int64_t end = block_end(block, p.blocksize, p.numel);
  const float absmax = p.absmax[block];
  if (p.output_index.contiguous) {
    if (p.bits == 8) {
      dequantize_contiguous<D>(table, p.codes, p.output, p.output_index.offset, absmax, begin, end, halves, select_code,
                               of_codes);
      return;
    }
    if (begin % 2 == 0) {  // every block of a valid (even) block size starts on a byte
      dequantize_contiguous_packed<D>(table, p.codes, p.output, p.output_index.offset, absmax, begin, end, select,
                                      halves, of_codes);
      return;
    }
  }
  for (std::int64_t i = begin; i < end; ++i) {
    store_rounded_double_as<D>(p.output, p.output_index.storage(i), dequantized_exact(table, code_at(p, i), absmax));
  }
}

BP_HD void dequantize_element(const CodeTable& table, const DequantizeParams& p, std::int64_t logical) {
  dequantize_element_in_block(table, p, logical, p.absmax[logical / p.blocksize]);
}

struct ConvertParams {
  const void* input = nullptr;
  DType input_dtype = DType::f32;
  StridedIndex input_index;
  void* output = nullptr;
  DType output_dtype = DType::f32;
  StridedIndex output_index;
  std::int64_t numel = 0;
};

BP_HD void convert_element(const ConvertParams& p, std::int64_t logical) {
  const float value = load_as_float(p.input, p.input_dtype, p.input_index.storage(logical));
  store_float(p.output, p.output_dtype, p.output_index.storage(logical), value);
}

}  // namespace bitparity
