#pragma once
// Checkpoints of the sharded optimizer in safetensors files that users can open. Each rank saves its
// shard (rank-RRRRR-of-WWWWW.safetensors: its buffers as laid out, padding included), and rank 0
// the universal form (universal.safetensors: per parameter, padding stripped, by id), which loads
// into any world size and layout, as DeepSpeed's universal checkpoint does. The header carries a
// CRC-32 per tensor and the optimizer's metadata: step, hyperparameters of every group, layout,
// world size, block size and the code maps of 8-bit states. Loading checks all of it before it
// changes anything, and refuses (on every rank alike) what does not fit, naming what and why.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bitparity/distributed/safetensors.hpp"
#include "bitparity/distributed/sharded_optimizer.hpp"

namespace bitparity::distributed {

inline constexpr const char* kCheckpointFormat = "bitparity.checkpoint/1";

enum class CheckpointFault {
  none,
  step_not_restored,    // the step count starts again from 0 after loading
  absmax_not_restored,  // 8-bit states load their codes but keep zeroed absmax
  padding_kept,         // the universal form cuts gathered shards by size alone, keeping padding
  states_by_position,   // parameters loaded in the file's order instead of by id
  states_left_on_cpu,   // field bug 4: a parameter's loaded state stays on the CPU whatever its device
  maps_not_restored,    // 8-bit states decode with the loading optimizer's own maps, not the checkpoint's
};
inline constexpr CheckpointFault kCheckpointFaults[] = {CheckpointFault::step_not_restored, CheckpointFault::absmax_not_restored,
                                                        CheckpointFault::padding_kept, CheckpointFault::states_by_position,
                                                        CheckpointFault::maps_not_restored};
// Killed by P11 where the 8-bit states take maps other than their own (--map); with their own maps
// it changes nothing.
inline constexpr CheckpointFault kMapsFault = CheckpointFault::maps_not_restored;
// Killed by the device-placement test on a GPU (on a CPU-only machine it changes nothing).
inline constexpr CheckpointFault kDevicePlacementFault = CheckpointFault::states_left_on_cpu;
std::string_view checkpoint_fault_name(CheckpointFault fault);  // "checkpoint-step-not-restored", ...
std::string_view checkpoint_fault_description(CheckpointFault fault);
bool is_checkpoint_fault_name(std::string_view name);
CheckpointFault parse_checkpoint_fault(std::string_view name);  // throws Error naming the choices

std::string universal_checkpoint_path(const std::string& folder);
std::string rank_checkpoint_path(const std::string& folder, int rank, int world);

// Collective: every rank writes its shard file, rank 0 also the universal file, each atomically
// (temporary file, fsync, rename). Throws fixtures::WriteFailure on the rank that could not write.
void save_checkpoint(ShardedOptimizer& optimizer, const std::string& folder, CheckpointFault fault = CheckpointFault::none);

// Collective: every rank reads the universal file and takes its own pieces; the optimizer's groups
// must hold the same parameters (by id, size and dtype) as the checkpoint. Hyperparameters, the
// step count and the code maps of 8-bit states come from the checkpoint (as bitsandbytes restores
// qmap1/qmap2 with the state): a map no registered map equals is registered as checkpoint-map-CRC. Throws Error(invalid_argument) on every rank, the optimizer
// unchanged, when any rank refuses.
void load_universal_checkpoint(ShardedOptimizer& optimizer, const std::string& folder,
                               CheckpointFault fault = CheckpointFault::none);
// Collective: every rank reads its own shard file, which must come from the same world size,
// layout and groups (otherwise: load the universal form).
void load_rank_checkpoint(ShardedOptimizer& optimizer, const std::string& folder, CheckpointFault fault = CheckpointFault::none);

// One parameter's optimizer state from a universal checkpoint (with its code maps), placed on the
// parameter's device as torch's Optimizer.load_state_dict moves each state to its parameter's device. The file is checked
// as load_universal_checkpoint checks it, and the parameter's size and dtype against it.
struct ParameterState {
  OptimizerKind kind = OptimizerKind::adam;
  Hyperparameters hyper;  // its group's, with the step count of the checkpoint
  std::unique_ptr<OptimizerState> state;
};
ParameterState load_parameter_state(const std::string& path, std::uint64_t id, const TensorView& param,
                                    CheckpointFault fault = CheckpointFault::none);

// Each tensor's CRC-32 as 8 lowercase hex digits, by name: from `contents` when the file was read
// whole, else read from the file in pieces (a header from read_safetensors_header), so that a
// checkpoint of gigabytes is checked in a few MiB of memory.
std::map<std::string, std::string> tensor_checksums(const SafetensorsFile& file);
// The tensors whose CRC-32 in the header does not match `computed` (or that have none), for
// `checkpoint inspect`; throws Error when the file is not a bitparity checkpoint.
// A stored CRC-32 as tensor_checksums spells it (8 lower-case hex digits; either case is read), or
// "" when the text is not one.
std::string stored_checksum(std::string_view text);
std::vector<std::string> checksum_mismatches(const SafetensorsFile& file, const std::map<std::string, std::string>& computed);
std::vector<std::string> checksum_mismatches(const SafetensorsFile& file);  // computed from `file`
// The header's own CRC-32, stored as "header_crc32": it covers every byte of the header that
// decides a resumed result (step, optimizer, hyperparameters of every group, layout, world size,
// block size, code maps, the tensors' checksums) and each tensor's name, dtype and shape. The text
// checksummed is, for each metadata entry but header_crc32 in key order, netstrings "m", key,
// value, then for each tensor in name order "t", name, dtype, the shape's extents joined by ",";
// a netstring is the byte length in decimal, ":", the bytes, ",".
inline constexpr const char* kHeaderChecksumKey = "header_crc32";
std::string header_checksum(const std::map<std::string, std::string>& metadata,
                            const std::map<std::string, std::pair<std::string, std::vector<std::int64_t>>>& tensors);
std::string header_checksum(const SafetensorsFile& file);
// "" when the file's stored header_crc32 matches its header; otherwise what is wrong, in words.
std::string header_checksum_problem(const SafetensorsFile& file);
// The fields a resume reads (optimizer, states, step, world and rank, block size, groups and their
// hyperparameters, 8-bit code maps), each as a load reads it: what a load would refuse, or "". A
// header whose CRC-32 was recomputed after an edit passes its checksum; this still says so.
std::string header_field_problem(const SafetensorsFile& file);
std::uint32_t tensor_crc32(std::span<const std::uint8_t> bytes);
std::string tensor_crc32_hex(std::span<const std::uint8_t> bytes);  // 8 lowercase hex digits, as the header stores it

}  // namespace bitparity::distributed
