#pragma once
// P6 rank parity and the seed-002 class: a sharded run against the unsharded one, on every rank.
// After each step every rank compares every gathered parameter with the unsharded step (P6), and
// the gradient and state pieces it owns, found by parameter id, with the unsharded ones (seed 002).
// Wrong elements are counted on each rank and summed across ranks, as nccl-tests does.
#include <cstdint>
#include <string>

#include "bitparity/distributed/communicator.hpp"
#include "bitparity/distributed/sharded_optimizer.hpp"

namespace bitparity::distributed {

struct ParityTally {
  std::int64_t wrong_parameters = 0;  // P6: gathered parameters unlike the unsharded step
  std::int64_t wrong_gradients = 0;   // seed 002: an owned gradient piece unlike the unsharded one
  std::int64_t wrong_states = 0;      // seed 002: an owned state piece (fp32, or codes and absmax)
  std::int64_t checked = 0;           // elements compared
  int skipped_steps = 0;              // steps skipped everywhere for a non-finite gradient
  std::string first_wrong;            // where the first wrong element was seen on this rank
  std::int64_t wrong() const { return wrong_parameters + wrong_gradients + wrong_states; }
};

class UnshardedOptimizer;

// Compares the gradient and state pieces this rank owns in `group` with the unsharded ones, by id.
void compare_owned(const ShardedConfig& config, const GroupShardState& group, const UnshardedOptimizer& unsharded, int rank,
                   std::int64_t step, ParityTally& tally);
// Compares every gathered parameter with the unsharded one.
void compare_gathered(const ShardedOptimizer& sharded, const UnshardedOptimizer& unsharded, int rank, std::int64_t step,
                      ParityTally& tally);

// A random configuration: 1 to 3 groups of 1 to 4 parameters with stable random ids, sizes that
// straddle shards and blocks (and some smaller than the world), per-group hyperparameters and
// gradient dtypes, and 1 to 9 microbatches; in half the cases one parameter moves to another group
// (or a new one) before step 2. The same on every rank for the same arguments.
ShardedConfig draw_sharded_config(OptimizerKind kind, bool eight_bit, DType param_dtype, ShardLayout layout,
                                  std::uint64_t seed, int world);

// Runs `steps` steps sharded over the communicator's ranks and unsharded on each rank; the tally
// is summed over all ranks (every rank returns the same one, first_wrong aside).
ParityTally run_rank_parity(const ShardedConfig& config, int steps, Communicator& communicator,
                            fixtures::Implementation& implementation);

}  // namespace bitparity::distributed
