#pragma once
// The sharded step's cost against the unsharded step of the same parameters, measured in the same
// run on the same ranks: a ratio, never an absolute time. Groups of large parameters with ragged
// sizes, one microbatch per rank (data parallel); the unsharded step runs whole on every rank.
#include <cstdint>

#include "bitparity/distributed/communicator.hpp"
#include "bitparity/distributed/sharded_optimizer.hpp"

namespace bitparity::distributed {

struct ShardedBenchmarkResult {
  std::int64_t elements = 0;
  int steps = 0;                // timed steps (after one warm-up step)
  StepPhaseSeconds sharded;     // median over steps of the slowest rank's phases
  StepPhaseSeconds unsharded;   // median over steps, slowest rank
  double ratio() const { return unsharded.total() > 0 ? sharded.total() / unsharded.total() : 0; }
};

// Collective: every rank calls it with the same arguments.
ShardedBenchmarkResult run_sharded_benchmark(OptimizerKind kind, bool eight_bit, DType dtype, ShardLayout layout,
                                             std::int64_t elements, int steps, Communicator& communicator,
                                             fixtures::Implementation& implementation);

}  // namespace bitparity::distributed
