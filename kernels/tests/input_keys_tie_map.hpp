#pragma once
// The map input_keys_tests and input_keys_f32_tests share: a 4-bit map whose thresholds include +0
// and the fp32 subnormal -2^-149, the only thresholds whose edge times an absmax can be an input
// value (bf16, fp32): there x / absmax equals the edge, and fl32 rounds the tie to even. Values a
// factor 2^29 apart at most, for exact midpoints. Registering it again returns the same format.
#include <cmath>
#include <vector>

#include "bitparity/kernels/code_map.hpp"

namespace bitparity {

inline QuantFormat input_keys_tie_format() {
  std::vector<float> values = {0.0f, 0.0f};
  for (const int exponent : {-149, -120, -91, -62, -33, -4, 0}) {
    values.push_back(std::ldexp(1.0f, exponent));
    values.push_back(-std::ldexp(1.0f, exponent));
  }
  return register_code_map(CodeMap{"input-keys-ties", 4, values, "input_keys_tests: thresholds at 0 and -2^-149"});
}

}  // namespace bitparity
