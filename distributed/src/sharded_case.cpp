#include "bitparity/distributed/sharded_case.hpp"

#include <algorithm>
#include <set>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "case_fields.hpp"

namespace bitparity::distributed {

namespace {

using case_fields::counted;
using case_fields::smaller_sizes;
using case_fields::whole_number;
using nlohmann::json;
using properties::CaseFileError;

constexpr std::int64_t kMostElements = std::int64_t{1} << 20;  // per parameter of a saved case
constexpr int kMostMicrobatches = 63;                          // the gradient stream holds 64 per step

// The groups in effect at `step`.
const std::vector<GroupConfig>& groups_at(const ShardedConfig& config, std::int64_t step) {
  return config.regroup_step != 0 && step >= config.regroup_step ? config.regrouped : config.groups;
}

// Calls visit(step, microbatch, id, numel, grad dtype) for every gradient the case reads.
template <class Visit>
void for_each_gradient(const ShardedCase& c, Visit visit) {
  for (std::int64_t step = 1; step <= c.total_steps(); ++step) {
    for (const GroupConfig& group : groups_at(c.config, step)) {
      for (const ParameterSpec& p : group.parameters) {
        for (int m = 0; m < c.config.microbatches; ++m) visit(step, m, p.id, p.numel, group.grad_dtype);
      }
    }
  }
}


std::uint64_t identifier(const json& object, const char* key) {
  if (!object.contains(key)) throw CaseFileError(std::string("'") + key + "' is missing");
  std::uint64_t value = 0;
  properties::decode_input(object.at(key), value);
  return value;
}

DType float_dtype(const json& object, const char* key) {
  if (!object.contains(key)) throw CaseFileError(std::string("'") + key + "' is missing");
  DType dtype{};
  properties::decode_input(object.at(key), dtype);
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) {
    throw CaseFileError(std::string("'") + key + "' must be f32, f16 or bf16");
  }
  return dtype;
}

json encode_groups(const std::vector<GroupConfig>& groups, OptimizerKind kind) {
  json out = json::array();
  for (const GroupConfig& group : groups) {
    json parameters = json::array();
    for (const ParameterSpec& p : group.parameters) parameters.push_back({{"id", properties::encode_input(p.id)}, {"numel", p.numel}});
    out.push_back({{"id", properties::encode_input(group.id)},
                   {"hyperparameters", properties::encode_input(properties::HyperInput{kind, group.hyper})},
                   {"param_dtype", properties::encode_input(group.param_dtype)},
                   {"grad_dtype", properties::encode_input(group.grad_dtype)},
                   {"parameters", parameters}});
  }
  return out;
}

std::vector<GroupConfig> decode_groups(const json& list, OptimizerKind kind, const char* name) {
  if (!list.is_array() || list.empty()) throw CaseFileError(std::string("'") + name + "' must be a list of groups, at least one");
  std::vector<GroupConfig> groups;
  std::set<std::uint64_t> group_ids;
  for (std::size_t g = 0; g < list.size(); ++g) {
    const json& entry = list[g];
    try {
      if (!entry.is_object()) throw CaseFileError("a group must be an object");
      case_fields::refuse_unknown_fields(entry, {"id", "hyperparameters", "param_dtype", "grad_dtype", "parameters"});
      GroupConfig group;
      group.id = identifier(entry, "id");
      if (!group_ids.insert(group.id).second) throw CaseFileError("group id " + std::to_string(group.id) + " is given twice");
      if (!entry.contains("hyperparameters")) throw CaseFileError("'hyperparameters' is missing");
      properties::HyperInput hyper;
      properties::decode_input(entry.at("hyperparameters"), hyper);
      if (hyper.kind != kind) throw CaseFileError("the hyperparameters are " + std::string(optimizer_info(hyper.kind).name) + "'s, not the case's optimizer's");
      group.hyper = hyper.hyper;  // decode_input refused values outside the optimizer's domain
      if (group.hyper.lr == 0.0f) throw CaseFileError("lr is 0, which hides every error in the parameters; these cases draw lr > 0");
      group.param_dtype = float_dtype(entry, "param_dtype");
      group.grad_dtype = float_dtype(entry, "grad_dtype");
      const json& parameters = entry.value("parameters", json());
      if (!parameters.is_array() || parameters.empty()) throw CaseFileError("'parameters' must be a list of {id, numel}, at least one");
      for (const json& p : parameters) {
        if (!p.is_object()) throw CaseFileError("a parameter must be an object {id, numel}");
        case_fields::refuse_unknown_fields(p, {"id", "numel"});
        group.parameters.push_back({identifier(p, "id"), whole_number(p, "numel", 1, kMostElements)});
      }
      groups.push_back(std::move(group));
    } catch (const CaseFileError& error) {
      throw CaseFileError(std::string(name) + "[" + std::to_string(g) + "]: " + error.what());
    }
  }
  return groups;
}

// The parameter ids of some groups, each once (throws naming a repeated one).
std::set<std::uint64_t> parameter_ids(const std::vector<GroupConfig>& groups, const char* name) {
  std::set<std::uint64_t> ids;
  for (const GroupConfig& group : groups) {
    for (const ParameterSpec& p : group.parameters) {
      if (!ids.insert(p.id).second) throw CaseFileError(std::string(name) + ": parameter id " + std::to_string(p.id) + " is given twice");
    }
  }
  return ids;
}

std::int64_t numel_of(const ShardedConfig& config, std::uint64_t id) {
  for (const GroupConfig& group : config.groups) {
    for (const ParameterSpec& p : group.parameters) {
      if (p.id == id) return p.numel;
    }
  }
  return 0;
}

// `groups` without parameter `id`, and without the groups that it leaves empty.
std::vector<GroupConfig> without_parameter(std::vector<GroupConfig> groups, std::uint64_t id) {
  for (GroupConfig& group : groups) std::erase_if(group.parameters, [id](const ParameterSpec& p) { return p.id == id; });
  std::erase_if(groups, [](const GroupConfig& group) { return group.parameters.empty(); });
  return groups;
}

// The smaller case with fewer elements of `id`: its recorded values cut to the first `numel`.
ShardedCase with_numel(const ShardedCase& c, std::uint64_t id, std::int64_t numel) {
  ShardedCase smaller = c;
  for (auto* groups : {&smaller.config.groups, &smaller.config.regrouped}) {
    for (GroupConfig& group : *groups) {
      for (ParameterSpec& p : group.parameters) p.numel = p.id == id ? numel : p.numel;
    }
  }
  auto values = std::make_shared<RecordedValues>(*c.config.recorded);
  values->initial.at(id).resize(static_cast<std::size_t>(numel));
  for (auto& [key, gradient] : values->gradients) {
    if (std::get<2>(key) == id) gradient.resize(static_cast<std::size_t>(numel));
  }
  smaller.config.recorded = values;
  return smaller;
}



}  // namespace

RecordedValues record_values(const ShardedCase& c) {
  RecordedValues values;
  const RecordedValues* recorded = c.config.recorded.get();
  for (const GroupConfig& group : c.config.groups) {
    for (const ParameterSpec& p : group.parameters) {
      values.initial[p.id] = initial_parameter(recorded, c.config.seed, p.id, p.numel, group.param_dtype);
    }
  }
  for_each_gradient(c, [&](std::int64_t step, int m, std::uint64_t id, std::int64_t numel, DType dtype) {
    values.gradients[{step, m, id}] = microbatch_gradient(recorded, c.config.seed, step, m, id, numel, dtype);
  });
  return values;
}

json encode_sharded_case(const ShardedCase& c) {
  const ShardedConfig& config = c.config;
  const RecordedValues values = record_values(c);  // only what the case reads
  json initial = json::object();
  for (const GroupConfig& group : config.groups) {
    for (const ParameterSpec& p : group.parameters) {
      initial[std::to_string(p.id)] = properties::encode_floats(values.initial.at(p.id), group.param_dtype);
    }
  }
  json gradients = json::array();
  for_each_gradient(c, [&](std::int64_t step, int m, std::uint64_t id, std::int64_t, DType dtype) {
    gradients.push_back({{"step", step}, {"microbatch", m}, {"parameter", properties::encode_input(id)},
                         {"values", properties::encode_floats(values.gradients.at({step, m, id}), dtype)}});
  });
  json out = {{"optimizer", std::string(optimizer_info(config.kind).name)},
              {"states", config.eight_bit ? 8 : 32},
              {"blocksize", config.blocksize},
              {"layout", std::string(layout_name(config.layout))},
              {"microbatches", config.microbatches},
              {"groups", encode_groups(config.groups, config.kind)},
              {"regroup_step", config.regroup_step}};
  if (config.regroup_step != 0) out["regrouped"] = encode_groups(config.regrouped, config.kind);
  if (c.resume) {
    out["resume"] = {{"save_world", c.resume->save_world}, {"load_world", c.resume->load_world},
                     {"steps_before", c.resume->steps_before}, {"steps_after", c.resume->steps_after}};
  } else {
    out["steps"] = c.steps;
  }
  out["initial"] = initial;
  out["gradients"] = gradients;
  return out;
}

ShardedCase decode_sharded_case(const json& j) {
  if (!j.is_object()) throw CaseFileError("the case must be an object");
  case_fields::refuse_unknown_fields(j, {"optimizer", "states", "blocksize", "layout", "microbatches", "groups", "regroup_step",
                                         "regrouped", "resume", "steps", "initial", "gradients"});
  ShardedCase c;
  ShardedConfig& config = c.config;
  if (!j.contains("optimizer") || !j.at("optimizer").is_string()) throw CaseFileError("'optimizer' must be an optimizer's name");
  try {
    config.kind = parse_optimizer(j.at("optimizer").get<std::string>());
    config.layout = parse_layout(j.value("layout", std::string()));
  } catch (const Error& error) {
    throw case_fields::case_file_error("", error);
  }
  const std::int64_t states = whole_number(j, "states", INT64_MIN, INT64_MAX);
  if (states != 8 && states != 32) {
    throw CaseFileError("'states' is " + std::to_string(states) + "; it must be 32 (fp32 states) or 8 (8-bit states)");
  }
  config.eight_bit = states == 8;
  if (config.eight_bit && !has_8bit_variant(config.kind)) {
    throw CaseFileError(std::string(optimizer_info(config.kind).name) + " has no 8-bit states; 'states' must be 32");
  }
  config.blocksize = whole_number(j, "blocksize", 1, 4096);
  if (config.blocksize < 64 || (config.blocksize & (config.blocksize - 1)) != 0) {
    throw CaseFileError("'blocksize' must be a power of two from 64 to 4096");
  }
  config.microbatches = static_cast<int>(whole_number(j, "microbatches", 1, kMostMicrobatches));
  config.groups = decode_groups(j.value("groups", json()), config.kind, "groups");
  const std::set<std::uint64_t> ids = parameter_ids(config.groups, "groups");
  if (config.eight_bit) {
    for (const GroupConfig& group : config.groups) {
      if (group.hyper.max_unorm != 0.0f) throw CaseFileError("8-bit states take no max_unorm; set it to 0 in every group");
    }
  }
  const DType dtype = config.groups.front().param_dtype;
  for (const GroupConfig& group : config.groups) {
    if (group.param_dtype != dtype) throw CaseFileError("every group's param_dtype must be the same (the row's dtype)");
  }
  config.regroup_step = static_cast<int>(whole_number(j, "regroup_step", 0, 1000));
  if (config.regroup_step == 1) throw CaseFileError("'regroup_step' must be 0 (never) or a step from 2 on");
  if (config.regroup_step != 0) {
    config.regrouped = decode_groups(j.value("regrouped", json()), config.kind, "regrouped");
    if (parameter_ids(config.regrouped, "regrouped") != ids) throw CaseFileError("'regrouped' must hold the same parameter ids as 'groups'");
    for (const GroupConfig& group : config.regrouped) {
      if (group.param_dtype != dtype) throw CaseFileError("every regrouped group's param_dtype must be the groups' one");
      for (const ParameterSpec& p : group.parameters) {
        if (p.numel != numel_of(config, p.id)) throw CaseFileError("'regrouped': parameter " + std::to_string(p.id) + " changes its numel");
      }
    }
  } else if (j.contains("regrouped")) {
    throw CaseFileError("'regrouped' is given but 'regroup_step' is 0; remove one of them");
  }
  if (j.contains("resume")) {
    const json& r = j.at("resume");
    if (!r.is_object()) throw CaseFileError("'resume' must be an object");
    try {
      case_fields::refuse_unknown_fields(r, {"save_world", "load_world", "steps_before", "steps_after"});
      c.resume = ResumeCase{static_cast<int>(whole_number(r, "save_world", 1, 64)), static_cast<int>(whole_number(r, "load_world", 1, 64)),
                            static_cast<int>(whole_number(r, "steps_before", 1, 1000)), static_cast<int>(whole_number(r, "steps_after", 1, 1000))};
    } catch (const CaseFileError& error) {
      throw CaseFileError(std::string("resume: ") + error.what());
    }
  } else {
    if (!j.contains("steps")) throw CaseFileError("the case has neither 'steps' (a P6 case) nor 'resume' (a P11 case)");
    c.steps = static_cast<int>(whole_number(j, "steps", 1, 1000));
  }

  auto values = std::make_shared<RecordedValues>();
  const json& initial = j.value("initial", json());
  if (!initial.is_object()) throw CaseFileError("'initial' must map each parameter id to its values");
  for (const GroupConfig& group : config.groups) {
    for (const ParameterSpec& p : group.parameters) {
      const std::string key = std::to_string(p.id);
      if (!initial.contains(key)) throw CaseFileError("'initial' has no values of parameter " + key);
      try {
        values->initial[p.id] = properties::decode_floats(initial.at(key), group.param_dtype, static_cast<std::size_t>(p.numel));
      } catch (const CaseFileError& error) {
        throw CaseFileError("initial " + key + ": " + error.what());
      }
      if (values->initial[p.id].size() != static_cast<std::size_t>(p.numel)) {
        throw CaseFileError("initial " + key + " holds " + std::to_string(values->initial[p.id].size()) + " values, not its numel " +
                            std::to_string(p.numel));
      }
    }
  }
  const json& gradients = j.value("gradients", json());
  if (!gradients.is_array()) throw CaseFileError("'gradients' must be a list of {step, microbatch, parameter, values}");
  std::map<std::tuple<std::int64_t, int, std::uint64_t>, const json*> listed;
  for (const json& g : gradients) {
    if (!g.is_object() || !g.contains("values")) throw CaseFileError("a gradient must be an object {step, microbatch, parameter, values}");
    case_fields::refuse_unknown_fields(g, {"step", "microbatch", "parameter", "values"});
    const auto key = std::make_tuple(whole_number(g, "step", 1, 2000), static_cast<int>(whole_number(g, "microbatch", 0, kMostMicrobatches - 1)),
                                     identifier(g, "parameter"));
    if (!listed.emplace(key, &g.at("values")).second) {
      throw CaseFileError("the gradient of parameter " + std::to_string(std::get<2>(key)) + " at step " + std::to_string(std::get<0>(key)) +
                          ", microbatch " + std::to_string(std::get<1>(key)) + " is given twice");
    }
  }
  if (initial.size() != ids.size()) {
    for (const auto& [key, value] : initial.items()) {
      const bool known = std::any_of(ids.begin(), ids.end(), [&](std::uint64_t id) { return std::to_string(id) == key; });
      if (!known) throw CaseFileError("'initial' holds values of '" + (key.size() > 64 ? key.substr(0, 64) + "..." : key) + "', which is no parameter of 'groups'");
    }
  }
  std::size_t read_gradients = 0;
  for_each_gradient(c, [&](std::int64_t step, int m, std::uint64_t id, std::int64_t numel, DType grad_dtype) {
    ++read_gradients;
    const std::string what = "the gradient of parameter " + std::to_string(id) + " at step " + std::to_string(step) + ", microbatch " + std::to_string(m);
    const auto found = listed.find({step, m, id});
    if (found == listed.end()) throw CaseFileError("'gradients' lacks " + what);
    std::vector<float> decoded;
    try {
      decoded = properties::decode_floats(*found->second, grad_dtype, static_cast<std::size_t>(numel));
    } catch (const CaseFileError& error) {
      throw CaseFileError(what + ": " + error.what());
    }
    if (decoded.size() != static_cast<std::size_t>(numel)) throw CaseFileError(what + " holds " + std::to_string(decoded.size()) + " values, not " + std::to_string(numel));
    values->gradients[{step, m, id}] = std::move(decoded);
  });
  if (read_gradients != listed.size()) {
    for (const auto& [key, values_json] : listed) {
      if (values->gradients.count(key) == 0) {
        throw CaseFileError("'gradients' holds the gradient of parameter " + std::to_string(std::get<2>(key)) + " at step " +
                            std::to_string(std::get<0>(key)) + ", microbatch " + std::to_string(std::get<1>(key)) +
                            ", which no step of the case reads; remove it");
      }
    }
  }
  config.recorded = std::move(values);
  return c;
}

std::vector<SmallerCase> smaller_cases(const ShardedCase& original, int world) {
  // Only the values the case reads: a step that simplified values no run reads would be kept for free.
  ShardedCase c = original;
  c.config.recorded = std::make_shared<const RecordedValues>(record_values(original));
  std::vector<SmallerCase> out;
  const auto add = [&out](ShardedCase smaller, int w, std::string change) { out.push_back({std::move(smaller), w, std::move(change)}); };
  // Fewer ranks (a resume needs its worlds).
  const int least_world = c.resume ? std::max(c.resume->save_world, c.resume->load_world) : 2;
  for (int w = least_world; w < world; ++w) add(c, w, counted(w, "rank", "ranks"));
  if (c.resume) {
    for (std::int64_t n : smaller_sizes(c.resume->save_world, 1)) {
      ShardedCase smaller = c;
      smaller.resume->save_world = static_cast<int>(n);
      add(smaller, world, "saved on " + counted(n, "rank", "ranks"));
    }
    for (std::int64_t n : smaller_sizes(c.resume->load_world, 1)) {
      ShardedCase smaller = c;
      smaller.resume->load_world = static_cast<int>(n);
      add(smaller, world, "resumed on " + counted(n, "rank", "ranks"));
    }
    for (std::int64_t n : smaller_sizes(c.resume->steps_before, 1)) {
      ShardedCase smaller = c;
      smaller.resume->steps_before = static_cast<int>(n);
      add(smaller, world, counted(n, "step", "steps") + " before saving");
    }
    for (std::int64_t n : smaller_sizes(c.resume->steps_after, 1)) {
      ShardedCase smaller = c;
      smaller.resume->steps_after = static_cast<int>(n);
      add(smaller, world, counted(n, "step", "steps") + " after resuming");
    }
  } else {
    for (std::int64_t n : smaller_sizes(c.steps, 1)) {
      ShardedCase smaller = c;
      smaller.steps = static_cast<int>(n);
      add(smaller, world, counted(n, "step", "steps"));
    }
  }
  for (std::int64_t n : smaller_sizes(c.config.microbatches, 1)) {
    ShardedCase smaller = c;
    smaller.config.microbatches = static_cast<int>(n);
    add(smaller, world, counted(n, "microbatch", "microbatches"));
  }
  if (c.config.regroup_step != 0) {
    ShardedCase smaller = c;
    smaller.config.regroup_step = 0;
    smaller.config.regrouped.clear();
    add(smaller, world, "no regrouping");
  }
  std::vector<ParameterSpec> all;
  for (const GroupConfig& group : c.config.groups) all.insert(all.end(), group.parameters.begin(), group.parameters.end());
  if (c.config.groups.size() > 1) {
    for (const GroupConfig& group : c.config.groups) {
      ShardedCase smaller = c;
      for (const ParameterSpec& p : group.parameters) {
        smaller.config.groups = without_parameter(smaller.config.groups, p.id);
        smaller.config.regrouped = without_parameter(smaller.config.regrouped, p.id);
      }
      add(smaller, world, "drop group " + std::to_string(group.id));
    }
  }
  if (all.size() > 1) {
    for (const ParameterSpec& p : all) {
      ShardedCase smaller = c;
      smaller.config.groups = without_parameter(smaller.config.groups, p.id);
      smaller.config.regrouped = without_parameter(smaller.config.regrouped, p.id);
      add(smaller, world, "drop parameter " + std::to_string(p.id));
    }
  }
  for (const ParameterSpec& p : all) {
    for (std::int64_t n : smaller_sizes(p.numel, 1)) add(with_numel(c, p.id, n), world, counted(n, "element", "elements") + " in parameter " + std::to_string(p.id));
  }
  case_fields::add_simpler_values(
      c,
      [](ShardedCase& simpler) {
        auto values = std::make_shared<RecordedValues>(*simpler.config.recorded);
        simpler.config.recorded = values;
        std::vector<std::vector<float>*> lists;
        for (auto& [id, initial] : values->initial) lists.push_back(&initial);
        for (auto& [key, gradient] : values->gradients) lists.push_back(&gradient);
        return lists;
      },
      [&](ShardedCase simpler, std::string change) {
        add(std::move(simpler), world, std::move(change));
        out.back().simplifies_values = true;
      });
  // A regrouping that no longer moves anything, or happens after the last step, is dropped.
  for (SmallerCase& s : out) {
    ShardedConfig& config = s.smaller.config;
    if (config.regroup_step != 0 && (config.regroup_step > s.smaller.total_steps() || config.regrouped.empty())) {
      config.regroup_step = 0;
      config.regrouped.clear();
    }
  }
  return out;
}

}  // namespace bitparity::distributed
