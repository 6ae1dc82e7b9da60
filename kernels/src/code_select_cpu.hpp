#pragma once
// 8-bit dequantize's selection on the CPU into 16-bit words (f16, bf16): with AVX-512 (BW), every 32
// codes become 32 outputs through four two-register permutes (vpermt2w) of the block's 256-entry
// table, one per quarter of the codes, and three blends on each code's bits 6 and 7, where the
// scalar selection makes 32 table loads (16-bit words have no gather). It only moves the table's
// words (quant_body.hpp, SelectByCode), so the bits are the element body's; P2 compares it with the
// strided path, which selects element by element. fp32 words keep the compiled loop's gathers.
#include <cstdint>

#include "bitparity/kernels/quant_body.hpp"
#include "cpu_features.hpp"

namespace bitparity::cpu {

// The first count - count % 32 outputs; returns how many it did. Only where cpu_has_avx512bw().
std::int64_t select_by_code_avx512(const std::uint16_t* of_code, const std::uint8_t* codes, std::uint16_t* out,
                                   std::int64_t count);

// The launcher's selection: the vector one for whole vectors of 16-bit words, SelectByCode for the
// rest and for fp32.
struct SelectByCodeVector {
  template <class Word>
  void operator()(const Word* of_code, const std::uint8_t* codes, Word* out, std::int64_t count) const {
    std::int64_t done = 0;
    if constexpr (sizeof(Word) == 2) {
      if (cpu_has_avx512bw()) done = select_by_code_avx512(of_code, codes, out, count);
    }
    SelectByCode{}(of_code, codes + done, out + done, count - done);
  }
};

}  // namespace bitparity::cpu
