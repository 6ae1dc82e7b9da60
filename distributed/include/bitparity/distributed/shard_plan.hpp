#pragma once
// Where each element of a parameter group lives across W ranks, in the ways real frameworks lay
// it out. Everything is keyed by a stable parameter id, never by position. With 8-bit states the
// alignment is the quantization block: no block straddles a parameter or a shard boundary.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bitparity::distributed {

enum class ShardLayout {
  zero12,         // DeepSpeed stage 1/2: one flat buffer per group, tail-padded, W near-equal
                  // contiguous partitions; parameters straddle ranks; a rank steps its partition
  zero3,          // DeepSpeed stage 3 / FSDP2: each parameter padded to a multiple of W, a
                  // ceil(n/W) slice per rank, each slice stepped as its own tensor
  per_parameter,  // ColossalAI LowLevelZero: each parameter split into W slices, a rank's slices
                  // of a group back to back in one flat shard that it steps at once
};
inline constexpr ShardLayout kShardLayouts[] = {ShardLayout::zero12, ShardLayout::zero3, ShardLayout::per_parameter};
std::string_view layout_name(ShardLayout layout);  // "zero-1/2", "zero-3", "per-parameter"
ShardLayout parse_layout(std::string_view name);   // throws Error naming the choices

struct ParameterSpec {
  std::uint64_t id = 0;
  std::int64_t numel = 0;
};

// A run of one parameter's elements held by one rank.
struct Piece {
  std::uint64_t parameter_id = 0;
  std::int64_t parameter_offset = 0;  // first element, in the parameter
  std::int64_t length = 0;
  std::int64_t shard_offset = 0;      // where it sits in the rank's shard buffer
};

struct GroupShards {
  ShardLayout layout = ShardLayout::zero12;
  int world = 1;
  std::int64_t alignment = 1;
  std::int64_t shard_elements = 0;          // every rank's shard buffer, padding included (equal)
  std::vector<std::vector<Piece>> pieces;   // per rank, in shard order; empty shards allowed
  // zero12: where each parameter starts in the group's flat buffer (the gathered shards)
  std::vector<std::pair<std::uint64_t, std::int64_t>> flat_offsets;
  const std::vector<Piece>& of_rank(int rank) const { return pieces.at(static_cast<std::size_t>(rank)); }
};

// Plans one group over `world` ranks. `alignment` (1, or the 8-bit block size) divides every
// parameter start in a flat buffer and every shard boundary. Throws Error for ids that repeat.
GroupShards plan_group_shards(const std::vector<ParameterSpec>& parameters, ShardLayout layout, int world,
                              std::int64_t alignment);

// Where a parameter's element `offset` is after gathering every rank's shard back to back.
std::int64_t gathered_position(const GroupShards& shards, std::uint64_t parameter_id, std::int64_t offset);

}  // namespace bitparity::distributed
