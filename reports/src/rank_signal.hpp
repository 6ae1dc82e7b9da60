#pragma once
// A signal may reach one rank only (a kill of its pid, or Ctrl-C to one terminal): every rank asks
// before each case and row, so that all stop together, and all say and exit with the same signal.
#include <string>

#include "bitparity/distributed/communicator.hpp"

namespace bitparity::reports {

// Collective. 0 when no rank has a signal; else this rank's own, or SIGINT where any rank has
// SIGINT, else SIGTERM. The first one found is kept for stop_reason_over_ranks and the exit code.
int signal_on_any_rank(distributed::Communicator& communicator);
// "SIGTERM", or "SIGINT to another rank" where the signal reached another rank only.
std::string stop_reason_over_ranks();
// 128 + the signal that stopped the ranks.
int stopped_exit_code_over_ranks();

}  // namespace bitparity::reports
