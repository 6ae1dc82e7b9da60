#pragma once
#include <cstdint>
#include <cstring>

#include "bitparity/kernels/hd.hpp"

namespace bitparity {

// Leading zero bits of a nonzero 64-bit word (undefined for 0, as the builtins are).
BP_HD int count_leading_zeros(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

BP_HD std::uint32_t float_bits(float value) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(value);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
#endif
}

BP_HD float float_from_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
#endif
}

BP_HD std::uint64_t double_bits(double value) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(value));
#else
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
#endif
}

BP_HD bool is_nan_bits(std::uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }

inline constexpr std::uint32_t kCanonicalNanF32 = 0x7FC00000u;

}  // namespace bitparity
