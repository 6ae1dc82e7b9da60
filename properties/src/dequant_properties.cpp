// P7d: dequantize alone, on codes and block absmax values no quantizer had to produce: every code
// of the map, fp32 absmax with a full mantissa (as 8-bit optimizer states hold), subnormal, zero
// and overflowing ones. It needs only the dequantize family, so a library that offers no quantize
// for a map (bitsandbytes' 4-bit CPU functions) is still checked, and its failures are explained.
#include <rapidcheck.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/properties/show.hpp"
#include "bitparity/reference/rounding.hpp"
#include "quant_harness.hpp"

namespace bitparity::properties {

namespace {

struct DrawnBlocks {
  std::vector<std::int64_t> codes;  // one per element, by logical index
  std::vector<float> absmax;        // one per block
};

// Codes from a drawn seed: every code of the map, and one block in six holds a single code
// throughout (a constant block, the largest code's overflow, code 8 of fp4 everywhere).
std::vector<std::int64_t> synthesize_codes(std::uint64_t seed, std::int64_t n, std::int64_t blocksize, int bits) {
  std::mt19937_64 random(seed);
  const auto code_count = static_cast<std::uint64_t>(1) << bits;
  std::vector<std::int64_t> codes(static_cast<std::size_t>(n));
  for (std::int64_t begin = 0; begin < n; begin += blocksize) {
    const bool constant = random() % 6 == 0;
    const auto fixed = static_cast<std::int64_t>(random() % code_count);
    for (std::int64_t i = begin; i < std::min(n, begin + blocksize); ++i) {
      codes[static_cast<std::size_t>(i)] = constant ? fixed : static_cast<std::int64_t>(random() % code_count);
    }
  }
  return codes;
}

std::vector<std::uint8_t> packed(const std::vector<std::int64_t>& codes, int bits) {
  if (bits == 8) return {codes.begin(), codes.end()};
  std::vector<std::uint8_t> bytes((codes.size() + 1) / 2, 0);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    bytes[i / 2] |= static_cast<std::uint8_t>(i % 2 == 0 ? codes[i] << 4 : codes[i]);
  }
  return bytes;
}

// An absmax that puts `code_value * absmax` within one fp32 rounding of a tie of the 16-bit dtype
// (a value halfway between two of its neighbours): there one rounding and two (to fp32 first)
// differ, which random absmax values reach once in 2^13 (f16) to 2^16 (bf16) elements.
float absmax_near_tie(float code_value, DType dtype) {
  const int mantissa_bits = dtype == DType::bf16 ? 7 : 10;
  const double q = round_to_dtype(std::ldexp(1.0 + *rc::gen::inRange<std::uint32_t>(0, 1u << 23) * 0x1p-23,
                                             *rc::gen::inRange(-14, 15)), dtype);
  int exponent = 0;
  std::frexp(q, &exponent);
  const double tie = q + std::ldexp(1.0, exponent - 1 - mantissa_bits - 1);
  const double absmax = tie / std::fabs(static_cast<double>(code_value));
  // A tiny code value (a map of the user's) may need an absmax beyond fp32: no tie is reachable.
  return absmax <= std::numeric_limits<float>::max() ? static_cast<float>(absmax) : draw_block_absmax(dtype);
}

// The block whose absmax, times the element's code value and rounded as the implementation must,
// gives `actual`: the element's own block first, then every other; -1 when none does.
std::int64_t block_that_gives(const reference::FormatReference& ref, std::uint8_t code, const std::vector<float>& absmax,
                              std::int64_t own, DType dtype, reference::DequantizeRounding rounding, std::uint32_t actual) {
  const auto gives = [&](std::size_t b) {
    const std::uint8_t one_code[] = {code};
    const float one_absmax[] = {absmax[b]};
    return reference::reference_dequantize(one_code, one_absmax, ref, 1, dtype, rounding)[0] == actual;
  };
  if (gives(static_cast<std::size_t>(own))) return own;
  for (std::size_t b = 0; b < absmax.size(); ++b) {
    if (static_cast<std::int64_t>(b) != own && float_bits(absmax[b]) != float_bits(absmax[static_cast<std::size_t>(own)]) && gives(b)) {
      return static_cast<std::int64_t>(b);
    }
  }
  return -1;
}

// What the differing outputs are, when something simple explains all of them: the product rounded
// to fp32 before the output dtype (two roundings), another block's absmax (a block index computed
// wrongly, as a kernel that indexes absmax by row and column can), another registered map of the
// same width (a map difference), or a zero of the other sign. Two roundings is tried first: on a
// coarse output grid a neighbouring map's values can round to the same outputs by coincidence.
std::string explanation(const FormatEntry& format, const std::vector<std::uint8_t>& codes, const std::vector<float>& absmax,
                        std::int64_t blocksize, DType dtype, reference::DequantizeRounding rounding,
                        const std::vector<std::uint32_t>& expected, const std::vector<std::uint32_t>& actual) {
  const reference::FormatReference& ref = format_reference(format.format);
  bool twice = dtype != DType::f32 && rounding == reference::DequantizeRounding::once, zero_sign = true;
  const std::uint32_t sign = dtype == DType::f32 ? 0x80000000u : 0x8000u;
  bool other_block = absmax.size() > 1;
  std::int64_t first_moved = -1, first_used = -1, searched = 0;
  // The search costs a reference call per block per element: the first kSearched differing ones.
  constexpr std::int64_t kSearched = 256;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == actual[i]) continue;
    const float product = static_cast<float>(ref.code_value(codes[i]) * static_cast<double>(absmax[i / blocksize]));
    twice = twice && reference::correctly_rounded_bits(product, dtype) == actual[i];
    zero_sign = zero_sign && (expected[i] & ~sign) == 0 && (actual[i] & ~sign) == 0;
    if (other_block && searched++ < kSearched) {
      const auto own = static_cast<std::int64_t>(i) / blocksize;
      const std::int64_t used = block_that_gives(ref, codes[i], absmax, own, dtype, rounding, actual[i]);
      other_block = used >= 0 && used != own;
      // A zero output is given by any block whose absmax is 0 or tiny: it supports no block of its own.
      const bool telling = (actual[i] & ~sign) != 0;
      if (other_block && telling && first_moved < 0) first_moved = static_cast<std::int64_t>(i), first_used = used;
    }
  }
  if (twice) {
    return std::string("; every differing output is the product rounded to fp32 first, then to ") + dtype_name(dtype) +
           " (two roundings; a library that does this on purpose declares BITPARITY_CONVENTION_DEQUANTIZE_ROUNDS_F32_PRODUCT)";
  }
  if (other_block && first_moved >= 0) {
    std::ostringstream text;
    text << "; another block's absmax: " << (searched > kSearched ? "each of the first 256 differing outputs" : "every differing output")
         << " is its code value times the absmax of a block other than its own (element "
         << first_moved << ", of block " << first_moved / blocksize << ", used block " << first_used
         << "'s): the block of an element is computed wrongly";
    return text.str();
  }
  std::vector<const FormatEntry*> fitting;
  for (const FormatEntry& other : quant_registry()) {
    if (other.bits != format.bits || other.format == format.format) continue;
    if (reference::reference_dequantize(codes, absmax, format_reference(other.format), blocksize, dtype, rounding) == actual) {
      fitting.push_back(&other);
    }
  }
  // Zeros of the other sign fit every map whose zero code has that sign (every map, where the
  // absmax is 0): one is named only when it alone fits.
  if (zero_sign) {
    return "; only the sign of zero differs: the map's zero code has the other sign in the library (a map difference" +
           (fitting.size() == 1 ? "; map '" + fitting.front()->name + "' gives exactly these outputs)" : std::string(")"));
  }
  if (fitting.empty()) return "";
  const CodeMap& mine = code_map(format.format);
  const CodeMap& theirs = code_map(fitting.front()->format);
  std::int64_t entries = 0;
  std::size_t first = 0;
  for (std::size_t c = 0; c < mine.values.size(); ++c) {
    if (float_bits(mine.values[c]) != float_bits(theirs.values[c]) && entries++ == 0) first = c;
  }
  std::ostringstream text;
  text << "; a map difference: every output is what map '" << fitting.front()->name << "' gives";
  // Several maps fit when the case's codes miss the entries where they differ: the case cannot tell.
  if (fitting.size() > 1) {
    text << " (as do";
    for (std::size_t k = 1; k < fitting.size(); ++k) text << (k == 1 ? " '" : ", '") << fitting[k]->name << "'";
    text << ": the case's codes do not tell them apart)";
  }
  text << ", which differs from '" << format.name << "' in " << entries << " entries (code " << first << ": "
       << show_float(theirs.values[first]) << " there, " << show_float(mine.values[first]) << " here)";
  return text.str();
}

void dequantization(const PropertyTarget& t, PropertyStats& stats) {
  const FormatEntry& format = *t.format;
  const auto shape = drawn<std::vector<std::int64_t>>(t, stats, "shape", [&] {
    return draw_shape(draw_numel(t.blocksize, 4 * t.size_scale, true), 4);
  });
  stats.note(describe_shape(shape));  // a library given rows and columns may index blocks by them
  std::int64_t n = 1;
  for (const auto size : shape) n *= size;
  const std::int64_t blocks = block_count(n, t.blocksize);
  const std::vector<std::int64_t> codes = drawn<CodesInput>(t, stats, "codes", [&] {
    return CodesInput{synthesize_codes(*rc::gen::arbitrary<std::uint64_t>(), n, t.blocksize, format.bits)};
  }).codes;
  if (static_cast<std::int64_t>(codes.size()) != n) {
    throw CaseFileError("the case holds " + std::to_string(codes.size()) + " codes; its shape needs " + std::to_string(n));
  }
  for (const auto code : codes) {
    if (code < 0 || code >= (1 << format.bits)) {
      throw CaseFileError("code " + std::to_string(code) + " is not a " + std::to_string(format.bits) + "-bit code");
    }
  }
  const DType out_dtype = t.dtype;  // the target's dtype is the one dequantize writes: one row per output dtype
  const CodeMap& map = code_map(format.format);
  const std::vector<float> absmax = drawn<ValuesInput>(t, stats, "absmax", [&] {
    ValuesInput input{DType::f32, {}};
    for (std::int64_t b = 0; b < blocks; ++b) {
      const float first_value = map.values[static_cast<std::size_t>(codes[static_cast<std::size_t>(b * t.blocksize)])];
      const bool near_tie = out_dtype != DType::f32 && first_value != 0.0f && *rc::gen::weightedElement<bool>({{1, true}, {2, false}});
      input.values.push_back(near_tie ? absmax_near_tie(first_value, out_dtype) : draw_block_absmax(t.dtype));
    }
    return input;
  }).values;
  if (static_cast<std::int64_t>(absmax.size()) != blocks) {
    throw CaseFileError("the case holds " + std::to_string(absmax.size()) + " absmax values; its shape needs " +
                        std::to_string(blocks));
  }
  for (const float a : absmax) {
    // -0 included: no quantizer writes it, and the sign of a zero output would then be judged.
    if (!(a >= 0.0f) || !std::isfinite(a) || std::signbit(a)) {
      throw CaseFileError("a block absmax must be finite and +0 or more, not " + show_float(a));
    }
  }

  QuantOutput quantized;
  quantized.codes = packed(codes, format.bits);
  quantized.absmax = absmax;
  const fixtures::HostTensor out = run_dequantize(*t.iut, quantized, format, t.blocksize, out_dtype, contiguous_layout(shape), {});
  const std::vector<std::uint8_t> code_bytes(codes.begin(), codes.end());
  const reference::DequantizeRounding rounding = declared_dequantize_rounding(*t.iut);
  const auto expected = [&] {
    const ReferenceTimer timer(stats);
    return reference::reference_dequantize(code_bytes, absmax, format_reference(format.format), t.blocksize, out_dtype, rounding);
  }();
  const std::vector<std::uint32_t> actual = fixtures::read_logical_bits(out.view());
  std::int64_t differing = 0, first = -1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i] && differing++ == 0) first = static_cast<std::int64_t>(i);
  }
  if (differing > 0) {
    const auto f = static_cast<std::size_t>(first);
    std::ostringstream text;
    const bool declared = rounding == reference::DequantizeRounding::via_f32_product && out_dtype != DType::f32;
    text << dequantize_check_name(rounding, out_dtype) << ": " << differing << " of " << n << " elements differ; first: element "
         << first << ", code " << codes[f] << " (" << show_float(code_map(format.format).values[codes[f]]) << ") times absmax "
         << show_float(absmax[f / t.blocksize]) << " gives " << show_bits(actual[f], out_dtype)
         << (declared ? ", as declared " : ", correctly rounded ") << show_bits(expected[f], out_dtype)
         << explanation(format, code_bytes, absmax, t.blocksize, out_dtype, rounding, expected, actual);
    report_violation(stats, differing, text.str());
  }
  stats.pass_case(n);
}

}  // namespace

void append_dequantization_properties(std::vector<PropertyDef>& catalogue) {
  catalogue.push_back({"P7d", "dequantization", fixtures::Suite::quant,
                       "any codes and any block absmax (full fp32 mantissas, subnormal, zero, overflowing) dequantize "
                       "to code value * absmax rounded once",
                       false, false, dequantization, {fixtures::OperationFamily::dequantize}});
}

}  // namespace bitparity::properties
