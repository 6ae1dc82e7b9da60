#pragma once
// A refusal under mpirun (or srun, or MPICH's hydra) is said once. Every rank parses the same
// command line, environment and files before MPI starts, so every rank reaches the same refusal:
// rank 0 says it and the others leave the saying to it.
namespace bitparity::reports {

// The rank the launcher gave this process, from its environment; -1 when no launcher started it.
int launched_rank();

// The number of ranks the launcher started; 1 when no launcher started this process.
int launched_world_size();

// Before MPI starts, on a launched rank other than 0: waits (up to a few seconds) for the launcher
// to end this rank after rank 0 has refused and exited. True when it did, so this rank stays
// silent; false at once elsewhere, and after the wait (rank 0 did not refuse: this rank says why).
bool refusal_left_to_rank_0();

}  // namespace bitparity::reports
