#pragma once
// A dequantize block's table of f16 or bf16 outputs (OutputsOfCodes: 256 for 8-bit codes, 16 for 4-bit)
// in AVX-512 lanes.
// The body rounds each product to odd from the round-to-nearest product and its fma error term, in
// about a dozen operations, then narrows in a second loop. Here the product is taken toward zero
// (embedded rounding), the error term of that product says whether it was inexact, and the last bit
// is set where it was: the same round-to-odd value in four operations, narrowed in the same
// register. Where the body's error term is exact (products of at least 2^-101, ARITHMETIC.md) the
// two agree bit for bit; below, f16 rounds either to zero and bf16 blocks take the body
// (products_round_in_fp32). code_outputs_tests compares the two over every map and edge absmaxes.
#include <cstdint>

#include "bitparity/kernels/quant_body.hpp"
#include "cpu_features.hpp"

namespace bitparity::cpu {

// The outputs of the first `codes` (256 or 16) `code_values` times `absmax`, as f16 (half) or bf16
// words; NaN products as the canonical NaN. Only where cpu_has_avx512bw() and, for bf16,
// products_round_in_fp32.
void outputs_of_codes_avx512(const float* code_values, float absmax, bool half, std::uint16_t* of_code, int codes = 256);

// The launcher's table: the vector one for 16-bit words where it applies, the body's otherwise.
struct OutputsOfCodesVector {
  template <DType D, class HalfRuns>
  void compute(const CodeTable& table, float absmax, OutputWord<D>* of_code, const HalfRuns& halves,
               int codes = 256) const {
    if constexpr (D != DType::f32) {
      if (cpu_has_avx512bw() && products_round_in_fp32<D>(table, absmax)) {
        outputs_of_codes_avx512(table.code_values, absmax, D == DType::f16, of_code, codes);
        return;
      }
    }
    OutputsOfCodes{}.compute<D>(table, absmax, of_code, halves, codes);
  }
};

}  // namespace bitparity::cpu
