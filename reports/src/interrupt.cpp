#include "bitparity/reports/interrupt.hpp"

#include <csignal>

namespace bitparity::reports {

namespace {

volatile std::sig_atomic_t received = 0;

extern "C" void on_signal(int signal) {
  if (received != 0) {
    // A second signal: the user insists; leave now with the conventional status.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
  received = signal;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() { return received != 0; }
int interrupt_signal() { return received; }
int interrupted_exit_code() { return 128 + received; }
const char* interrupt_name() { return received == SIGINT ? "SIGINT" : received == SIGTERM ? "SIGTERM" : ""; }

}  // namespace bitparity::reports
