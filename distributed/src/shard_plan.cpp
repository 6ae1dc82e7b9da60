#include "bitparity/distributed/shard_plan.hpp"

#include <algorithm>
#include <set>

#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

namespace {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

std::string_view layout_name(ShardLayout layout) {
  switch (layout) {
    case ShardLayout::zero12: return "zero-1/2";
    case ShardLayout::zero3: return "zero-3";
    case ShardLayout::per_parameter: return "per-parameter";
  }
  return "?";
}

ShardLayout parse_layout(std::string_view name) {
  for (ShardLayout layout : kShardLayouts) {
    if (layout_name(layout) == name) return layout;
  }
  throw Error(ErrorCode::invalid_argument, "unknown layout '" + std::string(name) + "'; use zero-1/2, zero-3 or per-parameter");
}

GroupShards plan_group_shards(const std::vector<ParameterSpec>& parameters, ShardLayout layout, int world,
                              std::int64_t alignment) {
  if (world < 1 || alignment < 1) throw Error(ErrorCode::invalid_argument, "world size and alignment must be at least 1");
  std::set<std::uint64_t> ids;
  for (const auto& p : parameters) {
    if (!ids.insert(p.id).second) throw Error(ErrorCode::invalid_argument, "parameter id " + std::to_string(p.id) + " repeats in one group");
  }
  GroupShards shards;
  shards.layout = layout;
  shards.world = world;
  shards.alignment = alignment;
  shards.pieces.resize(static_cast<std::size_t>(world));
  if (layout == ShardLayout::zero12) {
    std::int64_t end = 0;
    for (const auto& p : parameters) {
      const std::int64_t start = round_up(end, alignment);
      shards.flat_offsets.emplace_back(p.id, start);
      end = start + p.numel;
    }
    shards.shard_elements = round_up(end, static_cast<std::int64_t>(world) * alignment) / world;
    for (int r = 0; r < world; ++r) {
      const std::int64_t low = r * shards.shard_elements, high = low + shards.shard_elements;
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        const std::int64_t start = std::max(low, shards.flat_offsets[i].second);
        const std::int64_t stop = std::min(high, shards.flat_offsets[i].second + parameters[i].numel);
        if (start < stop) {
          shards.pieces[static_cast<std::size_t>(r)].push_back(
              {parameters[i].id, start - shards.flat_offsets[i].second, stop - start, start - low});
        }
      }
    }
    return shards;
  }
  // zero3 and per_parameter: a slice of every parameter on every rank, slices back to back.
  for (const auto& p : parameters) {
    const std::int64_t slice = round_up(p.numel, static_cast<std::int64_t>(world) * alignment) / world;
    for (int r = 0; r < world; ++r) {
      const std::int64_t start = r * slice, stop = std::min(p.numel, start + slice);
      if (start < stop) shards.pieces[static_cast<std::size_t>(r)].push_back({p.id, start, stop - start, shards.shard_elements});
    }
    shards.shard_elements += slice;
  }
  return shards;
}

std::int64_t gathered_position(const GroupShards& shards, std::uint64_t parameter_id, std::int64_t offset) {
  for (int r = 0; r < shards.world; ++r) {
    for (const Piece& piece : shards.of_rank(r)) {
      if (piece.parameter_id == parameter_id && offset >= piece.parameter_offset &&
          offset < piece.parameter_offset + piece.length) {
        return r * shards.shard_elements + piece.shard_offset + (offset - piece.parameter_offset);
      }
    }
  }
  throw Error(ErrorCode::invalid_argument, "parameter " + std::to_string(parameter_id) + " has no element " + std::to_string(offset));
}

}  // namespace bitparity::distributed
