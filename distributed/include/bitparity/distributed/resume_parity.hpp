#pragma once
// P11 resume: a sharded run saves a checkpoint after k steps on W ranks (implementation `before`),
// a new optimizer on W' ranks (implementation `after`, possibly another device) loads it and takes
// n more steps; its gathered parameters and owned gradient and state pieces must be bitwise those
// of the unsharded run that never stopped, after every step. Same world and layout load the rank
// shards; any other pair loads the universal form. The loading optimizer starts with its own 8-bit
// maps: the checkpoint's (config.maps, --map) must come with the states. Worlds smaller than
// mpirun's are the first ranks of it (MPI sub-communicators); the other ranks wait.
#include <cstdint>
#include <string>

#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/distributed/rank_parity.hpp"
#include "bitparity/fixtures/atomic_file.hpp"

namespace bitparity::distributed {

// A checkpoint that could not be written (a full disk, a file-size limit): the environment's failure,
// not the implementation's. Thrown on every rank alike; `here` on the ranks whose write failed.
class CheckpointNotWritten : public fixtures::WriteFailure {
 public:
  CheckpointNotWritten(const std::string& what, bool here) : fixtures::WriteFailure(what), here(here) {}
  bool here;
};

struct ResumeCase {
  int save_world = 1, load_world = 1;
  int steps_before = 2, steps_after = 2;
};

struct ResumeTally {
  ParityTally parity;     // after resuming, summed over the ranks of the world
  std::int64_t refused = 0;  // saves or loads refused (a correct checkpoint must load): counted as wrong
  bool from_rank_shards = false;
  std::int64_t wrong() const { return parity.wrong() + refused; }
};

// Collective over the whole world; the folder must be reachable by every rank (one machine, or a
// shared file system) and is used for this case only.
ResumeTally run_resume_parity(const ShardedConfig& config, const ResumeCase& resume, MpiWorld& world,
                              fixtures::Implementation& before, fixtures::Implementation& after, const std::string& folder,
                              CheckpointFault fault);

// (W, W') for case `index` of `seed` over a world of `size` ranks, and the steps around the save.
ResumeCase draw_resume_case(std::uint64_t seed, int size, int steps_after);

}  // namespace bitparity::distributed
