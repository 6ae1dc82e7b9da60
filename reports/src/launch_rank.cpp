#include "bitparity/reports/launch_rank.hpp"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#if BITPARITY_HAS_MPI
#include <mpi.h>
#endif

#include "bitparity/reports/interrupt.hpp"

namespace bitparity::reports {

namespace {

// Long enough for rank 0, parsing the same input on a loaded machine, to refuse and for the
// launcher to end the job; short enough that a refusal rank 0 did not share is said soon.
constexpr auto kWaitForRank0 = std::chrono::seconds(10);

bool mpi_started() {
#if BITPARITY_HAS_MPI
  int started = 0;
  MPI_Initialized(&started);  // callable before MPI_Init; stays true after MPI_Finalize
  return started != 0;
#else
  return false;
#endif
}

}  // namespace

int launched_rank() {
  // Open MPI, PMIx launchers (Open MPI 5, srun --mpi=pmix), MPICH's hydra, then Slurm's own.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') continue;
    char* end = nullptr;
    const long rank = std::strtol(text, &end, 10);
    if (*end == '\0' && rank >= 0 && rank < (1L << 30)) return static_cast<int>(rank);
  }
  return -1;
}

int launched_world_size() {
  if (launched_rank() < 0) return 1;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') continue;
    char* end = nullptr;
    const long size = std::strtol(text, &end, 10);
    if (*end == '\0' && size >= 1 && size < (1L << 30)) return static_cast<int>(size);
  }
  return 1;
}

bool refusal_left_to_rank_0() {
  if (launched_rank() <= 0 || mpi_started()) return false;
  // The launcher ends this rank with SIGTERM once rank 0 has exited with its refusal.
  const auto until = std::chrono::steady_clock::now() + kWaitForRank0;
  while (!interrupted() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return interrupted();
}

}  // namespace bitparity::reports
