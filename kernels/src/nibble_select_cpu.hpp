#pragma once
// 4-bit dequantize's selection on the CPU: with AVX-512 (BW), every 32 code bytes become 64 outputs
// through two interleaving permutes and two permutes of the block's 16-entry table (vpermw, or
// vpermps for fp32), where the scalar selection makes 64 table loads; with AVX2, shuffles and
// permutes of 16 code bytes at a time. It only moves the table's
// words (quant_body.hpp, SelectByNibbles), so the bits are the element body's; P2 compares it with
// the strided path, which selects element by element.
#include <cstdint>

#include "bitparity/kernels/quant_body.hpp"
#include "cpu_features.hpp"

namespace bitparity::cpu {

// The first bytes - bytes % 32 (16-bit words) or bytes - bytes % 16 (fp32) whole bytes; returns how
// many it did. Only where cpu_has_avx512bw().
std::int64_t select_by_nibbles_avx512(const std::uint16_t* of_code, const std::uint8_t* codes, std::uint16_t* out,
                                      std::int64_t bytes);
std::int64_t select_by_nibbles_avx512(const float* of_code, const std::uint8_t* codes, float* out, std::int64_t bytes);

// The same with AVX2, 16 code bytes at a time: 16-bit words by two byte shuffles (vpshufb) of the
// table's low and high bytes, fp32 words by two permutes (vpermps) of its halves and a blend. Only
// where cpu_has_avx2().
std::int64_t select_by_nibbles_avx2(const std::uint16_t* of_code, const std::uint8_t* codes, std::uint16_t* out,
                                    std::int64_t bytes);
std::int64_t select_by_nibbles_avx2(const float* of_code, const std::uint8_t* codes, float* out, std::int64_t bytes);

// The launcher's selection: the vector one for whole vectors, SelectByNibbles for the rest.
struct SelectByNibblesVector {
  template <class Word>
  void operator()(const Word* of_code, const std::uint8_t* codes, Word* out, std::int64_t bytes) const {
    const std::int64_t done = cpu_has_avx512bw() ? select_by_nibbles_avx512(of_code, codes, out, bytes)
                              : cpu_has_avx2()   ? select_by_nibbles_avx2(of_code, codes, out, bytes)
                                                 : 0;
    SelectByNibbles{}(of_code, codes + done, out + 2 * done, bytes - done);
  }
};

}  // namespace bitparity::cpu
