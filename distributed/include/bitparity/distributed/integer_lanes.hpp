#pragma once
// Exact accumulators as integer lanes, for communicators whose only reduction is an integer sum
// (NCCL has no user-defined operations). Each 64-bit limb travels as two 32-bit digits, each in a
// uint64 lane; flags travel as 0/1 counts. Adding lanes of up to 2^31 ranks cannot overflow and is
// order-free, and decoding (carrying the digits back into limbs, modulo the accumulator's width)
// gives exactly the merge of the accumulators. Two's complement limbs wrap the same way the merge does.
#include <cstddef>
#include <cstdint>

#include "bitparity/kernels/exact_float_sum.hpp"
#include "bitparity/kernels/exact_sum.hpp"

namespace bitparity::distributed {

inline constexpr std::size_t kFloatSumLanes = 2 * ExactFloatSum::kLimbs + 3;  // digits, then +inf, -inf, NaN
inline constexpr std::size_t kSquareSumLanes = 2 * ExactSquareSum::kLimbs + 2;  // digits, then inf, NaN

void encode_lanes(const ExactFloatSum* values, std::size_t count, std::uint64_t* lanes);
void decode_lanes(const std::uint64_t* lanes, std::size_t count, ExactFloatSum* values);
void encode_lanes(const ExactSquareSum* values, std::size_t count, std::uint64_t* lanes);
void decode_lanes(const std::uint64_t* lanes, std::size_t count, ExactSquareSum* values);

}  // namespace bitparity::distributed
