#include "bitparity/reference/rounding.hpp"

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

namespace bitparity::reference {

namespace {

std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float float_of(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

float set_sticky(float truncated, bool inexact) {
  if (!inexact) return truncated;
  return float_of(bits_of(truncated) | 1u);
}

}  // namespace

float round_to_odd_f32(double exact) {
  float nearest = static_cast<float>(exact);
  if (static_cast<double>(nearest) == exact) return nearest;
  // Truncate: step back toward zero when rounding went away from zero.
  float truncated = nearest;
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(exact)) truncated = std::nextafter(nearest, 0.0f);
  if (std::isinf(truncated)) truncated = std::copysign(std::numeric_limits<float>::max(), truncated);
  return set_sticky(truncated, true);
}

float round_to_odd_f32(const mpfr_t exact) {
  const float truncated = mpfr_get_flt(exact, MPFR_RNDZ);
  mpfr_t back;
  mpfr_init2(back, 64);
  mpfr_set_flt(back, truncated, MPFR_RNDN);
  const bool inexact = mpfr_cmp(back, exact) != 0;
  mpfr_clear(back);
  return set_sticky(truncated, inexact);
}

std::uint16_t round_nearest_even_narrow(float value, int exponent_bits, int fraction_bits) {
  const std::uint16_t sign = std::signbit(value) ? static_cast<std::uint16_t>(1u << (exponent_bits + fraction_bits)) : 0;
  const std::uint16_t infinity = static_cast<std::uint16_t>(((1u << exponent_bits) - 1u) << fraction_bits);
  const double magnitude = std::fabs(static_cast<double>(value));
  if (std::isinf(magnitude)) return sign | infinity;
  if (magnitude == 0.0) return sign;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int emin = 1 - bias;
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent with f in [0.5, 1)
  const int unbiased = std::max(exponent - 1, emin);
  const double quantum = std::ldexp(1.0, unbiased - fraction_bits);
  // magnitude / quantum is exact (a power-of-two scaling); nearbyint rounds ties to even.
  const int previous = std::fegetround();
  std::fesetround(FE_TONEAREST);
  const double units = std::nearbyint(magnitude / quantum);
  std::fesetround(previous);
  const double rounded = units * quantum;
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, -fraction_bits), bias);
  if (rounded > largest) return sign | infinity;
  // Encode: find the representation of `rounded` exactly.
  if (rounded < std::ldexp(1.0, emin)) return sign | static_cast<std::uint16_t>(rounded / std::ldexp(1.0, emin - fraction_bits));
  int e;
  const double f = std::frexp(rounded, &e);  // rounded = f * 2^e
  const int biased = e - 1 + bias;
  const auto fraction = static_cast<std::uint32_t>((f * 2.0 - 1.0) * std::ldexp(1.0, fraction_bits));
  return sign | static_cast<std::uint16_t>((static_cast<std::uint32_t>(biased) << fraction_bits) | fraction);
}

double decode_narrow(std::uint16_t bits, int exponent_bits, int fraction_bits) {
  const bool negative = (bits >> (exponent_bits + fraction_bits)) & 1u;
  const std::uint32_t exponent_field = (bits >> fraction_bits) & ((1u << exponent_bits) - 1u);
  const std::uint32_t fraction = bits & ((1u << fraction_bits) - 1u);
  const int bias = (1 << (exponent_bits - 1)) - 1;
  double magnitude;
  if (exponent_field == (1u << exponent_bits) - 1u) {
    magnitude = fraction ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exponent_field == 0) {
    magnitude = std::ldexp(static_cast<double>(fraction), 1 - bias - fraction_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(fraction + (1u << fraction_bits)),
                           static_cast<int>(exponent_field) - bias - fraction_bits);
  }
  return negative ? -magnitude : magnitude;
}

std::uint32_t correctly_rounded_bits(double exact, DType dtype) {
  if (std::isnan(exact)) {
    return dtype == DType::f16 ? 0x7E00u : dtype == DType::bf16 ? 0x7FC0u : 0x7FC00000u;
  }
  switch (dtype) {
    case DType::f16: return round_nearest_even_narrow(round_to_odd_f32(exact), 5, 10);
    case DType::bf16: return round_nearest_even_narrow(round_to_odd_f32(exact), 8, 7);
    default: return bits_of(static_cast<float>(exact));  // one rounding from an exact double
  }
}

std::uint32_t correctly_rounded_bits(const mpfr_t exact, DType dtype) {
  if (mpfr_nan_p(exact)) return correctly_rounded_bits(std::numeric_limits<double>::quiet_NaN(), dtype);
  switch (dtype) {
    case DType::f16: return round_nearest_even_narrow(round_to_odd_f32(exact), 5, 10);
    case DType::bf16: return round_nearest_even_narrow(round_to_odd_f32(exact), 8, 7);
    default: return bits_of(mpfr_get_flt(exact, MPFR_RNDN));
  }
}

}  // namespace bitparity::reference
