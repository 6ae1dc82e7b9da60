#pragma once
// The header of a bitparity checkpoint: the metadata a save writes (format, form, optimizer, states,
// block size, step, world size, layout, groups with their hyperparameters, code maps) and the checks
// a load makes on it before anything changes. Internal to checkpoint.cpp.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/distributed/checkpoint.hpp"

namespace bitparity::distributed::checkpoint_header {

using Metadata = std::map<std::string, std::string>;

// Throws Error(invalid_argument): "checkpoint 'PATH' refused: WHAT".
[[noreturn]] void refuse(const std::string& path, const std::string& what);
std::span<const std::uint8_t> bytes_of(const void* data, std::int64_t count);
std::vector<std::string_view> state_names(OptimizerKind kind);

std::int64_t parse_count(const Metadata& metadata, const std::string& key, const std::string& path);
const std::string& text_of(const Metadata& metadata, const std::string& key, const std::string& path);
nlohmann::json json_of(const Metadata& metadata, const std::string& key, const std::string& path);

// A group's hyperparameters as saved, every field exactly (refused where one is missing or not fp32).
Hyperparameters parse_hyperparameters(const nlohmann::json& j, const std::string& path);
// The maps a checkpoint's 8-bit states were written with, as the maps a loading optimizer takes (as
// bitsandbytes restores qmap1/qmap2 with the state): a registered map with the same values, or the
// values registered as "checkpoint-map-CRC". Empty where a state's map is its optimizer's own.
StateMaps checkpoint_state_maps(const SafetensorsFile& file, OptimizerKind kind, const std::string& path);

// The header's metadata but the groups and checksums.
Metadata base_metadata(const ShardedOptimizer& optimizer, const char* form, std::int64_t step);
nlohmann::json groups_json(const ShardedOptimizer& optimizer, bool with_shards);

// What every bitparity checkpoint must agree on with the optimizer loading it, checksums included.
void check_common(const SafetensorsFile& file, const ShardedOptimizer& optimizer, const char* form);
// The checkpoint's groups matched with the optimizer's by id; their hyperparameters restored.
std::vector<GroupConfig> restored_groups(const SafetensorsFile& file, const ShardedConfig& config, bool with_shards,
                                         const ShardedOptimizer& optimizer);
// The maps the loading optimizer's 8-bit states take: the checkpoint's (the fault keeps its own).
StateMaps loaded_maps(const SafetensorsFile& file, const ShardedConfig& config, CheckpointFault fault);

}  // namespace bitparity::distributed::checkpoint_header
