#pragma once
// The nearest-code decision of 4-bit maps on the CPU with AVX-512: the search of the kernel body
// (count the thresholds below v, by steps first_step, first_step/2, ..., 1) on 16 values at once,
// each level's candidates picked from one register by a permute (CodeTable::thresholds_by_level),
// where the body's finer index makes a gather per value. It computes the same count, so the same
// codes: vector_path_tests puts it on every threshold's neighbours, P2 compares it with the strided
// path. (For 8-bit maps the same search over 16 registers was no faster than the gathers here.)
#include <cstdint>

#include "bitparity/kernels/quant_body.hpp"
#include "cpu_features.hpp"

namespace bitparity::cpu {

// Codes of the first count - count % 16 values, for maps of at most 16 distinct values (first_step
// at most 8); returns how many it decided (0 for other maps). Only where cpu_has_avx512bw().
std::int64_t nearest_codes_avx512(const CodeTable& table, const float* v, std::int32_t* chosen, std::int64_t count);

// nearest_code_by_bucket on 8 values at once with AVX2, the 8 entries loaded by scalar loads, where
// the compiled loop gathers them (vpgatherdd, about 1.3x slower on Zen 3). The same bucket, compare
// and selects, so the same codes. Decides the first count - count % 8 values where
// table.nearest_ready; returns how many.
std::int64_t nearest_codes_by_bucket_avx2(const CodeTable& table, const float* v, std::int32_t* chosen, std::int64_t count);

// nearest_codes_avx512's search with AVX2 on 8 values at once, each level's candidates permuted
// from the two halves of thresholds_by_level (vpermps) and blended where a level reaches the upper
// half; the count becomes the code the same way. The same count, so the same codes. For maps of at
// most 16 distinct values; returns how many it decided (0 for other maps).
std::int64_t nearest_codes_search_avx2(const CodeTable& table, const float* v, std::int32_t* chosen, std::int64_t count);

// The launcher's decision: a vector path for whole vectors, DecideNearest for the rest. Machines
// with AVX-512 keep the compiled 16-lane gathers for 8-bit maps: on a Zen 5 the AVX2 path decided
// 4096 values in L1 alone in 0.34 ns each where the gathers took 0.38, yet in the launcher 8-bit
// quantize of 2^24 values took 8.4 ms (fp32) and 5.8 ms (bf16) with it, 4.5 and 4.4 with the gathers.
struct DecideNearestVector {
  void operator()(const CodeTable& table, const float* v, std::int32_t* chosen, std::int64_t count) const {
    const std::int64_t done = cpu_has_avx512bw()   ? nearest_codes_avx512(table, v, chosen, count)
                              : !cpu_has_avx2()     ? 0
                              : table.first_step <= 8 ? nearest_codes_search_avx2(table, v, chosen, count)
                                                    : nearest_codes_by_bucket_avx2(table, v, chosen, count);
    DecideNearest{}(table, v + done, chosen + done, count - done);
  }
};

}  // namespace bitparity::cpu
