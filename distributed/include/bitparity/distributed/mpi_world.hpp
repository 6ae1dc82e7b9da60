#pragma once
// The MPI world of a process started by mpirun (or alone, as a world of one), and its communicator.
// A rank that fails reports itself before the job is torn down: rank_failed() prints
// "rank R of W failed while DOING: WHY" and ends the whole job (MPI_Abort), so no process is left
// behind; a watchdog does the same for a rank stuck in one activity past its time limit.
#include <memory>
#include <string>

#include "bitparity/distributed/communicator.hpp"

namespace bitparity::distributed {

class MpiWorld {
 public:
  // MPI_Init_thread; `stuck_seconds` > 0 starts the watchdog, which fails the run with `stuck_code`.
  MpiWorld(int& argc, char**& argv, double stuck_seconds, int stuck_code);
  ~MpiWorld();  // MPI_Finalize
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  // The MPI communicator, or the one chosen with use_communicator (which may bootstrap from MPI).
  Communicator& communicator() { return chosen_ ? *chosen_ : *communicator_; }
  Communicator& mpi_communicator() { return *communicator_; }
  void use_communicator(std::unique_ptr<Communicator> chosen) { chosen_ = std::move(chosen); }
  int rank() const;
  int size() const;
  // Collective over the whole world: an MPI communicator of ranks 0..count-1 (their ranks kept), for
  // the ranks in it; nullptr for the others. P11 saves and resumes on worlds smaller than mpirun's.
  std::unique_ptr<Communicator> first_ranks(int count);

 private:
  std::unique_ptr<Communicator> communicator_, chosen_;
};

// What this rank is doing now, for failure reports ("step 3: reduce-scatter of group 1").
void set_activity(std::string activity);
std::string current_activity();
// Reports the failure with the rank and its activity on stderr and aborts every rank with `code`.
[[noreturn]] void rank_failed(const std::string& why, int code);

}  // namespace bitparity::distributed
