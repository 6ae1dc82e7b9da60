#pragma once
// An 8-bit dequantize block's table of 256 f16 or bf16 outputs (OutputsOfCodes) in AVX-512 lanes.
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

// The 256 outputs of `code_values` times `absmax`, as f16 (half) or bf16 words; NaN products as the
// canonical NaN. Only where cpu_has_avx512bw() and, for bf16, products_round_in_fp32.
void outputs_of_codes_avx512(const float* code_values, float absmax, bool half, std::uint16_t* of_code);

// The launcher's table: the vector one for 16-bit words where it applies, the body's otherwise.
struct OutputsOfCodesVector {
  template <DType D, class HalfRuns>
  void compute(const CodeTable& table, float absmax, OutputWord<D>* of_code, const HalfRuns& halves) const {
    if constexpr (D != DType::f32) {
      if (cpu_has_avx512bw() && products_round_in_fp32<D>(table, absmax)) {
        outputs_of_codes_avx512(table.code_values, absmax, D == DType::f16, of_code);
        return;
      }
    }
    OutputsOfCodes{}.compute<D>(table, absmax, of_code, halves);
  }
};

}  // namespace bitparity::cpu
