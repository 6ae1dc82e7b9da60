#pragma once
// 8-bit dequantize's selection on the CPU into 16-bit words (f16, bf16), where the scalar selection
// makes one table load per code (16-bit words have no gather). With AVX-512 VBMI (taken where
// cpu_has_avx512vbmi2, the key paths' gate, which asks for VBMI too) the block's
// 256-entry table is split once into two byte planes (low and high bytes, four registers each), and
// every 64 codes become 64 outputs through two byte permutes (vpermt2b) per plane, a blend on bit 7
// and two unpacks: about half the work of the word permutes. With AVX-512 BW alone, and for a last 32
// codes, 32 codes take four word permutes (vpermt2w), one per quarter of the table, and three blends
// on each code's bits 6 and 7. Both only move the table's words (quant_body.hpp, SelectByCode), so
// the bits are the element body's: code_outputs_tests compares them with SelectByCode at every count,
// P2 with the strided path, which selects element by element. fp32 words keep the compiled loop's
// gathers.
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
