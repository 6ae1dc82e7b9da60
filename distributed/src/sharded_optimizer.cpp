#include "bitparity/distributed/sharded_optimizer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "bitparity/distributed/exact_rounding.hpp"
#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/distributed/value_source.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/generators.hpp"

namespace bitparity::distributed {

namespace {

// Elements [offset, offset + length) of a contiguous host buffer, as their own tensor.
TensorView slice(const TensorView& buffer, std::int64_t offset, std::int64_t length) {
  TensorView view = buffer;
  view.data = static_cast<std::uint8_t*>(buffer.data) + dtype_storage_bytes(buffer.dtype, offset);
  view.storage_elements = length;
  view.index = make_index({length}, {1}, 0);
  return view;
}

std::vector<TensorView> state_slices(const OptimizerState& state, std::int64_t offset, std::int64_t length) {
  std::vector<TensorView> views;
  for (const TensorView& buffer : state.fp32_states()) views.push_back(slice(buffer, offset, length));
  return views;
}

std::vector<QuantizedState> quantized_slices(const OptimizerState& state, std::int64_t offset, std::int64_t length,
                                             std::int64_t blocksize) {
  std::vector<QuantizedState> views;
  for (const QuantizedState& buffer : state.quantized_states()) {
    views.push_back({slice(buffer.codes, offset, length),
                     slice(buffer.absmax, offset / blocksize, (length + blocksize - 1) / blocksize), buffer.map});
  }
  return views;
}

struct Registered {
  std::uint64_t id;
  std::size_t group, index_in_group;
  std::int64_t numel;
};

struct StoredGradient {
  std::vector<ExactFloatSum> exact;
  std::vector<float> fp32;  // the same contributions summed in fp32, in arrival order
};

}  // namespace

std::string_view fault_name(DriverFault fault) {
  switch (fault) {
    case DriverFault::none: return "none";
    case DriverFault::unaligned_shards: return "sharded-unaligned-shards";
    case DriverFault::fp32_norm_in_rank_order: return "sharded-fp32-norm-in-rank-order";
    case DriverFault::gradients_by_position: return "sharded-gradients-by-position";
    case DriverFault::shared_key_space: return "sharded-shared-key-space";
    case DriverFault::padding_not_stripped: return "sharded-padding-not-stripped";
    case DriverFault::fp32_reduce_in_rank_order: return "sharded-fp32-reduce-in-rank-order";
    case DriverFault::stale_gradient_shard: return "sharded-stale-gradient-shard";
    case DriverFault::state_lost_on_regroup: return "sharded-state-lost-on-regroup";
  }
  return "?";
}

std::string_view fault_description(DriverFault fault) {
  switch (fault) {
    case DriverFault::none: return "the driver as written";
    case DriverFault::unaligned_shards: return "shard boundaries and parameter starts ignore the 8-bit block";
    case DriverFault::fp32_norm_in_rank_order: return "LAMB/LARS/max_unorm partial norms rounded to fp32 and summed by rank";
    case DriverFault::gradients_by_position: return "gradients matched to parameters by arrival order, not by id";
    case DriverFault::shared_key_space: return "gradient store keyed per group: two groups' keys collide";
    case DriverFault::padding_not_stripped: return "gathering reads parameters where they would be without padding";
    case DriverFault::fp32_reduce_in_rank_order: return "reduce-scatter of fp32 partial sums added in rank order";
    case DriverFault::stale_gradient_shard: return "the last rank steps with the previous step's gradient shard";
    case DriverFault::state_lost_on_regroup: return "a parameter moved to another group restarts with zeroed states";
  }
  return "?";
}

DriverFault parse_fault(std::string_view name) {
  std::string names;
  for (DriverFault fault : kDriverFaults) {
    if (fault_name(fault) == name) return fault;
    names += (names.empty() ? "" : ", ") + std::string(fault_name(fault));
  }
  throw Error(ErrorCode::invalid_argument, "unknown sharded mutant '" + std::string(name) + "'; expected one of " + names);
}

std::int64_t shard_alignment(const ShardedConfig& config) { return config.eight_bit ? config.blocksize : 1; }

ShardedOptimizer::ShardedOptimizer(const ShardedConfig& config, Communicator& communicator,
                                   fixtures::Implementation& implementation)
    : config_(config), communicator_(communicator), implementation_(implementation) {
  for (const GroupConfig& group : config.groups) groups_.push_back(make_group(group, config_.maps));
}

// A group's shard on this rank: initial parameter values, zeroed states.
GroupShardState ShardedOptimizer::make_group(const GroupConfig& group, const StateMaps& maps) const {
  const int world = communicator_.size(), rank = communicator_.rank();
  const std::int64_t alignment = config_.fault == DriverFault::unaligned_shards ? 1 : shard_alignment(config_);
  GroupShardState shard;
  shard.shards = plan_group_shards(group.parameters, config_.layout, world, alignment);
  const std::int64_t n = shard.shards.shard_elements;
  shard.param = fixtures::HostTensor::buffer(group.param_dtype, n);
  shard.grad = fixtures::HostTensor::buffer(group.grad_dtype, n);
  std::vector<float> values(static_cast<std::size_t>(n), 0.0f);
  for (const Piece& piece : shard.shards.of_rank(rank)) {
    std::int64_t numel = 0;
    for (const auto& p : group.parameters) numel = p.id == piece.parameter_id ? p.numel : numel;
    const std::vector<float> initial = initial_parameter(config_.recorded.get(), config_.seed, piece.parameter_id, numel, group.param_dtype);
    for (std::int64_t j = 0; j < piece.length; ++j) {
      values[static_cast<std::size_t>(piece.shard_offset + j)] = initial[static_cast<std::size_t>(piece.parameter_offset + j)];
    }
  }
  fixtures::write_logical(shard.param.view(), values);
  shard.state = std::make_unique<OptimizerState>(config_.kind, n, Device::cpu(),
                                                 StateOptions{config_.eight_bit, config_.blocksize, 0, maps});
  return shard;
}

namespace {

std::vector<std::uint8_t> gather_bytes(Communicator& communicator, const void* data, std::size_t bytes) {
  std::vector<std::uint8_t> all(bytes * static_cast<std::size_t>(communicator.size()));
  communicator.all_gather(data, bytes, all.data());
  return all;
}

// Copies absmax blocks, clamped to both buffers (under the unaligned-shards fault a piece may
// start inside a block, and its blocks may run past a buffer).
void copy_blocks(const std::vector<std::uint8_t>& source, std::int64_t from, std::uint8_t* target, std::int64_t target_blocks,
                 std::int64_t to, std::int64_t count) {
  count = std::min({count, static_cast<std::int64_t>(source.size() / 4) - from, target_blocks - to});
  if (count > 0) std::memcpy(target + to * 4, source.data() + from * 4, static_cast<std::size_t>(count * 4));
}

// Copies `length` elements of `element_bytes` from element `from` of `source` to element `to` of `target`.
void copy_elements(const std::uint8_t* source, std::int64_t from, std::uint8_t* target, std::int64_t to, std::int64_t length,
                   std::int64_t element_bytes) {
  std::memcpy(target + to * element_bytes, source + from * element_bytes, static_cast<std::size_t>(length * element_bytes));
}

}  // namespace

WholeParameters ShardedOptimizer::whole_parameters(bool keep_padding) {
  const int world = communicator_.size();
  const std::int64_t bs = config_.blocksize;
  const auto blocks_of = [&](std::int64_t length) { return (length + bs - 1) / bs; };
  WholeParameters whole;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const GroupConfig& config = config_.groups[g];
    const GroupShardState& group = groups_[g];
    const std::int64_t n = group.shards.shard_elements, param_bytes = dtype_storage_bytes(config.param_dtype, 1);
    const std::int64_t state_bytes = config_.eight_bit ? 1 : 4;
    const auto params = gather_bytes(communicator_, group.param.view().data, static_cast<std::size_t>(n * param_bytes));
    std::vector<std::vector<std::uint8_t>> states, absmax;
    if (config_.eight_bit) {
      for (const QuantizedState& q : group.state->quantized_states()) {
        states.push_back(gather_bytes(communicator_, q.codes.data, static_cast<std::size_t>(n)));
        absmax.push_back(gather_bytes(communicator_, q.absmax.data, static_cast<std::size_t>(q.absmax.numel()) * 4));
      }
    } else {
      for (const TensorView& state : group.state->fp32_states()) states.push_back(gather_bytes(communicator_, state.data, static_cast<std::size_t>(n) * 4));
    }
    const std::int64_t absmax_per_rank = absmax.empty() ? 0 : static_cast<std::int64_t>(absmax[0].size() / 4) / world;
    for (const auto& parameter : config.parameters) {
      WholeParameter& w = whole[parameter.id];
      w.group_id = config.id;
      w.param.assign(static_cast<std::size_t>(parameter.numel * param_bytes), 0);
      w.states.assign(states.size(), std::vector<std::uint8_t>(static_cast<std::size_t>(parameter.numel * state_bytes)));
      w.absmax.assign(absmax.size(), std::vector<std::uint8_t>(static_cast<std::size_t>(blocks_of(parameter.numel) * 4)));
    }
    if (keep_padding) {
      // The fault: the gathered shards cut into parameters by their sizes alone, so padding and
      // other parameters' pieces are read as this parameter's elements.
      std::int64_t start = 0;
      for (const auto& parameter : config.parameters) {
        WholeParameter& w = whole[parameter.id];
        const std::int64_t length = std::min(parameter.numel, world * n - start);
        copy_elements(params.data(), start, w.param.data(), 0, length, param_bytes);
        for (std::size_t k = 0; k < states.size(); ++k) copy_elements(states[k].data(), start, w.states[k].data(), 0, length, state_bytes);
        for (std::size_t k = 0; k < absmax.size(); ++k) {
          copy_blocks(absmax[k], start / bs, w.absmax[k].data(), static_cast<std::int64_t>(w.absmax[k].size() / 4), 0, blocks_of(length));
        }
        start += parameter.numel;
      }
      continue;
    }
    for (int r = 0; r < world; ++r) {
      for (const Piece& piece : group.shards.of_rank(r)) {
        WholeParameter& w = whole[piece.parameter_id];
        copy_elements(params.data(), r * n + piece.shard_offset, w.param.data(), piece.parameter_offset, piece.length, param_bytes);
        for (std::size_t k = 0; k < states.size(); ++k) {
          copy_elements(states[k].data(), r * n + piece.shard_offset, w.states[k].data(), piece.parameter_offset, piece.length, state_bytes);
        }
        for (std::size_t k = 0; k < absmax.size(); ++k) {  // pieces start on block boundaries
          copy_blocks(absmax[k], r * absmax_per_rank + piece.shard_offset / bs, w.absmax[k].data(),
                      static_cast<std::int64_t>(w.absmax[k].size() / 4), piece.parameter_offset / bs, blocks_of(piece.length));
        }
      }
    }
  }
  return whole;
}

void ShardedOptimizer::place_whole_parameters(const WholeParameters& whole, bool moved_states_zeroed) {
  const int rank = communicator_.rank();
  const std::int64_t bs = config_.blocksize;
  const auto blocks_of = [&](std::int64_t length) { return (length + bs - 1) / bs; };
  groups_.clear();
  for (const GroupConfig& config : config_.groups) {
    GroupShardState group = make_group(config, config_.maps);
    const std::int64_t param_bytes = dtype_storage_bytes(config.param_dtype, 1);
    for (const Piece& piece : group.shards.of_rank(rank)) {
      const WholeParameter& w = whole.at(piece.parameter_id);
      copy_elements(w.param.data(), piece.parameter_offset, static_cast<std::uint8_t*>(group.param.view().data),
                    piece.shard_offset, piece.length, param_bytes);
      if (moved_states_zeroed && w.group_id != config.id) continue;
      if (config_.eight_bit) {
        const auto quantized = group.state->quantized_states();
        for (std::size_t k = 0; k < quantized.size() && k < w.states.size(); ++k) {
          copy_elements(w.states[k].data(), piece.parameter_offset, static_cast<std::uint8_t*>(quantized[k].codes.data),
                        piece.shard_offset, piece.length, 1);
          if (k < w.absmax.size()) {
            copy_blocks(w.absmax[k], piece.parameter_offset / bs, static_cast<std::uint8_t*>(quantized[k].absmax.data),
                        quantized[k].absmax.numel(), piece.shard_offset / bs, blocks_of(piece.length));
          }
        }
      } else {
        const auto fp32 = group.state->fp32_states();
        for (std::size_t k = 0; k < fp32.size() && k < w.states.size(); ++k) {
          copy_elements(w.states[k].data(), piece.parameter_offset, static_cast<std::uint8_t*>(fp32[k].data), piece.shard_offset,
                        piece.length, 4);
        }
      }
    }
    groups_.push_back(std::move(group));
  }
}

void ShardedOptimizer::restore(std::vector<GroupConfig> groups, const WholeParameters& whole, std::int64_t completed_steps,
                               const StateMaps& maps) {
  config_.groups = std::move(groups);
  config_.maps = maps;
  place_whole_parameters(whole, false);
  completed_steps_ = completed_steps;
  gathered_.clear();
}

void ShardedOptimizer::restore_shards(std::vector<GroupConfig> groups, std::vector<GroupShardState> shards,
                                      std::int64_t completed_steps, const StateMaps& maps) {
  config_.groups = std::move(groups);
  config_.maps = maps;
  groups_ = std::move(shards);
  completed_steps_ = completed_steps;
  gathered_.clear();
}

GroupShardState ShardedOptimizer::empty_group(std::size_t g, const StateMaps& maps) const { return make_group(config_.groups.at(g), maps); }

void ShardedOptimizer::regroup(std::int64_t step) {
  set_activity("step " + std::to_string(step) + ": moving parameters between groups");
  const WholeParameters whole = whole_parameters(false);
  config_.groups = config_.regrouped;
  place_whole_parameters(whole, config_.fault == DriverFault::state_lost_on_regroup);
}

bool ShardedOptimizer::step(std::int64_t step) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); };
  if (step == config_.regroup_step) regroup(step);
  ++completed_steps_;
  auto start = Clock::now();
  reduce_gradients(step);
  phases_.reduce = seconds_since(start);
  start = Clock::now();
  set_activity("step " + std::to_string(step) + ": agreeing on a non-finite gradient");
  bool local_nonfinite = false;
  for (const auto& group : groups_) {
    for (float g : fixtures::read_logical(group.grad.view())) local_nonfinite = local_nonfinite || !std::isfinite(g);
  }
  const bool skip = communicator_.all_reduce_any(local_nonfinite);
  if (!skip) {
    for (std::size_t g = 0; g < groups_.size(); ++g) step_group(g, step);
  }
  phases_.step = seconds_since(start);
  start = Clock::now();
  gathered_.clear();
  for (std::size_t g = 0; g < groups_.size(); ++g) gather_group(g);
  phases_.gather = seconds_since(start);
  return skip;
}

void ShardedOptimizer::reduce_gradients(std::int64_t step) {
  const int world = communicator_.size(), rank = communicator_.rank();
  set_activity("step " + std::to_string(step) + ": backward");
  std::vector<Registered> registered;
  for (std::size_t g = 0; g < config_.groups.size(); ++g) {
    for (std::size_t i = 0; i < config_.groups[g].parameters.size(); ++i) {
      registered.push_back({config_.groups[g].parameters[i].id, g, i, config_.groups[g].parameters[i].numel});
    }
  }
  // Backward hooks fire in reverse registration order; the store is keyed by stable id.
  const auto stored_key = [&](std::size_t arrival, const Registered& r) -> std::uint64_t {
    if (config_.fault == DriverFault::gradients_by_position) return arrival;
    if (config_.fault == DriverFault::shared_key_space) return r.index_in_group;
    return r.id;
  };
  const auto lookup_key = [&](std::size_t registration, const Registered& r) -> std::uint64_t {
    if (config_.fault == DriverFault::gradients_by_position) return registration;
    if (config_.fault == DriverFault::shared_key_space) return r.index_in_group;
    return r.id;
  };
  std::map<std::uint64_t, StoredGradient> store;
  for (int m = rank; m < config_.microbatches; m += world) {
    for (std::size_t arrival = 0; arrival < registered.size(); ++arrival) {
      const Registered& r = registered[registered.size() - 1 - arrival];
      const auto values = microbatch_gradient(config_.recorded.get(), config_.seed, step, m, r.id, r.numel, config_.groups[r.group].grad_dtype);
      StoredGradient& stored = store[stored_key(arrival, r)];
      if (stored.exact.size() < values.size()) {
        stored.exact.resize(values.size());
        stored.fp32.resize(values.size(), 0.0f);
      }
      for (std::size_t i = 0; i < values.size(); ++i) {
        stored.exact[i].add(values[i]);
        stored.fp32[i] += values[i];
      }
    }
  }
  std::size_t registration = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    set_activity("step " + std::to_string(step) + ": reduce-scatter of group " + std::to_string(config_.groups[g].id));
    GroupShardState& group = groups_[g];
    const std::int64_t shard = group.shards.shard_elements;
    const auto total = static_cast<std::size_t>(world * shard);
    std::vector<ExactFloatSum> send(total);
    std::vector<float> send_fp32(total, 0.0f);
    for (const auto& parameter : config_.groups[g].parameters) {
      const Registered& r = registered[registration];
      const auto found = store.find(lookup_key(registration, r));
      ++registration;
      if (found == store.end()) continue;
      for (int owner = 0; owner < world; ++owner) {
        for (const Piece& piece : group.shards.of_rank(owner)) {
          if (piece.parameter_id != parameter.id) continue;
          for (std::int64_t j = 0; j < piece.length; ++j) {
            const auto from = static_cast<std::size_t>(piece.parameter_offset + j);
            if (from >= found->second.exact.size()) continue;
            const auto to = static_cast<std::size_t>(owner * shard + piece.shard_offset + j);
            send[to] = found->second.exact[from];
            send_fp32[to] = found->second.fp32[from];
          }
        }
      }
    }
    const DType dtype = config_.groups[g].grad_dtype;
    std::vector<float> reduced(static_cast<std::size_t>(shard));
    if (config_.fault == DriverFault::fp32_reduce_in_rank_order) {
      std::vector<float> all(total * static_cast<std::size_t>(world));
      communicator_.all_gather(send_fp32.data(), total * sizeof(float), all.data());
      for (std::int64_t i = 0; i < shard; ++i) {
        float sum = 0.0f;
        for (int r = 0; r < world; ++r) sum += all[static_cast<std::size_t>(r) * total + static_cast<std::size_t>(rank * shard + i)];
        reduced[static_cast<std::size_t>(i)] = properties::round_to_dtype(sum, dtype);
      }
    } else {
      std::vector<ExactFloatSum> mine(static_cast<std::size_t>(shard));
      communicator_.reduce_scatter(send.data(), mine.data(), static_cast<std::size_t>(shard));
      for (std::int64_t i = 0; i < shard; ++i) reduced[static_cast<std::size_t>(i)] = rounded_to(mine[static_cast<std::size_t>(i)], dtype);
    }
    const bool stale = config_.fault == DriverFault::stale_gradient_shard && rank == world - 1 && !group.previous_grad.empty();
    fixtures::write_logical(group.grad.view(), stale ? group.previous_grad : reduced);
    group.previous_grad = reduced;
  }
}

void ShardedOptimizer::step_group(std::size_t g, std::int64_t step) {
  const int world = communicator_.size(), rank = communicator_.rank();
  GroupShardState& group = groups_[g];
  const GroupConfig& config = config_.groups[g];
  set_activity("step " + std::to_string(step) + ": optimizer step of group " + std::to_string(config.id));
  Hyperparameters h = config.hyper;
  h.step = completed_steps_;  // the optimizer's own count (restored by a checkpoint); gradients follow the training step
  const std::vector<Piece>& pieces = group.shards.of_rank(rank);
  const TensorView param = group.param.view(), grad = group.grad.view();
  if (!config_.eight_bit && needs_norm_pass(config_.kind, h)) {
    // Each parameter's sums of squares from every rank's pieces, merged exactly across ranks.
    const auto index_of = [&](std::uint64_t id) {
      for (std::size_t i = 0; i < config.parameters.size(); ++i) {
        if (config.parameters[i].id == id) return i;
      }
      throw Error(ErrorCode::invalid_argument, "piece of unknown parameter " + std::to_string(id));
    };
    std::vector<ExactSquareSum> sums(2 * config.parameters.size());
    for (const Piece& piece : pieces) {
      const NormSums partial = implementation_.optimizer_norm_sums(
          config_.kind, h, slice(param, piece.shard_offset, piece.length), slice(grad, piece.shard_offset, piece.length),
          state_slices(*group.state, piece.shard_offset, piece.length), {});
      sums[2 * index_of(piece.parameter_id)].merge(partial.param);
      sums[2 * index_of(piece.parameter_id) + 1].merge(partial.direction);
    }
    set_activity("step " + std::to_string(step) + ": norm all-reduce of group " + std::to_string(config.id));
    if (config_.fault == DriverFault::fp32_norm_in_rank_order) {
      // Each rank's partial sums rounded to fp32 and added in rank order, then taken as exact.
      std::vector<float> partials(sums.size()), all(sums.size() * static_cast<std::size_t>(world));
      for (std::size_t k = 0; k < sums.size(); ++k) partials[k] = static_cast<float>(sums[k].to_double());
      communicator_.all_gather(partials.data(), partials.size() * sizeof(float), all.data());
      for (std::size_t k = 0; k < sums.size(); ++k) {
        float total = 0.0f;
        for (int r = 0; r < world; ++r) total += all[static_cast<std::size_t>(r) * sums.size() + k];
        sums[k] = ExactSquareSum{};
        sums[k].add_fp32(total);
      }
    } else {
      communicator_.all_reduce(sums.data(), sums.size());
    }
    for (const Piece& piece : pieces) {
      const std::size_t i = index_of(piece.parameter_id);
      implementation_.optimizer_step_with_norms(config_.kind, h, slice(param, piece.shard_offset, piece.length),
                                                slice(grad, piece.shard_offset, piece.length),
                                                state_slices(*group.state, piece.shard_offset, piece.length),
                                                NormSums{sums[2 * i], sums[2 * i + 1]}, {});
    }
    return;
  }
  // Elementwise steps: zero-3 steps each slice as its own tensor; the flat layouts step the whole
  // shard at once, padding included (it holds zeros and stays out of every parameter's blocks).
  const auto run = [&](std::int64_t offset, std::int64_t length) {
    if (length == 0) return;
    if (config_.eight_bit) {
      implementation_.optimizer8_step(config_.kind, h, slice(param, offset, length), slice(grad, offset, length),
                                      quantized_slices(*group.state, offset, length, config_.blocksize), config_.blocksize, {});
    } else {
      implementation_.optimizer_step(config_.kind, h, slice(param, offset, length), slice(grad, offset, length),
                                     state_slices(*group.state, offset, length), {});
    }
  };
  if (config_.layout == ShardLayout::zero3) {
    for (const Piece& piece : pieces) run(piece.shard_offset, piece.length);
  } else {
    run(0, group.shards.shard_elements);
  }
}

void ShardedOptimizer::gather_group(std::size_t g) {
  const int world = communicator_.size();
  GroupShardState& group = groups_[g];
  const GroupConfig& config = config_.groups[g];
  set_activity("all-gather of group " + std::to_string(config.id));
  const std::int64_t shard = group.shards.shard_elements;
  const auto bytes = static_cast<std::size_t>(dtype_storage_bytes(config.param_dtype, shard));
  fixtures::HostTensor all = fixtures::HostTensor::buffer(config.param_dtype, shard * world);
  communicator_.all_gather(group.param.view().data, bytes, all.view().data);
  const std::vector<std::uint32_t> bits = fixtures::read_logical_bits(all.view());
  // Where the gatherer looks: the real plan, or one that forgets the alignment padding.
  const GroupShards located = config_.fault == DriverFault::padding_not_stripped
                                  ? plan_group_shards(config.parameters, config_.layout, world, 1)
                                  : group.shards;
  for (const auto& parameter : config.parameters) {
    std::vector<std::uint32_t>& out = gathered_[parameter.id];
    out.assign(static_cast<std::size_t>(parameter.numel), 0xFFFFFFFFu);
    for (int r = 0; r < world; ++r) {
      for (const Piece& piece : located.of_rank(r)) {
        if (piece.parameter_id != parameter.id) continue;
        for (std::int64_t j = 0; j < piece.length; ++j) {
          const auto at = static_cast<std::size_t>(r * located.shard_elements + piece.shard_offset + j);
          if (at < bits.size()) out[static_cast<std::size_t>(piece.parameter_offset + j)] = bits[at];
        }
      }
    }
  }
}

}  // namespace bitparity::distributed
