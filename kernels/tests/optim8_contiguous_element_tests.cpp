// The CUDA warp kernel's element body of the 8-bit step (optim8_element_contiguous and
// optim8_store_contiguous), run here on the host: for every 8-bit optimizer and parameter dtype, on
// values that reach the special cases (signed zeros, subnormals, values near overflow, NaN and
// infinity) and every code, it gives the bits of the element path (optim8_element, optim8_store).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/optim8_body.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {
namespace {

constexpr std::int64_t kElements = 1024;

float drawn_value(std::mt19937& random) {
  static const float kSpecial[] = {0.0f, -0.0f, 1e-40f, -1e-45f, 1e-30f, 3.0e38f, -3.0e38f, 65504.0f, 1e-7f,
                                   std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN()};
  if (random() % 8 == 0) return kSpecial[random() % (sizeof(kSpecial) / sizeof(kSpecial[0]))];
  std::uniform_real_distribution<float> magnitude(-8.0f, 2.0f);
  return (random() % 2 == 0 ? 1.0f : -1.0f) * std::pow(10.0f, magnitude(random));
}

template <DType D>
std::vector<std::uint8_t> tensor_of(const std::vector<float>& values) {
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(dtype_storage_bytes(D, static_cast<std::int64_t>(values.size()))));
  for (std::size_t i = 0; i < values.size(); ++i) store_float(bytes.data(), D, static_cast<std::int64_t>(i), values[i]);
  return bytes;
}

template <OptimizerKind K, DType D>
void expect_contiguous_body_matches_element_path(std::uint32_t seed) {
  constexpr int states = state_count(K);
  std::mt19937 random(seed);
  std::vector<float> param_values(kElements), grad_values(kElements);
  for (auto& v : param_values) v = drawn_value(random);
  for (auto& v : grad_values) v = drawn_value(random);
  const std::vector<std::uint8_t> param = tensor_of<D>(param_values), grad = tensor_of<D>(grad_values);
  std::vector<std::uint8_t> codes[3];
  for (int k = 0; k < states; ++k) {
    codes[k].resize(kElements);
    for (auto& c : codes[k]) c = static_cast<std::uint8_t>(random());
  }
  Hyperparameters h = typical_hyperparameters(K);
  h.step = 1 + static_cast<std::int64_t>(random() % 1000);
  h.weight_decay = random() % 2 == 0 ? 0.0f : 0.01f;
  const float old_absmax[3] = {0.5f, 3.0e-3f, 7.0e4f};
  const float new_absmax[3] = {0.25f, 1.0e-30f, 2.0f};
  const bool nonfinite_cases[2][3] = {{false, false, false}, {true, false, true}};

  std::array<QuantFormat, 3> formats{};
  for (int k = 0; k < states; ++k) formats[static_cast<std::size_t>(k)] = state8_format(K, k);
  const CodeTable* tables = code_tables_in_a_row(formats);
  const float* code_values[3] = {tables[0].code_values, states > 1 ? tables[1].code_values : nullptr,
                                 states > 2 ? tables[2].code_values : nullptr};
  // The kernel's copies of each state's finer-index entries in use, one after another, poison after
  // the last: a bucket the copy lacks gives another code.
  std::vector<std::uint32_t> copied(3 * kNearestBuckets, 0xFFFFFFFFu);
  NearestIndex indexes[3];
  std::size_t used = 0;
  for (int k = 0; k < states; ++k) {
    std::copy_n(tables[k].nearest_entry, nearest_entry_count(tables[k]), copied.begin() + static_cast<std::ptrdiff_t>(used));
    indexes[k] = nearest_index(tables[k]);
    indexes[k].entry = copied.data() + used;
    used += static_cast<std::size_t>(nearest_entry_count(tables[k]));
  }
  for (const auto& nonfinite : nonfinite_cases) {
    std::vector<std::uint8_t> param_of[2] = {param, param};
    std::vector<std::uint8_t> codes_of[2][3] = {{codes[0], codes[1], codes[2]}, {codes[0], codes[1], codes[2]}};
    Optimizer8Params p[2];
    for (int path = 0; path < 2; ++path) {
      p[path].base.kind = K;
      p[path].base.s = step_scalars(K, h);
      p[path].base.numel = kElements;
      p[path].base.param = param_of[path].data();
      p[path].base.param_dtype = D;
      p[path].base.param_index.offset = 0;
      p[path].base.grad = grad.data();
      p[path].base.grad_dtype = D;
      for (int k = 0; k < states; ++k) p[path].codes[k] = codes_of[path][k].data();
    }
    for (std::int64_t i = 0; i < kElements; ++i) {
      const ElementValues expected = optim8_element<K>(p[0], tables, old_absmax, i);
      const ElementValues got = optim8_element_contiguous<K, D>(p[1], code_values, old_absmax, i);
      ASSERT_EQ(float_bits(got.p), float_bits(expected.p)) << "parameter of element " << i;
      for (int k = 0; k < states; ++k) ASSERT_EQ(float_bits(got.s[k]), float_bits(expected.s[k])) << "state " << k << " of element " << i;
      optim8_store<K>(p[0], tables, new_absmax, nonfinite, i, expected);
      optim8_store_contiguous<K, D>(p[1], tables, indexes, new_absmax, nonfinite, i, got);
    }
    EXPECT_EQ(param_of[1], param_of[0]) << "stored parameters";
    for (int k = 0; k < states; ++k) EXPECT_EQ(codes_of[1][k], codes_of[0][k]) << "codes of state " << k;
  }
}

template <DType D>
void every_8bit_optimizer() {
  for_each_optimizer([](auto kind) {
    constexpr OptimizerKind K = decltype(kind)::value;
    if constexpr (!norm_based_kind(K)) {
      if (!has_8bit_variant(K)) return;
      SCOPED_TRACE(std::string(optimizer_info(K).name));
      for (std::uint32_t seed = 1; seed <= 4; ++seed) expect_contiguous_body_matches_element_path<K, D>(seed);
    }
  });
}

TEST(Optim8ContiguousElement, GivesTheElementPathsBitsF32) { every_8bit_optimizer<DType::f32>(); }
TEST(Optim8ContiguousElement, GivesTheElementPathsBitsF16) { every_8bit_optimizer<DType::f16>(); }
TEST(Optim8ContiguousElement, GivesTheElementPathsBitsBF16) { every_8bit_optimizer<DType::bf16>(); }

}  // namespace
}  // namespace bitparity
