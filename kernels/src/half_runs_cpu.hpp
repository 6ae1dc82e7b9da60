#pragma once
// f16 runs widened and narrowed by the CPU's conversion instructions (F16C or AVX-512 F: vcvtph2ps,
// vcvtps2ph with round to nearest even), where the compiled element loops build each value from its bits.
// Both are exact IEEE conversions, so they give HalfRunsByElement's bits: vector_path_tests checks
// every f16 pattern and every rounding boundary. Only a signalling NaN differs: it widens quiet.
#include <cstdint>

#include "bitparity/kernels/element_access.hpp"
#include "cpu_features.hpp"

namespace bitparity::cpu {

// The first count - count % 8 elements; return how many they converted. Only where cpu_has_f16c().
std::int64_t widen_f16_by_f16c(const std::uint16_t* in, float* out, std::int64_t count);
std::int64_t narrow_to_f16_by_f16c(const float* in, std::uint16_t* out, std::int64_t count);
// The same for the first count - count % 16, 16 lanes at a time. Only where cpu_has_avx512bw().
std::int64_t widen_f16_by_avx512(const std::uint16_t* in, float* out, std::int64_t count);
std::int64_t narrow_to_f16_by_avx512(const float* in, std::uint16_t* out, std::int64_t count);

// The launchers' runs: the widest instructions for whole vectors, then 8 lanes, then the body's
// loops for the rest.
struct HalfRunsF16C {
  void widen(const std::uint16_t* in, float* out, std::int64_t count) const {
    std::int64_t done = cpu_has_avx512bw() ? widen_f16_by_avx512(in, out, count) : 0;
    if (cpu_has_f16c()) done += widen_f16_by_f16c(in + done, out + done, count - done);
    HalfRunsByElement{}.widen(in + done, out + done, count - done);
  }
  void narrow(const float* in, std::uint16_t* out, std::int64_t count) const {
    std::int64_t done = cpu_has_avx512bw() ? narrow_to_f16_by_avx512(in, out, count) : 0;
    if (cpu_has_f16c()) done += narrow_to_f16_by_f16c(in + done, out + done, count - done);
    HalfRunsByElement{}.narrow(in + done, out + done, count - done);
  }
};

}  // namespace bitparity::cpu
