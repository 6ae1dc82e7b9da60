#pragma once
// The CPU 8-bit step's old states (StatesOfCodes), and 8-bit dequantize into fp32, looked up with
// AVX-512 VBMI byte permutes (on CPUs that also have VBMI2, the one gate of the key paths), where the
// body's loops gather each code value or each output (a 16-lane gather takes about 20 cycles on
// Zen 5). The
// table's code values sit in four byte planes (CodeTable::code_value_planes, 4 registers each); 64
// codes pick their bytes from each plane with two two-register permutes and a blend on the code's
// top bit, and unpacks put the bytes back together as the values. The products are the body's:
// fl32(code value * absmax), for dequantize with its canonical NaN (dequantized_in_fp32).
// state_values_tests compares them with the body on every code.
#include <cstdint>

#include "bitparity/kernels/optim8_body.hpp"
#include "cpu_features.hpp"

namespace bitparity::cpu {

// The first count - count % 64 states; returns how many it did. Only where cpu_has_avx512vbmi2().
std::int64_t states_of_codes_avx512(const CodeTable& table, const std::uint8_t* codes, float absmax, float* out,
                                    std::int64_t count);

// Dequantize's fp32 outputs of the first count - count % 64 codes of one block (dequantized_in_fp32
// of each code's value); returns how many it did. Only where cpu_has_avx512vbmi2().
std::int64_t dequantized_f32_of_codes_avx512(const CodeTable& table, const std::uint8_t* codes, float absmax,
                                             float* out, std::int64_t count);

struct StatesOfCodesVector {
  void operator()(const CodeTable& table, const std::uint8_t* codes, float absmax, float* out, std::int64_t count) const {
    const std::int64_t done = cpu_has_avx512vbmi2() ? states_of_codes_avx512(table, codes, absmax, out, count) : 0;
    StatesOfCodes{}(table, codes + done, absmax, out + done, count - done);
  }
};

}  // namespace bitparity::cpu
