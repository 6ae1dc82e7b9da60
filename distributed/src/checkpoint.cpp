#include "bitparity/distributed/checkpoint.hpp"

#include <algorithm>
#include <boost/crc.hpp>
#include <charconv>
#include <exception>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"

namespace bitparity::distributed {

namespace {

using nlohmann::json;
using Metadata = std::map<std::string, std::string>;

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw Error(ErrorCode::invalid_argument, "checkpoint '" + path + "' refused: " + what);
}

std::span<const std::uint8_t> bytes_of(const void* data, std::int64_t count) {
  return {static_cast<const std::uint8_t*>(data), static_cast<std::size_t>(count)};
}

std::vector<std::string_view> state_names(OptimizerKind kind) {
  std::vector<std::string_view> names;
  for (const StateSpec& spec : optimizer_info(kind).state_specs) names.push_back(spec.name);
  return names;
}

// Every field of Hyperparameters, exactly (floats widen to double and come back unchanged).
json hyperparameters_json(const Hyperparameters& h) {
  return {{"lr", h.lr},
          {"beta1", h.beta1},
          {"beta2", h.beta2},
          {"beta3", h.beta3},
          {"smoothing", h.smoothing},
          {"ademamix_alpha", h.ademamix_alpha},
          {"eps", h.eps},
          {"weight_decay", h.weight_decay},
          {"momentum", h.momentum},
          {"dampening", h.dampening},
          {"lr_decay", h.lr_decay},
          {"grad_scale", h.grad_scale},
          {"alpha_warmup", h.alpha_warmup},
          {"beta3_warmup", h.beta3_warmup},
          {"max_unorm", h.max_unorm},
          {"trust_coefficient", h.trust_coefficient},
          {"max_trust_ratio", h.max_trust_ratio},
          {"exclude_from_adaptation", h.exclude_from_adaptation},
          {"exclude_from_weight_decay", h.exclude_from_weight_decay},
          {"nesterov", h.nesterov},
          {"centered", h.centered},
          {"maximize", h.maximize},
          {"specific", h.specific}};
}

Hyperparameters parse_hyperparameters(const json& j, const std::string& path) {
  if (!j.is_object()) refuse(path, "a group's hyperparameters are not an object");
  Hyperparameters h;
  const auto number = [&](const char* name, float& field) {
    if (!j.contains(name) || !j[name].is_number()) refuse(path, std::string("hyperparameter ") + name + " is missing or not a number");
    const double value = j[name].get<double>();
    field = static_cast<float>(value);
    if (static_cast<double>(field) != value) refuse(path, std::string("hyperparameter ") + name + " is not an fp32 value");
  };
  const auto count = [&](const char* name, std::int64_t& field) {
    if (!j.contains(name) || !j[name].is_number_integer()) refuse(path, std::string("hyperparameter ") + name + " is missing or not an integer");
    field = j[name].get<std::int64_t>();
  };
  const auto flag = [&](const char* name, bool& field) {
    if (!j.contains(name) || !j[name].is_boolean()) refuse(path, std::string("hyperparameter ") + name + " is missing or not true/false");
    field = j[name].get<bool>();
  };
  number("lr", h.lr);
  number("beta1", h.beta1);
  number("beta2", h.beta2);
  number("beta3", h.beta3);
  number("smoothing", h.smoothing);
  number("ademamix_alpha", h.ademamix_alpha);
  number("eps", h.eps);
  number("weight_decay", h.weight_decay);
  number("momentum", h.momentum);
  number("dampening", h.dampening);
  number("lr_decay", h.lr_decay);
  number("grad_scale", h.grad_scale);
  count("alpha_warmup", h.alpha_warmup);
  count("beta3_warmup", h.beta3_warmup);
  number("max_unorm", h.max_unorm);
  number("trust_coefficient", h.trust_coefficient);
  number("max_trust_ratio", h.max_trust_ratio);
  flag("exclude_from_adaptation", h.exclude_from_adaptation);
  flag("exclude_from_weight_decay", h.exclude_from_weight_decay);
  flag("nesterov", h.nesterov);
  flag("centered", h.centered);
  flag("maximize", h.maximize);
  if (!j.contains("specific") || !j["specific"].is_array() || j["specific"].size() != h.specific.size()) {
    refuse(path, "hyperparameter specific is missing or not " + std::to_string(h.specific.size()) + " numbers");
  }
  for (std::size_t i = 0; i < h.specific.size(); ++i) {
    if (!j["specific"][i].is_number()) refuse(path, "hyperparameter specific holds a non-number");
    h.specific[i] = static_cast<float>(j["specific"][i].get<double>());
  }
  return h;
}

std::int64_t parse_count(const Metadata& metadata, const std::string& key, const std::string& path) {
  const auto found = metadata.find(key);
  if (found == metadata.end()) refuse(path, "its header has no \"" + key + "\"");
  std::int64_t value = -1;
  const auto [end, error] = std::from_chars(found->second.data(), found->second.data() + found->second.size(), value);
  if (error != std::errc() || end != found->second.data() + found->second.size() || value < 0) {
    refuse(path, "\"" + key + "\" is '" + found->second + "', not a whole number >= 0");
  }
  return value;
}

const std::string& text_of(const Metadata& metadata, const std::string& key, const std::string& path) {
  const auto found = metadata.find(key);
  if (found == metadata.end()) refuse(path, "its header has no \"" + key + "\" (not a bitparity checkpoint?)");
  return found->second;
}

json json_of(const Metadata& metadata, const std::string& key, const std::string& path) {
  try {
    return json::parse(text_of(metadata, key, path));
  } catch (const json::exception& e) {
    refuse(path, "\"" + key + "\" is not valid JSON: " + e.what());
  }
}

json code_maps_json(OptimizerKind kind, const StateMaps& maps) {
  json values = json::object();
  const auto names = state_names(kind);
  for (int k = 0; k < optimizer_info(kind).states; ++k) {
    values[std::string(names[static_cast<std::size_t>(k)])] = code_map(state8_map(kind, k, maps.of_state(kind, k))).values;
  }
  return values;
}

// The maps a checkpoint's 8-bit states were written with, as the maps a loading optimizer takes (as
// bitsandbytes restores qmap1/qmap2 with the state): a registered map with the same values, or the
// values registered as "checkpoint-map-CRC". Empty where a state's map is its optimizer's own.
StateMaps checkpoint_state_maps(const SafetensorsFile& file, OptimizerKind kind, const std::string& path) {
  const json stored = json_of(file.metadata, "code_maps", path);
  if (!stored.is_object()) refuse(path, "\"code_maps\" is not an object of state name to 256 fp32 values");
  const auto names = state_names(kind);
  for (const auto& [name, values] : stored.items()) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      refuse(path, "\"code_maps\" names a state \"" + name + "\" that " + std::string(optimizer_info(kind).name) + " does not have");
    }
  }
  StateMaps maps;
  std::optional<QuantFormat> chosen[2];  // by sign: signed, non-negative
  for (int k = 0; k < optimizer_info(kind).states; ++k) {
    const std::string name(names[static_cast<std::size_t>(k)]);
    if (!stored.contains(name)) refuse(path, "\"code_maps\" has no map for state \"" + name + "\"");
    const json& list = stored.at(name);
    std::vector<float> values;
    for (const json& v : list.is_array() ? list : json::array()) {
      const float f = v.is_number() ? static_cast<float>(v.get<double>()) : 0.0f;
      if (!v.is_number() || static_cast<double>(f) != v.get<double>()) {
        refuse(path, "the code map of state \"" + name + "\" holds " + v.dump() + ", not an fp32 value");
      }
      values.push_back(f);
    }
    if (values.size() != 256) {
      refuse(path, "the code map of state \"" + name + "\" has " + std::to_string(values.size()) + " values; 8-bit states take 256");
    }
    std::optional<QuantFormat> format = find_code_map(8, values);
    try {
      if (!format) {
        std::uint32_t bits[256];
        std::memcpy(bits, values.data(), sizeof bits);
        const std::string crc = tensor_crc32_hex(bytes_of(bits, sizeof bits));
        format = register_code_map({"checkpoint-map-" + crc, 8, values, "read from the checkpoint " + path + ", state " + name});
      }
      (void)state8_map(kind, k, format);  // a signed state needs negative values
    } catch (const Error& e) {
      refuse(path, "the code map of state \"" + name + "\" cannot be used: " + e.what());
    }
    const bool nonnegative = nonnegative_role(optimizer_info(kind).state_specs[static_cast<std::size_t>(k)].role);
    std::optional<QuantFormat>& same_sign = chosen[nonnegative ? 1 : 0];
    if (same_sign && *same_sign != *format) {
      refuse(path, "its " + std::string(nonnegative ? "non-negative" : "signed") +
                       " states were written with two different code maps; bitparity keeps one map per sign");
    }
    same_sign = format;
    if (*format != state8_format(kind, k)) (nonnegative ? maps.nonnegative_states : maps.signed_states) = format;
  }
  return maps;
}

// The maps the loading optimizer's 8-bit states take: the checkpoint's (the fault keeps its own).
StateMaps loaded_maps(const SafetensorsFile& file, const ShardedConfig& config, CheckpointFault fault) {
  if (!config.eight_bit || fault == CheckpointFault::maps_not_restored) return config.maps;
  return checkpoint_state_maps(file, config.kind, file.source);
}

json groups_json(const ShardedOptimizer& optimizer, bool with_shards) {
  json groups = json::array();
  for (std::size_t g = 0; g < optimizer.config().groups.size(); ++g) {
    const GroupConfig& group = optimizer.config().groups[g];
    json parameters = json::array();
    for (const ParameterSpec& p : group.parameters) parameters.push_back({{"id", p.id}, {"numel", p.numel}});
    json entry = {{"id", group.id},
                  {"param_dtype", dtype_name(group.param_dtype)},
                  {"grad_dtype", dtype_name(group.grad_dtype)},
                  {"hyperparameters", hyperparameters_json(group.hyper)},
                  {"parameters", parameters}};
    if (with_shards) entry["shard_elements"] = optimizer.groups()[g].shards.shard_elements;
    groups.push_back(entry);
  }
  return groups;
}

Metadata base_metadata(const ShardedOptimizer& optimizer, const char* form, std::int64_t step) {
  const ShardedConfig& config = optimizer.config();
  Metadata metadata{{"format", kCheckpointFormat},
                    {"form", form},
                    {"optimizer", std::string(optimizer_info(config.kind).name)},
                    {"states", config.eight_bit ? "8-bit" : "32-bit"},
                    {"blocksize", std::to_string(config.blocksize)},
                    {"step", std::to_string(step)},
                    {"world_size", std::to_string(optimizer.communicator().size())},
                    {"layout", std::string(layout_name(config.layout))}};
  if (config.eight_bit) metadata["code_maps"] = code_maps_json(config.kind, config.maps).dump();
  return metadata;
}

// The tensors and metadata of one file, checksummed, to its path atomically.
void write_checkpoint_file(const std::string& path, const std::vector<SafetensorsTensor>& tensors, Metadata metadata) {
  json checksums = json::object();
  for (const SafetensorsTensor& t : tensors) checksums[t.name] = tensor_crc32_hex(t.bytes);
  metadata["crc32"] = checksums.dump();
  fixtures::write_file_atomically(path, serialize_safetensors(tensors, metadata));
}

// Every rank learns whether any rank failed: those that did rethrow their error, the others say
// that another rank refused.
void agree(Communicator& communicator, const std::exception_ptr& problem, const char* doing) {
  if (!communicator.all_reduce_any(problem != nullptr)) return;
  if (problem) std::rethrow_exception(problem);
  throw Error(ErrorCode::invalid_argument, std::string("another rank could not ") + doing + "; its error is above; nothing was changed here");
}

// What every bitparity checkpoint must agree on with the optimizer loading it, checksums included.
void check_common(const SafetensorsFile& file, const ShardedOptimizer& optimizer, const char* form) {
  const std::string& path = file.source;
  const ShardedConfig& config = optimizer.config();
  if (text_of(file.metadata, "format", path) != kCheckpointFormat) {
    refuse(path, "its format is '" + file.metadata.at("format") + "', this bitparity reads " + kCheckpointFormat);
  }
  if (text_of(file.metadata, "form", path) != form) {
    refuse(path, "it is a " + file.metadata.at("form") + " checkpoint, not a " + form + " one");
  }
  const std::string& name = text_of(file.metadata, "optimizer", path);
  if (name != optimizer_info(config.kind).name) {
    refuse(path, "it holds " + name + " states; this optimizer is " + std::string(optimizer_info(config.kind).name));
  }
  const std::string states = config.eight_bit ? "8-bit" : "32-bit";
  if (text_of(file.metadata, "states", path) != states) {
    refuse(path, "it holds " + file.metadata.at("states") + " states; this optimizer keeps " + states + " states");
  }
  if (config.eight_bit) {
    if (parse_count(file.metadata, "blocksize", path) != config.blocksize) {
      refuse(path, "its 8-bit states have block size " + file.metadata.at("blocksize") + "; this optimizer uses " +
                       std::to_string(config.blocksize));
    }
  }
  (void)parse_count(file.metadata, "step", path);
  if (const auto bad = checksum_mismatches(file); !bad.empty()) {
    refuse(path, "tensor \"" + bad.front() + "\" does not match its CRC-32 (" + std::to_string(bad.size()) +
                     " tensor(s) corrupt); restore the file from a good copy");
  }
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

// The checkpoint's groups matched with the optimizer's by id; their hyperparameters restored.
std::vector<GroupConfig> restored_groups(const SafetensorsFile& file, const ShardedConfig& config, bool with_shards,
                                         const ShardedOptimizer& optimizer) {
  const std::string& path = file.source;
  const json groups = json_of(file.metadata, "groups", path);
  if (!groups.is_array()) refuse(path, "\"groups\" is not an array");
  if (groups.size() != config.groups.size()) {
    refuse(path, "it has " + std::to_string(groups.size()) + " parameter groups; this optimizer has " + std::to_string(config.groups.size()));
  }
  std::vector<GroupConfig> restored = config.groups;
  for (std::size_t g = 0; g < restored.size(); ++g) {
    GroupConfig& mine = restored[g];
    const json* theirs = nullptr;
    for (const json& group : groups) {
      if (group.is_object() && group.contains("id") && group["id"].is_number_unsigned() && group["id"].get<std::uint64_t>() == mine.id) theirs = &group;
    }
    const std::string at = "parameter group " + std::to_string(mine.id);
    if (theirs == nullptr) refuse(path, "it has no " + at);
    for (const char* key : {"param_dtype", "grad_dtype"}) {
      const std::string expected = dtype_name(key[0] == 'p' ? mine.param_dtype : mine.grad_dtype);
      if (!theirs->contains(key) || !(*theirs)[key].is_string() || (*theirs)[key].get<std::string>() != expected) {
        refuse(path, at + " has " + key + " " + (theirs->contains(key) ? (*theirs)[key].dump() : "missing") + "; this optimizer's is " + expected);
      }
    }
    if (!theirs->contains("parameters") || !(*theirs)["parameters"].is_array()) refuse(path, at + " lists no parameters");
    std::set<std::pair<std::uint64_t, std::int64_t>> saved, wanted;
    for (const json& p : (*theirs)["parameters"]) {
      if (!p.is_object() || !p.contains("id") || !p["id"].is_number_unsigned() || !p.contains("numel") || !p["numel"].is_number_unsigned()) {
        refuse(path, at + " lists a parameter without a whole id and numel");
      }
      saved.emplace(p["id"].get<std::uint64_t>(), p["numel"].get<std::int64_t>());
    }
    for (const ParameterSpec& p : mine.parameters) wanted.emplace(p.id, p.numel);
    if (saved != wanted) {
      refuse(path, at + " holds other parameters (ids or sizes) than this optimizer's; load a checkpoint of the same model");
    }
    if (with_shards) {
      if (!theirs->contains("shard_elements") || !(*theirs)["shard_elements"].is_number_unsigned() ||
          (*theirs)["shard_elements"].get<std::int64_t>() != optimizer.groups()[g].shards.shard_elements) {
        refuse(path, at + " was sharded differently; load the universal checkpoint instead");
      }
    }
    mine.hyper = parse_hyperparameters((*theirs).value("hyperparameters", json()), path);
    try {
      Hyperparameters check = mine.hyper;
      validate_hyperparameters(config.kind, check);
    } catch (const Error& e) {
      refuse(path, at + ": " + e.what());
    }
  }
  return restored;
}

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

std::vector<std::string> checksum_mismatches(const SafetensorsFile& file) {
  const json checksums = json_of(file.metadata, "crc32", file.source);
  if (!checksums.is_object()) refuse(file.source, "\"crc32\" is not an object of tensor checksums");
  std::vector<std::string> bad;
  for (const auto& [name, entry] : file.tensors) {
    const auto found = checksums.find(name);
    if (found == checksums.end() || !found->is_string() || found->get<std::string>() != tensor_crc32_hex(file.bytes(name))) {
      bad.push_back(name);
    }
  }
  return bad;
}

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

}  // namespace bitparity::distributed
