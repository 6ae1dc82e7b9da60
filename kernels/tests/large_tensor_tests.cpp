// 64-bit indexing: a tensor of more than 2^31 elements (a broadcast view, so that its storage is
// small) quantizes like its first rows.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bitparity/kernels/quantize.hpp"

namespace bitparity {
namespace {

TEST(LargeTensor, QuantizesBeyondTwoToTheThirtyOneElements) {
  constexpr std::int64_t kRow = 64, kRows = (1LL << 25) + 1;  // 2^31 + 64 elements
  std::vector<float> row(kRow);
  for (std::int64_t i = 0; i < kRow; ++i) row[i] = static_cast<float>(i) - 20.5f;
  TensorView input;
  input.data = row.data();
  input.storage_elements = kRow;
  input.index = make_index({kRows, kRow}, {0, 1}, 0);
  ASSERT_GT(input.numel(), (1LL << 31));
  const std::int64_t blocks = block_count(input.numel(), kRow);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>((input.numel() + 1) / 2));
  std::vector<float> absmax(blocks);
  std::vector<std::uint8_t> flags(blocks);
  TensorView codes_view = contiguous_view(codes.data(), DType::packed4, Device::cpu(), {input.numel()});
  const QuantizeReport report =
      quantize_blockwise(input, QuantFormat::nf4, kRow,
                         {codes_view, contiguous_view(absmax.data(), DType::f32, Device::cpu(), {blocks}),
                          contiguous_view(flags.data(), DType::u8, Device::cpu(), {blocks})});
  EXPECT_TRUE(report.nonfinite_blocks.empty());
  EXPECT_EQ(absmax.front(), 42.5f);
  EXPECT_EQ(absmax.back(), 42.5f);
  EXPECT_EQ(std::memcmp(codes.data(), codes.data() + (codes.size() - kRow / 2), kRow / 2), 0)
      << "the last block, past 2^31, differs from the first";
}

}  // namespace
}  // namespace bitparity
