#pragma once
// Correct rounding of exact values to fp32 and the 16-bit formats, written independently of the
// kernels' conversions. 16-bit results go through round-to-odd fp32 first, then round to nearest
// even: the odd sticky bit makes the two roundings equal to one (never through an RNE float).
#include <cstdint>

#include <mpfr.h>

#include "bitparity/kernels/dtype.hpp"

namespace bitparity::reference {

// Round-to-odd of an exact value to fp32: truncate, then set the last bit if anything was lost.
float round_to_odd_f32(double exact);
float round_to_odd_f32(const mpfr_t exact);

// Round a finite fp32 value (or infinity) to nearest even in a format with `exponent_bits` and
// `fraction_bits`, by scaling to the format's quantum and rounding to an integer.
std::uint16_t round_nearest_even_narrow(float value, int exponent_bits, int fraction_bits);

// The bits of the correctly rounded value of `exact` in `dtype` (f32, f16 or bf16); a NaN maps to
// the dtype's canonical quiet NaN (the kernels' documented NaN policy for computed results).
std::uint32_t correctly_rounded_bits(double exact, DType dtype);
std::uint32_t correctly_rounded_bits(const mpfr_t exact, DType dtype);

// Exact value of the bits of a 16-bit float (independent decoding by scaling).
double decode_narrow(std::uint16_t bits, int exponent_bits, int fraction_bits);

}  // namespace bitparity::reference
