#include "bitparity/distributed/rank_parity.hpp"

#include <cmath>
#include <random>
#include <set>

#include "bitparity/distributed/exact_rounding.hpp"
#include "bitparity/distributed/hyperparameter_draw.hpp"
#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/distributed/unsharded_optimizer.hpp"
#include "bitparity/distributed/value_source.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include <cstring>

namespace bitparity::distributed {

namespace {

std::uint32_t float_bits_at(const TensorView& view, std::int64_t i) {
  std::uint32_t bits;
  std::memcpy(&bits, static_cast<const float*>(view.data) + i, sizeof bits);
  return bits;
}

void note_wrong(ParityTally& tally, std::int64_t& counter, const std::string& where) {
  if (tally.first_wrong.empty()) tally.first_wrong = where;
  ++counter;
}

}  // namespace

void compare_owned(const ShardedConfig& config, const GroupShardState& group, const UnshardedOptimizer& unsharded, int rank,
                   std::int64_t step, ParityTally& tally) {
  const auto grad_bits = fixtures::read_logical_bits(group.grad.view());
  for (const Piece& piece : group.shards.of_rank(rank)) {
    const UnshardedParameter& p = unsharded.parameter(piece.parameter_id);
    const auto reference_grad = fixtures::read_logical_bits(p.grad.view());
    const std::string at = "step " + std::to_string(step) + ", parameter " + std::to_string(piece.parameter_id) + " on rank " +
                           std::to_string(rank) + ": ";
    for (std::int64_t j = 0; j < piece.length; ++j) {
      ++tally.checked;
      if (grad_bits[static_cast<std::size_t>(piece.shard_offset + j)] != reference_grad[static_cast<std::size_t>(piece.parameter_offset + j)]) {
        note_wrong(tally, tally.wrong_gradients, at + "gradient element " + std::to_string(piece.parameter_offset + j));
      }
    }
    if (config.eight_bit) {
      const auto mine = group.state->quantized_states(), theirs = p.state->quantized_states();
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const auto* codes = static_cast<const std::uint8_t*>(mine[k].codes.data);
        const auto* reference_codes = static_cast<const std::uint8_t*>(theirs[k].codes.data);
        for (std::int64_t j = 0; j < piece.length; ++j) {
          if (codes[piece.shard_offset + j] != reference_codes[piece.parameter_offset + j]) {
            note_wrong(tally, tally.wrong_states, at + "state " + std::to_string(k) + " code of element " + std::to_string(piece.parameter_offset + j));
          }
        }
        const std::int64_t bs = config.blocksize, first = piece.parameter_offset / bs;
        const std::int64_t last = (piece.parameter_offset + piece.length + bs - 1) / bs;
        for (std::int64_t b = first; b < last; ++b) {
          if (float_bits_at(mine[k].absmax, piece.shard_offset / bs + (b - first)) != float_bits_at(theirs[k].absmax, b)) {
            note_wrong(tally, tally.wrong_states, at + "state " + std::to_string(k) + " absmax of block " + std::to_string(b));
          }
        }
      }
    } else {
      const auto mine = group.state->fp32_states(), theirs = p.state->fp32_states();
      for (std::size_t k = 0; k < mine.size(); ++k) {
        for (std::int64_t j = 0; j < piece.length; ++j) {
          if (float_bits_at(mine[k], piece.shard_offset + j) != float_bits_at(theirs[k], piece.parameter_offset + j)) {
            note_wrong(tally, tally.wrong_states, at + "state " + std::to_string(k) + " of element " + std::to_string(piece.parameter_offset + j));
          }
        }
      }
    }
  }
}

void compare_gathered(const ShardedOptimizer& sharded, const UnshardedOptimizer& unsharded, int rank, std::int64_t step,
                      ParityTally& tally) {
  for (const auto& [id, bits] : sharded.gathered_parameters()) {
    const auto reference = fixtures::read_logical_bits(unsharded.parameter(id).param.view());
    for (std::size_t i = 0; i < reference.size(); ++i) {
      ++tally.checked;
      if (bits[i] != reference[i]) {
        note_wrong(tally, tally.wrong_parameters, "step " + std::to_string(step) + ", parameter " + std::to_string(id) +
                                                      " element " + std::to_string(i) + " gathered on rank " + std::to_string(rank));
      }
    }
  }
}

ShardedConfig draw_sharded_config(OptimizerKind kind, bool eight_bit, DType param_dtype, ShardLayout layout,
                                  std::uint64_t seed, int world) {
  std::mt19937_64 random(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(world));
  ShardedConfig config;
  config.kind = kind;
  config.eight_bit = eight_bit;
  config.layout = layout;
  config.seed = seed;
  config.blocksize = std::array<std::int64_t, 3>{64, 128, 256}[random() % 3];
  config.microbatches = 1 + static_cast<int>(random() % 9);
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16};
  std::set<std::uint64_t> ids;
  const int groups = 1 + static_cast<int>(random() % 3);
  for (int g = 0; g < groups; ++g) {
    GroupConfig group;
    group.id = static_cast<std::uint64_t>(g);
    group.hyper = draw_hyperparameters(kind, eight_bit, random);
    group.param_dtype = param_dtype;
    group.grad_dtype = dtypes[random() % 3];
    const int count = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < count; ++i) {
      std::uint64_t id;
      do id = 1 + random() % 1000000; while (!ids.insert(id).second);
      // Mostly a few blocks with a ragged tail; now and then fewer elements than ranks.
      const std::int64_t numel = random() % 6 == 0 ? 1 + static_cast<std::int64_t>(random() % 7)
                                                   : 1 + static_cast<std::int64_t>(random() % (3 * config.blocksize + 50));
      group.parameters.push_back({id, numel});
    }
    config.groups.push_back(std::move(group));
  }
  // Half the cases move one parameter to another group (a new one when there is only one) before
  // step 2: its values and states must follow it by id.
  std::vector<std::size_t> movable;
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    if (config.groups[g].parameters.size() > 1) movable.push_back(g);
  }
  if (random() % 2 == 0 && !movable.empty()) {
    config.regroup_step = 2;
    config.regrouped = config.groups;
    const std::size_t from = movable[random() % movable.size()];
    auto& source = config.regrouped[from].parameters;
    const auto moved_at = source.begin() + static_cast<std::ptrdiff_t>(random() % source.size());
    const ParameterSpec moved = *moved_at;
    source.erase(moved_at);
    std::size_t to = random() % config.regrouped.size();
    if (to == from) {
      GroupConfig fresh;
      fresh.id = config.regrouped.size();
      fresh.hyper = draw_hyperparameters(kind, eight_bit, random);
      fresh.param_dtype = param_dtype;
      fresh.grad_dtype = dtypes[random() % 3];
      config.regrouped.push_back(std::move(fresh));
      to = config.regrouped.size() - 1;
    }
    auto& target = config.regrouped[to].parameters;
    target.insert(target.begin() + static_cast<std::ptrdiff_t>(random() % (target.size() + 1)), moved);
  }
  return config;
}

ParityTally run_rank_parity(const ShardedConfig& config, int steps, Communicator& communicator,
                            fixtures::Implementation& implementation) {
  ShardedOptimizer sharded(config, communicator, implementation);
  UnshardedOptimizer unsharded(config);
  ParityTally tally;
  const int rank = communicator.rank();
  for (std::int64_t step = 1; step <= steps; ++step) {
    const bool skipped = sharded.step(step);
    set_activity("step " + std::to_string(step) + ": unsharded step and comparison");
    unsharded.step(step);
    tally.skipped_steps += skipped ? 1 : 0;
    compare_gathered(sharded, unsharded, rank, step, tally);
    for (const auto& group : sharded.groups()) compare_owned(config, group, unsharded, rank, step, tally);
  }
  set_activity("summing the wrong elements of every rank");
  ParityTally total = tally;
  total.wrong_parameters = communicator.all_reduce_sum(tally.wrong_parameters);
  total.wrong_gradients = communicator.all_reduce_sum(tally.wrong_gradients);
  total.wrong_states = communicator.all_reduce_sum(tally.wrong_states);
  total.checked = communicator.all_reduce_sum(tally.checked);
  return total;
}

}  // namespace bitparity::distributed
