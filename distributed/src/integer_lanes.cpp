#include "bitparity/distributed/integer_lanes.hpp"

namespace bitparity::distributed {

namespace {

constexpr std::uint64_t kDigitMask = 0xFFFFFFFFu;

void limbs_to_digits(const std::uint64_t* limbs, int limb_count, std::uint64_t* lanes) {
  for (int i = 0; i < limb_count; ++i) {
    lanes[2 * i] = limbs[i] & kDigitMask;
    lanes[2 * i + 1] = limbs[i] >> 32;
  }
}

// Summed digits (each below 2^63) carried back into limbs, modulo 2^(64 * limb_count).
void digits_to_limbs(const std::uint64_t* lanes, int limb_count, std::uint64_t* limbs) {
  std::uint64_t carry = 0;
  for (int i = 0; i < limb_count; ++i) {
    std::uint64_t halves[2];
    for (int h = 0; h < 2; ++h) {
      const std::uint64_t lane = lanes[2 * i + h];
      // lane + carry may exceed 2^64 only for more than 2^31 ranks; split before adding.
      const std::uint64_t low = (lane & kDigitMask) + (carry & kDigitMask);
      halves[h] = low & kDigitMask;
      carry = (lane >> 32) + (carry >> 32) + (low >> 32);
    }
    limbs[i] = halves[0] | (halves[1] << 32);
  }
}

}  // namespace

void encode_lanes(const ExactFloatSum* values, std::size_t count, std::uint64_t* lanes) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t* out = lanes + i * kFloatSumLanes;
    limbs_to_digits(values[i].limb, ExactFloatSum::kLimbs, out);
    out[2 * ExactFloatSum::kLimbs + 0] = (values[i].special & ExactFloatSum::kPositiveInfinity) != 0 ? 1 : 0;
    out[2 * ExactFloatSum::kLimbs + 1] = (values[i].special & ExactFloatSum::kNegativeInfinity) != 0 ? 1 : 0;
    out[2 * ExactFloatSum::kLimbs + 2] = (values[i].special & ExactFloatSum::kNaN) != 0 ? 1 : 0;
  }
}

void decode_lanes(const std::uint64_t* lanes, std::size_t count, ExactFloatSum* values) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t* in = lanes + i * kFloatSumLanes;
    ExactFloatSum value;
    digits_to_limbs(in, ExactFloatSum::kLimbs, value.limb);
    if (in[2 * ExactFloatSum::kLimbs + 0] != 0) value.special |= ExactFloatSum::kPositiveInfinity;
    if (in[2 * ExactFloatSum::kLimbs + 1] != 0) value.special |= ExactFloatSum::kNegativeInfinity;
    if (in[2 * ExactFloatSum::kLimbs + 2] != 0) value.special |= ExactFloatSum::kNaN;
    values[i] = value;
  }
}

void encode_lanes(const ExactSquareSum* values, std::size_t count, std::uint64_t* lanes) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t* out = lanes + i * kSquareSumLanes;
    limbs_to_digits(values[i].limb, ExactSquareSum::kLimbs, out);
    out[2 * ExactSquareSum::kLimbs + 0] = (values[i].special & ExactSquareSum::kInfinity) != 0 ? 1 : 0;
    out[2 * ExactSquareSum::kLimbs + 1] = (values[i].special & ExactSquareSum::kNaN) != 0 ? 1 : 0;
  }
}

void decode_lanes(const std::uint64_t* lanes, std::size_t count, ExactSquareSum* values) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t* in = lanes + i * kSquareSumLanes;
    ExactSquareSum value;
    digits_to_limbs(in, ExactSquareSum::kLimbs, value.limb);
    if (in[2 * ExactSquareSum::kLimbs + 0] != 0) value.special |= ExactSquareSum::kInfinity;
    if (in[2 * ExactSquareSum::kLimbs + 1] != 0) value.special |= ExactSquareSum::kNaN;
    values[i] = value;
  }
}

}  // namespace bitparity::distributed
