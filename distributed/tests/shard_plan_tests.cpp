#include <gtest/gtest.h>

#include <map>
#include <random>

#include "bitparity/distributed/shard_plan.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {
namespace {

// Every element of every parameter is held by exactly one rank, inside its shard, pieces do not
// overlap, and aligned plans start every piece's blocks at a block of the parameter.
void expect_exact_cover(const std::vector<ParameterSpec>& parameters, const GroupShards& shards) {
  std::map<std::uint64_t, std::vector<int>> held;
  for (const auto& p : parameters) held[p.id].assign(static_cast<std::size_t>(p.numel), 0);
  for (int r = 0; r < shards.world; ++r) {
    std::vector<int> used(static_cast<std::size_t>(shards.shard_elements), 0);
    for (const Piece& piece : shards.of_rank(r)) {
      ASSERT_GT(piece.length, 0);
      ASSERT_LE(piece.shard_offset + piece.length, shards.shard_elements);
      EXPECT_EQ(piece.parameter_offset % shards.alignment, 0) << "a block straddles a shard boundary";
      EXPECT_EQ(piece.shard_offset % shards.alignment, 0) << "a piece starts inside a block of the shard";
      for (std::int64_t j = 0; j < piece.length; ++j) {
        ++held[piece.parameter_id].at(static_cast<std::size_t>(piece.parameter_offset + j));
        ++used[static_cast<std::size_t>(piece.shard_offset + j)];
      }
    }
    for (int u : used) ASSERT_LE(u, 1) << "two pieces overlap on rank " << r;
  }
  for (const auto& [id, counts] : held) {
    for (int c : counts) ASSERT_EQ(c, 1) << "parameter " << id;
  }
  EXPECT_EQ(shards.shard_elements % shards.alignment, 0);
}

TEST(ShardPlan, EveryLayoutCoversEveryElementOnceForAnyWorldAndAlignment) {
  std::mt19937_64 random(3);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<ParameterSpec> parameters;
    const int count = 1 + static_cast<int>(random() % 5);
    for (int i = 0; i < count; ++i) parameters.push_back({1000 + random() % 100000 * 7 + static_cast<std::uint64_t>(i), 1 + static_cast<std::int64_t>(random() % 700)});
    const int world = 1 + static_cast<int>(random() % 8);
    const std::int64_t alignment = std::array<std::int64_t, 3>{1, 64, 256}[random() % 3];
    for (ShardLayout layout : kShardLayouts) expect_exact_cover(parameters, plan_group_shards(parameters, layout, world, alignment));
  }
}

TEST(ShardPlan, ZeroOneTwoPartitionsTheFlatBufferContiguously) {
  // Two parameters of 5 and 3 elements over 3 ranks: flat 8, padded to 9, 3 per rank.
  const GroupShards shards = plan_group_shards({{7, 5}, {9, 3}}, ShardLayout::zero12, 3, 1);
  EXPECT_EQ(shards.shard_elements, 3);
  ASSERT_EQ(shards.of_rank(1).size(), 2u);  // the end of 7 and the start of 9
  EXPECT_EQ(shards.of_rank(1)[0].parameter_id, 7u);
  EXPECT_EQ(shards.of_rank(1)[0].parameter_offset, 3);
  EXPECT_EQ(shards.of_rank(1)[1].parameter_id, 9u);
  EXPECT_EQ(gathered_position(shards, 9, 2), 7);
}

TEST(ShardPlan, ZeroThreeGivesEachRankACeilSliceAndEmptyShardsBeyondTheElements) {
  const GroupShards shards = plan_group_shards({{4, 2}}, ShardLayout::zero3, 5, 1);
  EXPECT_EQ(shards.shard_elements, 1);  // 2 padded to 5, one per rank
  EXPECT_EQ(shards.of_rank(0).size(), 1u);
  EXPECT_TRUE(shards.of_rank(2).empty());
}

TEST(ShardPlan, RefusesRepeatedIdsAndNamesLayouts) {
  EXPECT_THROW(plan_group_shards({{1, 3}, {1, 4}}, ShardLayout::zero12, 2, 1), Error);
  for (ShardLayout layout : kShardLayouts) EXPECT_EQ(parse_layout(layout_name(layout)), layout);
  EXPECT_THROW(parse_layout("zero-4"), Error);
}

}  // namespace
}  // namespace bitparity::distributed
