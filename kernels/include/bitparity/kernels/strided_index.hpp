#pragma once
#include <cstdint>

#include "bitparity/kernels/hd.hpp"

namespace bitparity {

inline constexpr int kMaxDims = 8;

// Logical (row-major, last dimension fastest) to storage index mapping, 64-bit throughout.
// Plain data so that it can be passed to a CUDA kernel by value.
struct StridedIndex {
  int ndim = 0;
  std::int64_t sizes[kMaxDims] = {};
  std::int64_t strides[kMaxDims] = {};
  std::int64_t offset = 0;
  bool contiguous = true;  // strides are row-major contiguous: storage = offset + logical

  BP_HD std::int64_t numel() const {
    std::int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= sizes[d];
    return n;
  }

  BP_HD std::int64_t storage(std::int64_t logical) const {
    if (contiguous) return offset + logical;
    std::int64_t at = offset;
    for (int d = ndim - 1; d >= 0; --d) {
      const std::int64_t size = sizes[d];
      const std::int64_t coordinate = logical % size;
      logical /= size;
      at += coordinate * strides[d];
    }
    return at;
  }
};

}  // namespace bitparity
