#include "bitparity/distributed/checkpoint.hpp"

#include "checkpoint_header.hpp"

#include <cctype>
#include <boost/crc.hpp>
#include <exception>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

namespace {

using nlohmann::json;
using namespace checkpoint_header;

// The tensors and metadata of one file, checksummed, to its path atomically.
void write_checkpoint_file(const std::string& path, const std::vector<SafetensorsTensor>& tensors, Metadata metadata) {
  json checksums = json::object();
  for (const SafetensorsTensor& t : tensors) checksums[t.name] = tensor_crc32_hex(t.bytes);
  metadata["crc32"] = checksums.dump();
  std::map<std::string, std::pair<std::string, std::vector<std::int64_t>>> table;
  for (const SafetensorsTensor& t : tensors) table[t.name] = {t.dtype, t.shape};
  metadata[kHeaderChecksumKey] = header_checksum(metadata, table);
  fixtures::write_file_atomically(path, serialize_safetensors(tensors, metadata));
}

// Every rank learns whether any rank failed: those that did rethrow their error, the others say
// that another rank refused.
void agree(Communicator& communicator, const std::exception_ptr& problem, const char* doing) {
  if (!communicator.all_reduce_any(problem != nullptr)) return;
  if (problem) std::rethrow_exception(problem);
  throw Error(ErrorCode::invalid_argument, std::string("another rank could not ") + doing + "; its error is above; nothing was changed here");
}

void expect_tensor(const SafetensorsFile& file, const std::string& name, const char* dtype, std::int64_t numel) {
  const SafetensorsEntry& e = file.entry(name);
  if (e.dtype != dtype || e.shape != std::vector<std::int64_t>{numel}) {
    std::string shape;
    for (std::int64_t extent : e.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
    refuse(file.source, "tensor \"" + name + "\" is " + e.dtype + "[" + shape + "], expected " + dtype + "[" + std::to_string(numel) +
                            "]");
  }
}

std::vector<std::uint8_t> copy_of(std::span<const std::uint8_t> bytes) { return {bytes.begin(), bytes.end()}; }

// Every tensor of the file must have been asked for.
void expect_no_other_tensors(const SafetensorsFile& file, const std::set<std::string>& expected) {
  for (const auto& [name, entry] : file.tensors) {
    if (expected.count(name) == 0) refuse(file.source, "it holds a tensor \"" + name + "\" that this optimizer has no place for");
  }
}

struct UniversalNames {
  std::string param;
  std::vector<std::string> states, absmax;
};

UniversalNames universal_names(OptimizerKind kind, bool eight_bit, std::uint64_t id) {
  UniversalNames names;
  names.param = "param/" + std::to_string(id);
  for (std::string_view state : state_names(kind)) {
    if (eight_bit) {
      names.states.push_back(std::string(state) + ".codes/" + std::to_string(id));
      names.absmax.push_back(std::string(state) + ".absmax/" + std::to_string(id));
    } else {
      names.states.push_back(std::string(state) + "/" + std::to_string(id));
    }
  }
  return names;
}

std::string shard_name(std::uint64_t group, const std::string& buffer) { return "group/" + std::to_string(group) + "/" + buffer; }

}  // namespace

std::string_view checkpoint_fault_name(CheckpointFault fault) {
  switch (fault) {
    case CheckpointFault::none: return "none";
    case CheckpointFault::step_not_restored: return "checkpoint-step-not-restored";
    case CheckpointFault::absmax_not_restored: return "checkpoint-absmax-not-restored";
    case CheckpointFault::padding_kept: return "checkpoint-padding-kept";
    case CheckpointFault::states_by_position: return "checkpoint-states-by-position";
    case CheckpointFault::states_left_on_cpu: return "checkpoint-states-left-on-cpu";
    case CheckpointFault::maps_not_restored: return "checkpoint-maps-not-restored";
  }
  return "?";
}

std::string_view checkpoint_fault_description(CheckpointFault fault) {
  switch (fault) {
    case CheckpointFault::none: return "checkpoints as written";
    case CheckpointFault::step_not_restored: return "the step count starts again from 0 after loading";
    case CheckpointFault::absmax_not_restored: return "8-bit states load their codes but keep zeroed absmax";
    case CheckpointFault::padding_kept: return "the universal form cuts the gathered shards by size alone, keeping the padding";
    case CheckpointFault::states_by_position: return "parameters loaded in the file's order instead of by id";
    case CheckpointFault::states_left_on_cpu: return "a parameter's loaded state stays on the CPU whatever the parameter's device";
    case CheckpointFault::maps_not_restored: return "8-bit states decode with the loading optimizer's own maps, not the checkpoint's";
  }
  return "?";
}

bool is_checkpoint_fault_name(std::string_view name) { return name.rfind("checkpoint-", 0) == 0; }

CheckpointFault parse_checkpoint_fault(std::string_view name) {
  std::string names;
  std::vector<CheckpointFault> faults(std::begin(kCheckpointFaults), std::end(kCheckpointFaults));
  faults.push_back(kDevicePlacementFault);
  for (CheckpointFault fault : faults) {
    if (checkpoint_fault_name(fault) == name) return fault;
    names += (names.empty() ? "" : ", ") + std::string(checkpoint_fault_name(fault));
  }
  throw Error(ErrorCode::invalid_argument, "unknown checkpoint mutant '" + std::string(name) + "'; expected one of " + names);
}

std::string universal_checkpoint_path(const std::string& folder) { return (std::filesystem::path(folder) / "universal.safetensors").string(); }

std::string rank_checkpoint_path(const std::string& folder, int rank, int world) {
  char name[64];
  std::snprintf(name, sizeof name, "rank-%05d-of-%05d.safetensors", rank, world);
  return (std::filesystem::path(folder) / name).string();
}

namespace {

void append_netstring(std::string& text, std::string_view field) {
  text += std::to_string(field.size());
  text += ':';
  text += field;
  text += ',';
}

}  // namespace

std::string header_checksum(const std::map<std::string, std::string>& metadata,
                            const std::map<std::string, std::pair<std::string, std::vector<std::int64_t>>>& tensors) {
  std::string text;
  for (const auto& [key, value] : metadata) {
    if (key == kHeaderChecksumKey) continue;
    append_netstring(text, "m"), append_netstring(text, key), append_netstring(text, value);
  }
  for (const auto& [name, entry] : tensors) {
    std::string shape;
    for (std::int64_t extent : entry.second) {
      if (!shape.empty()) shape += ',';  // appended apart: GCC 12 warns falsely (-Wrestrict) on "," + to_string
      shape += std::to_string(extent);
    }
    append_netstring(text, "t"), append_netstring(text, name), append_netstring(text, entry.first), append_netstring(text, shape);
  }
  return tensor_crc32_hex({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

std::string header_checksum(const SafetensorsFile& file) {
  std::map<std::string, std::pair<std::string, std::vector<std::int64_t>>> table;
  for (const auto& [name, entry] : file.tensors) table[name] = {entry.dtype, entry.shape};
  return header_checksum(file.metadata, table);
}

std::string header_checksum_problem(const SafetensorsFile& file) {
  const auto found = file.metadata.find(kHeaderChecksumKey);
  if (found == file.metadata.end()) {
    return std::string("its header has no \"") + kHeaderChecksumKey + "\", so nothing shows that its step, hyperparameters and "
           "layout are as saved (the key was removed, or an older bitparity wrote it)";
  }
  const std::string stored = stored_checksum(found->second), computed = header_checksum(file);
  if (stored.empty()) return std::string("its \"") + kHeaderChecksumKey + "\" '" + found->second + "' is not 8 hex digits";
  if (stored != computed) {
    return std::string("its header does not match its \"") + kHeaderChecksumKey + "\" (stored " + stored + ", computed " + computed +
           "): the header was edited or corrupted";
  }
  return "";
}

std::uint32_t tensor_crc32(std::span<const std::uint8_t> bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::string tensor_crc32_hex(std::span<const std::uint8_t> bytes) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", tensor_crc32(bytes));
  return text;
}

std::map<std::string, std::string> tensor_checksums(const SafetensorsFile& file) {
  std::map<std::string, std::string> checksums;
  for (const auto& [name, entry] : file.tensors) {
    boost::crc_32_type crc;
    read_safetensors_pieces(file, name, [&crc](std::span<const std::uint8_t> piece) { crc.process_bytes(piece.data(), piece.size()); });
    char text[9];
    std::snprintf(text, sizeof text, "%08x", crc.checksum());
    checksums[name] = text;
  }
  return checksums;
}

std::string stored_checksum(std::string_view text) {
  if (text.size() != 8) return "";
  std::string checksum(text);
  for (char& c : checksum) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));  // either case is the same checksum
  }
  return checksum;
}

std::vector<std::string> checksum_mismatches(const SafetensorsFile& file, const std::map<std::string, std::string>& computed) {
  const json checksums = json_of(file.metadata, "crc32", file.source);
  if (!checksums.is_object()) refuse(file.source, "\"crc32\" is not an object of tensor checksums");
  std::vector<std::string> bad;
  for (const auto& [name, entry] : file.tensors) {
    const auto found = checksums.find(name);
    const std::string stored = found != checksums.end() && found->is_string() ? stored_checksum(found->get<std::string>()) : std::string();
    if (stored.empty() || stored != computed.at(name)) bad.push_back(name);
  }
  return bad;
}

std::vector<std::string> checksum_mismatches(const SafetensorsFile& file) { return checksum_mismatches(file, tensor_checksums(file)); }

void save_checkpoint(ShardedOptimizer& optimizer, const std::string& folder, CheckpointFault fault) {
  Communicator& communicator = optimizer.communicator();
  const int rank = communicator.rank(), world = communicator.size();
  const ShardedConfig& config = optimizer.config();
  const std::int64_t step = optimizer.completed_steps();
  set_activity("saving the checkpoint of step " + std::to_string(step));
  const WholeParameters whole = optimizer.whole_parameters(fault == CheckpointFault::padding_kept);
  const auto names = state_names(config.kind);
  std::string problem;
  try {
    // This rank's shard, as laid out.
    std::vector<SafetensorsTensor> shard;
    for (std::size_t g = 0; g < config.groups.size(); ++g) {
      const GroupShardState& group = optimizer.groups()[g];
      const GroupConfig& group_config = config.groups[g];
      const std::int64_t n = group.shards.shard_elements;
      shard.push_back({shard_name(group_config.id, "param"), safetensors_dtype(group_config.param_dtype), {n},
                       bytes_of(group.param.view().data, dtype_storage_bytes(group_config.param_dtype, n))});
      if (config.eight_bit) {
        const auto quantized = group.state->quantized_states();
        for (std::size_t k = 0; k < quantized.size(); ++k) {
          shard.push_back({shard_name(group_config.id, std::string(names[k]) + ".codes"), "U8", {n}, bytes_of(quantized[k].codes.data, n)});
          shard.push_back({shard_name(group_config.id, std::string(names[k]) + ".absmax"), "F32", {quantized[k].absmax.numel()},
                           bytes_of(quantized[k].absmax.data, quantized[k].absmax.numel() * 4)});
        }
      } else {
        const auto fp32 = group.state->fp32_states();
        for (std::size_t k = 0; k < fp32.size(); ++k) {
          shard.push_back({shard_name(group_config.id, std::string(names[k])), "F32", {n}, bytes_of(fp32[k].data, n * 4)});
        }
      }
    }
    Metadata metadata = base_metadata(optimizer, "rank-shard", step);
    metadata["rank"] = std::to_string(rank);
    metadata["groups"] = groups_json(optimizer, true).dump();
    write_checkpoint_file(rank_checkpoint_path(folder, rank, world), shard, metadata);
    if (rank == 0) {
      std::vector<SafetensorsTensor> tensors;
      for (const GroupConfig& group : config.groups) {
        for (const ParameterSpec& p : group.parameters) {
          const WholeParameter& w = whole.at(p.id);
          const UniversalNames universal = universal_names(config.kind, config.eight_bit, p.id);
          tensors.push_back({universal.param, safetensors_dtype(group.param_dtype), {p.numel}, w.param});
          for (std::size_t k = 0; k < w.states.size(); ++k) {
            tensors.push_back({universal.states[k], config.eight_bit ? "U8" : "F32", {p.numel}, w.states[k]});
          }
          for (std::size_t k = 0; k < w.absmax.size(); ++k) {
            tensors.push_back({universal.absmax[k], "F32", {static_cast<std::int64_t>(w.absmax[k].size() / 4)}, w.absmax[k]});
          }
        }
      }
      Metadata universal = base_metadata(optimizer, "universal", step);
      universal["groups"] = groups_json(optimizer, false).dump();
      write_checkpoint_file(universal_checkpoint_path(folder), tensors, universal);
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (!communicator.all_reduce_any(!problem.empty())) return;
  if (!problem.empty()) throw fixtures::WriteFailure(problem);
  throw fixtures::WriteFailure("another rank could not write its checkpoint file; its error is above");
}

void load_universal_checkpoint(ShardedOptimizer& optimizer, const std::string& folder, CheckpointFault fault) {
  const ShardedConfig& config = optimizer.config();
  const std::string path = universal_checkpoint_path(folder);
  set_activity("loading " + path);
  std::vector<GroupConfig> groups;
  WholeParameters whole;
  StateMaps maps;
  std::int64_t step = 0;
  std::exception_ptr problem;
  try {
    const SafetensorsFile file = read_safetensors(path);
    check_common(file, optimizer, "universal");
    maps = loaded_maps(file, config, fault);
    groups = restored_groups(file, config, false, optimizer);
    step = fault == CheckpointFault::step_not_restored ? 0 : parse_count(file.metadata, "step", path);
    // The file's parameters in its own order (by name), for the by-position fault.
    std::vector<std::uint64_t> file_order;
    for (const auto& [name, entry] : file.tensors) {
      if (fault == CheckpointFault::states_by_position && name.rfind("param/", 0) == 0) file_order.push_back(std::stoull(name.substr(6)));
    }
    std::set<std::string> expected;
    std::size_t position = 0;
    for (const GroupConfig& group : groups) {
      for (const ParameterSpec& p : group.parameters) {
        const std::uint64_t source = fault == CheckpointFault::states_by_position && position < file_order.size() ? file_order[position] : p.id;
        ++position;
        const UniversalNames names = universal_names(config.kind, config.eight_bit, source);
        WholeParameter& w = whole[p.id];
        w.group_id = group.id;
        expect_tensor(file, names.param, safetensors_dtype(group.param_dtype), p.numel);
        w.param = copy_of(file.bytes(names.param));
        expected.insert(names.param);
        for (const std::string& name : names.states) {
          expect_tensor(file, name, config.eight_bit ? "U8" : "F32", p.numel);
          w.states.push_back(copy_of(file.bytes(name)));
          expected.insert(name);
        }
        const std::int64_t blocks = (p.numel + config.blocksize - 1) / config.blocksize;
        for (const std::string& name : names.absmax) {
          expect_tensor(file, name, "F32", blocks);
          w.absmax.push_back(fault == CheckpointFault::absmax_not_restored ? std::vector<std::uint8_t>(static_cast<std::size_t>(blocks * 4), 0)
                                                                          : copy_of(file.bytes(name)));
          expected.insert(name);
        }
      }
    }
    expect_no_other_tensors(file, expected);
  } catch (const std::exception&) {
    problem = std::current_exception();
  }
  agree(optimizer.communicator(), problem, "load the checkpoint");
  optimizer.restore(std::move(groups), whole, step, maps);
}

ParameterState load_parameter_state(const std::string& path, std::uint64_t id, const TensorView& param, CheckpointFault fault) {
  const SafetensorsFile file = read_safetensors(path);
  if (text_of(file.metadata, "format", path) != kCheckpointFormat) {
    refuse(path, "its format is '" + file.metadata.at("format") + "', this bitparity reads " + kCheckpointFormat);
  }
  if (const std::string problem = header_checksum_problem(file); !problem.empty()) {
    refuse(path, problem + "; restore the file from a good copy");
  }
  if (text_of(file.metadata, "form", path) != "universal") refuse(path, "per-parameter states load from the universal form");
  if (const auto bad = checksum_mismatches(file); !bad.empty()) {
    refuse(path, "tensor \"" + bad.front() + "\" does not match its CRC-32; restore the file from a good copy");
  }
  ParameterState loaded;
  try {
    loaded.kind = parse_optimizer(text_of(file.metadata, "optimizer", path));
  } catch (const Error& e) {
    refuse(path, e.what());
  }
  const bool eight_bit = text_of(file.metadata, "states", path) == "8-bit";
  const std::int64_t blocksize = parse_count(file.metadata, "blocksize", path);
  const json groups = json_of(file.metadata, "groups", path);
  bool found = false;
  for (const json& group : groups.is_array() ? groups : json::array()) {
    for (const json& p : group.value("parameters", json::array())) {
      if (p.is_object() && p.value("id", json()).is_number_unsigned() && p["id"].get<std::uint64_t>() == id) {
        loaded.hyper = parse_hyperparameters(group.value("hyperparameters", json()), path);
        found = true;
      }
    }
  }
  if (!found) refuse(path, "it holds no parameter " + std::to_string(id));
  loaded.hyper.step = parse_count(file.metadata, "step", path);
  const UniversalNames names = universal_names(loaded.kind, eight_bit, id);
  expect_tensor(file, names.param, safetensors_dtype(param.dtype), param.numel());
  const std::int64_t n = param.numel(), blocks = eight_bit ? (n + blocksize - 1) / blocksize : 0;
  for (const std::string& name : names.states) expect_tensor(file, name, eight_bit ? "U8" : "F32", n);
  for (const std::string& name : names.absmax) expect_tensor(file, name, "F32", blocks);
  // The state follows its parameter's device; the fault leaves it where the file was read.
  const Device device = fault == CheckpointFault::states_left_on_cpu ? Device::cpu() : param.device;
  const StateMaps maps = eight_bit && fault != CheckpointFault::maps_not_restored ? checkpoint_state_maps(file, loaded.kind, path) : StateMaps{};
  loaded.state = std::make_unique<OptimizerState>(loaded.kind, n, device, StateOptions{eight_bit, blocksize, 0, maps});
  for (std::size_t k = 0; k < names.states.size(); ++k) {
    const auto codes = file.bytes(names.states[k]);
    loaded.state->write_buffer(eight_bit ? 2 * k : k, codes.data(), static_cast<std::int64_t>(codes.size()));
    if (eight_bit) {
      const auto absmax = file.bytes(names.absmax[k]);
      loaded.state->write_buffer(2 * k + 1, absmax.data(), static_cast<std::int64_t>(absmax.size()));
    }
  }
  return loaded;
}

void load_rank_checkpoint(ShardedOptimizer& optimizer, const std::string& folder, CheckpointFault fault) {
  Communicator& communicator = optimizer.communicator();
  const ShardedConfig& config = optimizer.config();
  const int rank = communicator.rank(), world = communicator.size();
  const std::string path = rank_checkpoint_path(folder, rank, world);
  set_activity("loading " + path);
  std::vector<GroupConfig> groups;
  std::vector<GroupShardState> shards;
  StateMaps maps;
  std::int64_t step = 0;
  std::exception_ptr problem;
  try {
    const SafetensorsFile file = read_safetensors(path);
    check_common(file, optimizer, "rank-shard");
    maps = loaded_maps(file, config, fault);
    if (parse_count(file.metadata, "world_size", path) != world || parse_count(file.metadata, "rank", path) != rank) {
      refuse(path, "it is rank " + file.metadata.at("rank") + " of " + file.metadata.at("world_size") + ", this is rank " +
                       std::to_string(rank) + " of " + std::to_string(world) + "; load the universal checkpoint to change the world size");
    }
    if (text_of(file.metadata, "layout", path) != layout_name(config.layout)) {
      refuse(path, "it was sharded " + file.metadata.at("layout") + ", this optimizer shards " + std::string(layout_name(config.layout)) +
                       "; load the universal checkpoint to change the layout");
    }
    groups = restored_groups(file, config, true, optimizer);
    step = fault == CheckpointFault::step_not_restored ? 0 : parse_count(file.metadata, "step", path);
    const auto names = state_names(config.kind);
    std::set<std::string> expected;
    const auto take = [&](const std::string& name, const char* dtype, std::int64_t numel, void* target, std::int64_t bytes, bool keep_zero) {
      expect_tensor(file, name, dtype, numel);
      expected.insert(name);
      if (!keep_zero) std::memcpy(target, file.bytes(name).data(), static_cast<std::size_t>(bytes));
    };
    for (std::size_t g = 0; g < config.groups.size(); ++g) {
      GroupShardState group = optimizer.empty_group(g, maps);
      const GroupConfig& group_config = config.groups[g];
      const std::int64_t n = group.shards.shard_elements;
      take(shard_name(group_config.id, "param"), safetensors_dtype(group_config.param_dtype), n, group.param.view().data,
           dtype_storage_bytes(group_config.param_dtype, n), false);
      if (config.eight_bit) {
        const auto quantized = group.state->quantized_states();
        for (std::size_t k = 0; k < quantized.size(); ++k) {
          take(shard_name(group_config.id, std::string(names[k]) + ".codes"), "U8", n, quantized[k].codes.data, n, false);
          take(shard_name(group_config.id, std::string(names[k]) + ".absmax"), "F32", quantized[k].absmax.numel(), quantized[k].absmax.data,
               quantized[k].absmax.numel() * 4, fault == CheckpointFault::absmax_not_restored);
        }
      } else {
        const auto fp32 = group.state->fp32_states();
        for (std::size_t k = 0; k < fp32.size(); ++k) take(shard_name(group_config.id, std::string(names[k])), "F32", n, fp32[k].data, n * 4, false);
      }
      shards.push_back(std::move(group));
    }
    expect_no_other_tensors(file, expected);
  } catch (const std::exception&) {
    problem = std::current_exception();
  }
  agree(communicator, problem, "load its checkpoint shard");
  optimizer.restore_shards(std::move(groups), std::move(shards), step, maps);
}

std::string header_field_problem(const SafetensorsFile& file) {
  const std::string& path = file.source;
  try {
    const Metadata& m = file.metadata;
    if (text_of(m, "format", path) != kCheckpointFormat) {
      refuse(path, "\"format\" is '" + m.at("format") + "', not " + kCheckpointFormat + ", the one format this bitparity writes");
    }
    const std::string& form = text_of(m, "form", path);
    if (form != "universal" && form != "rank-shard") refuse(path, "\"form\" is '" + form + "', not universal or rank-shard");
    if (form == "rank-shard" && m.count("rank") == 0) refuse(path, "a rank-shard form without \"rank\"");
    if (form == "universal" && m.count("rank") != 0) refuse(path, "the universal form with a \"rank\"");
    try {
      (void)parse_layout(text_of(m, "layout", path));
    } catch (const Error& e) {
      refuse(path, std::string("\"layout\": ") + e.what());
    }
    OptimizerKind kind{};
    try {
      kind = parse_optimizer(text_of(m, "optimizer", path));
    } catch (const Error& e) {
      refuse(path, std::string("\"optimizer\": ") + e.what());
    }
    const std::string& states = text_of(m, "states", path);
    if (states != "8-bit" && states != "32-bit") refuse(path, "\"states\" is '" + states + "', not 8-bit or 32-bit");
    (void)parse_count(m, "step", path);
    const std::int64_t world = parse_count(m, "world_size", path);
    if (world < 1) refuse(path, "\"world_size\" is 0; a world has at least 1 rank");
    if (m.count("rank") != 0 && parse_count(m, "rank", path) >= world) {
      refuse(path, "\"rank\" " + m.at("rank") + " is not a rank of a world of " + std::to_string(world));
    }
    if (states == "8-bit") {
      const std::int64_t blocksize = parse_count(m, "blocksize", path);
      if (blocksize < 64 || blocksize > 4096 || (blocksize & (blocksize - 1)) != 0) {
        refuse(path, "\"blocksize\" " + std::to_string(blocksize) + " is not a power of two from 64 to 4096");
      }
      (void)checkpoint_state_maps(file, kind, path);
    }
    const json groups = json_of(m, "groups", path);
    if (!groups.is_array() || groups.empty()) refuse(path, "\"groups\" is not a list of parameter groups");
    for (const json& group : groups) {
      if (!group.is_object() || !group.contains("parameters") || !group.at("parameters").is_array()) {
        refuse(path, "a group of \"groups\" is not an object with a list of parameters");
      }
      (void)parse_hyperparameters(group.value("hyperparameters", json()), path);
      // The universal form holds each parameter's tensors whole: their names, dtypes and sizes
      // follow from the header (an edited "states" or "blocksize" no longer fits them).
      if (form != "universal") continue;
      for (const json& p : group.at("parameters")) {
        if (!p.is_object() || !p.value("id", json()).is_number_unsigned() || !p.value("numel", json()).is_number_unsigned()) {
          refuse(path, "a parameter of \"groups\" is not {id, numel}");
        }
        const std::uint64_t id = p.at("id").get<std::uint64_t>();
        const std::int64_t n = p.at("numel").get<std::int64_t>();
        const bool eight_bit = states == "8-bit";
        const std::int64_t blocksize = parse_count(m, "blocksize", path);
        const UniversalNames names = universal_names(kind, eight_bit, id);
        if (file.tensors.count(names.param) == 0) refuse(path, "it holds no tensor \"" + names.param + "\" of parameter " + std::to_string(id));
        if (file.tensors.at(names.param).shape != std::vector<std::int64_t>{n}) refuse(path, "tensor \"" + names.param + "\" is not of " + std::to_string(n) + " elements");
        for (const std::string& name : names.states) {
          if (file.tensors.count(name) == 0) refuse(path, "it holds no tensor \"" + name + "\", which " + states + " states have");
          expect_tensor(file, name, eight_bit ? "U8" : "F32", n);
        }
        for (const std::string& name : names.absmax) {
          if (file.tensors.count(name) == 0) refuse(path, "it holds no tensor \"" + name + "\", which 8-bit states have");
          expect_tensor(file, name, "F32", blocksize > 0 ? (n + blocksize - 1) / blocksize : 0);
        }
      }
    }
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

}  // namespace bitparity::distributed
