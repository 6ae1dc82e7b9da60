#pragma once
// The sharded optimizer driver: parameter groups laid into shards (shard_plan.hpp), gradients
// reduced exactly to their owners, each rank stepping its shard, parameters all-gathered. The
// driver faults are the bookkeeping bugs of real ZeRO implementations; each is a catalogued
// mutant that the rank-parity properties must kill.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "bitparity/distributed/communicator.hpp"
#include "bitparity/distributed/shard_plan.hpp"
#include "bitparity/distributed/value_source.hpp"
#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/optimizer_state.hpp"

namespace bitparity::distributed {

enum class DriverFault {
  none,
  unaligned_shards,         // shard boundaries ignore the quantization block
  fp32_norm_in_rank_order,  // LAMB/LARS/max_unorm partial norms rounded to fp32, summed by rank
  gradients_by_position,    // gradients matched to parameters by arrival order, not by id
  shared_key_space,         // the gradient store keyed per group: two groups' keys collide
  padding_not_stripped,     // gathering reads parameters where they would be without padding
  fp32_reduce_in_rank_order,// reduce-scatter of fp32 partial sums added in rank order
  stale_gradient_shard,     // the last rank steps with the previous step's gradient shard
  state_lost_on_regroup,    // a parameter moved to another group restarts with zeroed states
};
inline constexpr DriverFault kDriverFaults[] = {
    DriverFault::unaligned_shards,      DriverFault::fp32_norm_in_rank_order, DriverFault::gradients_by_position,
    DriverFault::shared_key_space,      DriverFault::padding_not_stripped,    DriverFault::fp32_reduce_in_rank_order,
    DriverFault::stale_gradient_shard,  DriverFault::state_lost_on_regroup};
std::string_view fault_name(DriverFault fault);  // the mutant name, e.g. "sharded-unaligned-shards"
DriverFault parse_fault(std::string_view name);   // throws Error naming the choices
std::string_view fault_description(DriverFault fault);

struct GroupConfig {
  std::uint64_t id = 0;
  Hyperparameters hyper;  // the step is set by the driver
  DType param_dtype = DType::f32, grad_dtype = DType::f32;
  std::vector<ParameterSpec> parameters;
};

struct ShardedConfig {
  OptimizerKind kind = OptimizerKind::adam;
  bool eight_bit = false;
  std::int64_t blocksize = 256;
  StateMaps maps{};  // 8-bit states: the maps instead of the optimizer's own (a checkpoint's, --map)
  ShardLayout layout = ShardLayout::zero12;
  std::vector<GroupConfig> groups;
  int microbatches = 4;  // gradient contributions per step, dealt to ranks round robin
  std::uint64_t seed = 1;
  std::shared_ptr<const RecordedValues> recorded;  // a saved case's values instead of the seed's (value_source.hpp)
  DriverFault fault = DriverFault::none;
  // Parameters moving between groups (param_groups edited between steps): before step
  // `regroup_step` (0: never) the groups become `regrouped`; values and states follow each
  // parameter by id into its new group's shards.
  int regroup_step = 0;
  std::vector<GroupConfig> regrouped;
};

// Where this rank's last step spent its time (steady clock).
struct StepPhaseSeconds {
  double reduce = 0;  // backward of this rank's microbatches and the exact reduce-scatter
  double step = 0;    // agreeing on a non-finite gradient and stepping the shards
  double gather = 0;  // all_gather of the parameters
  double total() const { return reduce + step + gather; }
};

// One group's shard on this rank after a step.
struct GroupShardState {
  GroupShards shards;
  fixtures::HostTensor param, grad;  // shard buffers (padding included)
  std::unique_ptr<OptimizerState> state;
  std::vector<float> previous_grad;  // for the stale-gradient fault
};

// One parameter whole, padding stripped, as stored bytes: what moving a parameter to another group
// and the universal checkpoint carry between layouts and world sizes.
struct WholeParameter {
  std::uint64_t group_id = 0;
  std::vector<std::uint8_t> param;                // in the group's parameter dtype
  std::vector<std::vector<std::uint8_t>> states;  // fp32 states, or 8-bit codes (one byte per element)
  std::vector<std::vector<std::uint8_t>> absmax;  // 8-bit: one f32 per block of the parameter
};
using WholeParameters = std::map<std::uint64_t, WholeParameter>;

class ShardedOptimizer {
 public:
  ShardedOptimizer(const ShardedConfig& config, Communicator& communicator, fixtures::Implementation& implementation);
  // Backward of training step `step` (this rank's microbatches), exact reduce-scatter, the sharded
  // step and all_gather. The optimizer counts its own steps (bias corrections read the count), as
  // torch's state["step"] does; a checkpoint restores the count. Returns whether the step was
  // skipped for a non-finite gradient (on every rank alike).
  bool step(std::int64_t step);
  // After step(): every parameter's values as gathered on this rank, by id, as stored bits.
  std::map<std::uint64_t, std::vector<std::uint32_t>> gathered_parameters() const { return gathered_; }
  const std::vector<GroupShardState>& groups() const { return groups_; }
  StepPhaseSeconds last_phases() const { return phases_; }
  const ShardedConfig& config() const { return config_; }
  Communicator& communicator() const { return communicator_; }
  std::int64_t completed_steps() const { return completed_steps_; }  // step() calls, or as restored

  // Collective: every parameter whole on every rank, by id. `keep_padding` is the checkpoint fault
  // that cuts the gathered shards into parameters by size alone, keeping the padding.
  WholeParameters whole_parameters(bool keep_padding = false);
  // Local: the groups become `groups` (their hyperparameters included), laid out for this world,
  // with each parameter's values and states taken from `whole` by id (every id must be there), and
  // the 8-bit states take `maps` (the checkpoint's).
  void restore(std::vector<GroupConfig> groups, const WholeParameters& whole, std::int64_t completed_steps, const StateMaps& maps);
  // Local: this rank's shards as saved by a run of the same world, layout and groups (whose
  // hyperparameters come with them), made by empty_group with the same `maps`.
  void restore_shards(std::vector<GroupConfig> groups, std::vector<GroupShardState> shards, std::int64_t completed_steps,
                      const StateMaps& maps);
  // A zeroed shard of group g as this rank lays it out, its 8-bit states taking `maps` (for loading
  // shards into).
  GroupShardState empty_group(std::size_t g, const StateMaps& maps) const;

 private:
  GroupShardState make_group(const GroupConfig& group, const StateMaps& maps) const;
  void regroup(std::int64_t step);
  void place_whole_parameters(const WholeParameters& whole, bool moved_states_zeroed);
  void reduce_gradients(std::int64_t step);
  void step_group(std::size_t g, std::int64_t step);
  void gather_group(std::size_t g);

  ShardedConfig config_;
  Communicator& communicator_;
  fixtures::Implementation& implementation_;
  std::vector<GroupShardState> groups_;
  std::map<std::uint64_t, std::vector<std::uint32_t>> gathered_;
  StepPhaseSeconds phases_;
  std::int64_t completed_steps_ = 0;
};

// The alignment of shard boundaries and parameter starts for a configuration (its block size for
// 8-bit states, else 1).
std::int64_t shard_alignment(const ShardedConfig& config);

}  // namespace bitparity::distributed
