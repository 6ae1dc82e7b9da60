#include "checkpoint_header.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <set>

#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/properties/json_document.hpp"

namespace bitparity::distributed::checkpoint_header {

using nlohmann::json;

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
    return properties::parse_json_document(text_of(metadata, key, path));
  } catch (const json::exception& e) {
    refuse(path, "\"" + key + "\" is not valid JSON: " + properties::json_error_message(e));
  }
}

namespace {

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

json code_maps_json(OptimizerKind kind, const StateMaps& maps) {
  json values = json::object();
  const auto names = state_names(kind);
  for (int k = 0; k < optimizer_info(kind).states; ++k) {
    values[std::string(names[static_cast<std::size_t>(k)])] = code_map(state8_map(kind, k, maps.of_state(kind, k))).values;
  }
  return values;
}

}  // namespace

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
    // 2^64 - 1 would read as -1 through int64.
    if (j[name].is_number_unsigned() && j[name].get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      refuse(path, std::string("hyperparameter ") + name + " is " + j[name].dump() + ", past 2^63 - 1");
    }
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

void check_common(const SafetensorsFile& file, const ShardedOptimizer& optimizer, const char* form) {
  const std::string& path = file.source;
  const ShardedConfig& config = optimizer.config();
  if (text_of(file.metadata, "format", path) != kCheckpointFormat) {
    refuse(path, "its format is '" + file.metadata.at("format") + "', this bitparity reads " + kCheckpointFormat);
  }
  // Before the other checks: each reads the header this covers.
  if (const std::string problem = header_checksum_problem(file); !problem.empty()) {
    refuse(path, problem + "; restore the file from a good copy");
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


}  // namespace bitparity::distributed::checkpoint_header
