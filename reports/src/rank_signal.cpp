#include "rank_signal.hpp"

#include <csignal>

#include "bitparity/reports/interrupt.hpp"

namespace bitparity::reports {
namespace {
int stopping_signal = 0;  // the first signal found on any rank
}  // namespace

int signal_on_any_rank(distributed::Communicator& communicator) {
  // One sum carries the three counts: SIGINTs in the low 20 bits, SIGHUPs in the next 20, SIGTERMs
  // above (at most 2^20 ranks).
  constexpr std::int64_t kHup = std::int64_t{1} << 20, kTerm = std::int64_t{1} << 40;
  const int own = interrupt_signal();
  const std::int64_t sum = communicator.all_reduce_sum(own == SIGINT ? 1 : own == SIGHUP ? kHup : own == SIGTERM ? kTerm : 0);
  const int any = own != 0 ? own : (sum % kHup) != 0 ? SIGINT : (sum % kTerm) != 0 ? SIGHUP : sum != 0 ? SIGTERM : 0;
  if (stopping_signal == 0) stopping_signal = any;
  return any;
}

std::string stop_reason_over_ranks() {
  if (interrupted()) return interrupt_name();
  return std::string(stopping_signal == SIGINT ? "SIGINT" : stopping_signal == SIGHUP ? "SIGHUP" : "SIGTERM") + " to another rank";
}

int stopped_exit_code_over_ranks() { return interrupted() ? interrupted_exit_code() : 128 + (stopping_signal != 0 ? stopping_signal : SIGTERM); }

}  // namespace bitparity::reports
