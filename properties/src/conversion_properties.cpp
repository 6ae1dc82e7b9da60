// P12: conversions, exhaustively. Every 16-bit pattern widened to fp32 and every one of the 2^32
// fp32 patterns narrowed to f16 and bf16, through the implementation under test.
//
// A narrowed result h of x is checked, not recomputed: it must carry x's sign, and |x| must lie
// in h's rounding interval [(prev + h)/2, (h + next)/2] (neighbours decoded exactly in double,
// the value after the largest finite being 2^(emax+1) as for rounding with unbounded exponent),
// a tie only when h is even. NaN must stay NaN with its sign.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <thread>
#include <vector>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/kernels/bits.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/property.hpp"
#include "bitparity/properties/show.hpp"
#include "bitparity/reference/rounding.hpp"

namespace bitparity::properties {

namespace {

using fixtures::HostTensor;

struct NarrowFormat {
  int exponent_bits, fraction_bits;
  std::vector<double> magnitude;  // exact value of every non-negative pattern, +inf past the finite ones
  std::uint32_t infinity_bits;
  double overflow_value;  // 2^(emax+1): where infinity sits for rounding purposes
};

NarrowFormat narrow_format(DType dtype) {
  NarrowFormat f;
  f.exponent_bits = dtype == DType::f16 ? 5 : 8;
  f.fraction_bits = dtype == DType::f16 ? 10 : 7;
  f.infinity_bits = ((1u << f.exponent_bits) - 1u) << f.fraction_bits;
  for (std::uint32_t bits = 0; bits <= f.infinity_bits; ++bits) {
    f.magnitude.push_back(reference::decode_narrow(static_cast<std::uint16_t>(bits), f.exponent_bits, f.fraction_bits));
  }
  f.overflow_value = std::ldexp(1.0, (1 << (f.exponent_bits - 1)));
  f.magnitude.back() = f.overflow_value;
  return f;
}

// True when h is the correctly rounded (nearest even) result of x.
bool is_correctly_rounded(const NarrowFormat& f, float x, std::uint32_t h) {
  const std::uint32_t sign_bit = 1u << (f.exponent_bits + f.fraction_bits);
  const bool x_negative = std::signbit(x);
  const bool h_negative = (h & sign_bit) != 0;
  const std::uint32_t magnitude_bits = h & (sign_bit - 1);
  if (std::isnan(x)) return magnitude_bits > f.infinity_bits && h_negative == x_negative;
  if (h_negative != x_negative || magnitude_bits > f.infinity_bits) return false;
  const double ax = std::fabs(static_cast<double>(x));
  if (std::isinf(ax)) return magnitude_bits == f.infinity_bits;
  const double value = f.magnitude[magnitude_bits];
  const double low = magnitude_bits == 0 ? 0.0 : (f.magnitude[magnitude_bits - 1] + value) / 2;
  const double high = magnitude_bits == f.infinity_bits ? std::numeric_limits<double>::infinity()
                                                        : (value + f.magnitude[magnitude_bits + 1]) / 2;
  const bool even = (magnitude_bits & 1u) == 0;
  if (ax < low || ax > high) return false;
  if ((ax == low && magnitude_bits != 0) || ax == high) return even;
  return true;
}

// The failing input of a sweep, the whole case of a saved one: a replay checks only it.
struct ConversionInput {
  bool narrowing = false;  // f32 -> dtype; otherwise dtype -> f32
  std::uint32_t bits = 0;
};

nlohmann::json encode_input(const ConversionInput& input) {
  return {{"direction", input.narrowing ? "narrow" : "widen"}, {"bits", input.bits}};
}

void decode_input(const nlohmann::json& j, ConversionInput& input) {
  if (!j.is_object() || !j.contains("direction") || !j.contains("bits") || !j.at("bits").is_number_unsigned() ||
      j.at("bits").get<std::uint64_t>() > 0xFFFFFFFFull) {
    throw CaseFileError("a conversion input needs 'direction' (narrow or widen) and 'bits' (a 32-bit pattern)");
  }
  const std::string direction = j.at("direction").is_string() ? j.at("direction").get<std::string>() : "";
  if (direction != "narrow" && direction != "widen") throw CaseFileError("'direction' must be narrow or widen");
  input.narrowing = direction == "narrow";
  input.bits = static_cast<std::uint32_t>(j.at("bits").get<std::uint64_t>());
  if (!input.narrowing && input.bits > 0xFFFF) throw CaseFileError("a widened pattern has 16 bits");
}

// Record the failing input (when recording) before the violation ends the case.
void keep_failing_input(const PropertyTarget& t, PropertyStats& stats, bool narrowing, std::uint32_t bits) {
  if (t.tape != nullptr && !t.tape->is_replaying()) {
    drawn<ConversionInput>(t, stats, "pattern", [&] { return ConversionInput{narrowing, bits}; });
  }
}

// dtype -> f32 of `patterns` (16-bit patterns).
void widening(const PropertyTarget& t, PropertyStats& stats, const NarrowFormat& f, const std::vector<std::uint16_t>& patterns) {
  const auto count = static_cast<std::int64_t>(patterns.size());
  HostTensor narrow = HostTensor::buffer(t.dtype, count), wide = HostTensor::buffer(DType::f32, count);
  std::memcpy(narrow.bytes().data(), patterns.data(), patterns.size() * 2);
  t.iut->convert(narrow.view(), wide.view(), {});
  const auto* result = reinterpret_cast<const float*>(wide.bytes().data());
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const std::uint32_t bits = patterns[i];
    const double expected = reference::decode_narrow(static_cast<std::uint16_t>(bits), f.exponent_bits, f.fraction_bits);
    const bool ok = std::isnan(expected) ? (std::isnan(result[i]) && std::signbit(result[i]) == ((bits >> 15) & 1u))
                                         : (static_cast<double>(result[i]) == expected &&
                                            std::signbit(result[i]) == std::signbit(expected));
    if (!ok) {
      std::ostringstream text;
      text << dtype_name(t.dtype) << " -> f32 of " << show_bits(bits, t.dtype) << " gave " << show_float(result[i])
           << ", exact value " << show_double(expected);
      keep_failing_input(t, stats, false, bits);
      report_violation(stats, 1, text.str());
    }
  }
}

std::vector<std::uint16_t> every_16bit_pattern() {
  std::vector<std::uint16_t> patterns(65536);
  for (std::uint32_t bits = 0; bits < 65536; ++bits) patterns[bits] = static_cast<std::uint16_t>(bits);
  return patterns;
}

void report_narrowing(const PropertyTarget& t, PropertyStats& stats, const NarrowFormat& f, std::uint32_t input,
                      std::uint32_t output) {
  const float x = float_from_bits(input);
  std::ostringstream text;
  text << "f32 -> " << dtype_name(t.dtype) << " of " << show_float(x) << " gave " << show_bits(output, t.dtype)
       << "; round-to-nearest-even gives "
       << show_bits(std::isnan(x) ? 0u : reference::round_nearest_even_narrow(x, f.exponent_bits, f.fraction_bits), t.dtype);
  keep_failing_input(t, stats, true, input);
  report_violation(stats, 1, text.str());
}

// Returns how many fp32 patterns it checked: all 2^32, or the chunks before the deadline.
std::uint64_t narrowing(const PropertyTarget& t, PropertyStats& stats, const NarrowFormat& f) {
  constexpr std::uint64_t kChunk = 1u << 22;
  HostTensor wide = HostTensor::buffer(DType::f32, kChunk), narrow = HostTensor::buffer(t.dtype, kChunk);
  auto* inputs = reinterpret_cast<std::uint32_t*>(wide.bytes().data());
  const auto* outputs = reinterpret_cast<const std::uint16_t*>(narrow.bytes().data());
  for (std::uint64_t start = 0; start < (1ull << 32); start += kChunk) {
    if (t.past_deadline()) {
      stats.incomplete = true;
      return start;
    }
    for (std::uint64_t i = 0; i < kChunk; ++i) inputs[i] = static_cast<std::uint32_t>(start + i);
    t.iut->convert(wide.view(), narrow.view(), {});
    // Verify in two halves on two threads; report the first failure in input order.
    std::int64_t first_bad[2] = {-1, -1};
    auto verify = [&](int half) {
      const std::uint64_t lo = half * kChunk / 2, hi = (half + 1) * kChunk / 2;
      for (std::uint64_t i = lo; i < hi; ++i) {
        if (!is_correctly_rounded(f, float_from_bits(inputs[i]), outputs[i])) {
          first_bad[half] = static_cast<std::int64_t>(i);
          return;
        }
      }
    };
    std::thread other(verify, 1);
    verify(0);
    other.join();
    const std::int64_t bad = first_bad[0] >= 0 ? first_bad[0] : first_bad[1];
    if (bad >= 0) report_narrowing(t, stats, f, inputs[bad], outputs[bad]);
    if (t.on_fraction) t.on_fraction(static_cast<double>(start + kChunk) / static_cast<double>(1ull << 32));
  }
  return 1ull << 32;
}

// A saved case: the one recorded pattern, through the implementation under test.
void replay_conversion(const PropertyTarget& t, PropertyStats& stats, const NarrowFormat& f) {
  const ConversionInput input = drawn<ConversionInput>(t, stats, "pattern", [] { return ConversionInput{}; });
  if (!input.narrowing) {
    widening(t, stats, f, {static_cast<std::uint16_t>(input.bits)});
  } else {
    HostTensor wide = HostTensor::buffer(DType::f32, 1), narrow = HostTensor::buffer(t.dtype, 1);
    std::memcpy(wide.bytes().data(), &input.bits, 4);
    t.iut->convert(wide.view(), narrow.view(), {});
    std::uint16_t output = 0;
    std::memcpy(&output, narrow.bytes().data(), 2);
    if (!is_correctly_rounded(f, float_from_bits(input.bits), output)) report_narrowing(t, stats, f, input.bits, output);
  }
  stats.pass_case(1);
}

void conversions(const PropertyTarget& t, PropertyStats& stats) {
  const NarrowFormat f = narrow_format(t.dtype);
  if (t.tape != nullptr && t.tape->is_replaying()) {
    replay_conversion(t, stats, f);
    return;
  }
  widening(t, stats, f, every_16bit_pattern());
  const std::uint64_t narrowed = narrowing(t, stats, f);
  if (!stats.incomplete) {
    stats.pass_case((1ll << 32) + 65536);
  } else if (!stats.failed) {
    // A sweep cut at its deadline is no whole case: only the patterns it checked are claimed.
    stats.elements += 65536 + static_cast<std::int64_t>(narrowed);
  }
}

}  // namespace

void append_conversion_properties(std::vector<PropertyDef>& catalogue) {
  catalogue.push_back({"P12", "conversions", fixtures::Suite::conversions,
                       "every 16-bit value widens exactly; every fp32 value narrows to nearest even (NaN stays NaN)",
                       false, true, conversions});
}

}  // namespace bitparity::properties
