#pragma once
// An exact gradient sum rounded once to the gradient's dtype.
#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/exact_float_sum.hpp"

namespace bitparity::distributed {

inline float rounded_to(const ExactFloatSum& sum, DType dtype) {
  switch (dtype) {
    case DType::f16: return static_cast<float>(sum.rounded(11, -14, 65504.0));
    case DType::bf16: return static_cast<float>(sum.rounded(8, -126, 3.3895313892515355e38));
    default: return sum.to_float();
  }
}

}  // namespace bitparity::distributed
