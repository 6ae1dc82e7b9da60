#pragma once
// Philox-4x32-10 (Salmon et al., SC'11), counter-based: the same (key, counter) gives the same
// bits on every device. Checked against the Random123 known-answer vectors.
#include <cstdint>

#include "bitparity/kernels/hd.hpp"

namespace bitparity {

struct Philox4x32 {
  std::uint32_t v[4];
};

BP_HD Philox4x32 philox4x32_10(Philox4x32 counter, std::uint32_t key0, std::uint32_t key1) {
  constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    const std::uint64_t product0 = static_cast<std::uint64_t>(kMul0) * counter.v[0];
    const std::uint64_t product1 = static_cast<std::uint64_t>(kMul1) * counter.v[2];
    const std::uint32_t hi0 = static_cast<std::uint32_t>(product0 >> 32), lo0 = static_cast<std::uint32_t>(product0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(product1 >> 32), lo1 = static_cast<std::uint32_t>(product1);
    counter = Philox4x32{{hi1 ^ counter.v[1] ^ key0, lo1, hi0 ^ counter.v[3] ^ key1, lo0}};
  }
  return counter;
}

// Uniform in [0, 1) with 24 random bits, exactly representable in fp32.
BP_HD float uniform_from_bits(std::uint32_t bits) {
  return static_cast<float>(bits >> 8) * 5.9604644775390625e-8f;  // 2^-24
}

// The stochastic-rounding draw for one element: keyed by (seed, stream, global element index),
// never by thread, block, shard or rank.
BP_HD float stochastic_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t global_index) {
  const Philox4x32 counter{{static_cast<std::uint32_t>(global_index), static_cast<std::uint32_t>(global_index >> 32),
                            static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}};
  const Philox4x32 out = philox4x32_10(counter, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  return uniform_from_bits(out.v[0]);
}

}  // namespace bitparity
