#pragma once
// Absmax values for dequantize tests that compare the fp32-lane products with the exact ones.
#include <cmath>
#include <limits>
#include <vector>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {

// Absmax values that put code_value * absmax within a few fp32 ulps of a tie of f16 and bf16 (where
// a wrong sticky bit shows), at the edge of bf16's subnormals and of the fp32 lanes' range, and the
// specials.
inline std::vector<float> absmax_near_ties(const CodeTable& table) {
  std::vector<float> absmax = {0.0f, 1.0f, std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                               std::nanf(""), 0x1p-149f, 0x1p-126f, 0x1p-110f, 0x1p-24f, 65504.0f, 65520.0f};
  const auto around = [&](float centre, int ulps) {
    if (!(centre > 0.0f) || !std::isfinite(centre)) return;
    for (int d = -ulps; d <= ulps; ++d) absmax.push_back(float_from_bits(float_bits(centre) + static_cast<std::uint32_t>(d)));
  };
  around(0x1p-100f / table.smallest_magnitude, 3);  // both sides of the bf16 fp32-lane condition
  // Every fourth code of a 4-bit map, every 37th of an 8-bit one.
  const int codes = table.bits == 8 ? 256 : 16, step = table.bits == 8 ? 37 : 4;
  for (int code = 0; code < codes; code += step) {
    const float value = std::fabs(table.code_values[code]);
    if (value == 0.0f) continue;
    // f16 ties: midpoints between neighbours at several binades, subnormal ones included.
    for (const double tie : {1.0 + 0x1p-11, 0x1p-20 * 3, 1000.0 + 0.25, 0x1p-14 + 0x1p-25}) around(static_cast<float>(tie / value), 2);
    // bf16 ties, normal and subnormal.
    for (const double tie : {1.0 + 0x1p-8, 0x1p100 * (1.0 + 0x1p-8), 0x1p-130 + 0x1p-134, 0x1p-127 * 3}) {
      around(static_cast<float>(tie / value), 2);
    }
  }
  return absmax;
}

}  // namespace bitparity
