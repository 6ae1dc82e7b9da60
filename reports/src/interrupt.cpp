#include "bitparity/reports/interrupt.hpp"

#include "bitparity/fixtures/hosted_plugin.hpp"

#include <unistd.h>

#include <csignal>
#include <ctime>
#include <cstring>

namespace bitparity::reports {

namespace {

volatile std::sig_atomic_t received = 0;
timespec first_signal_at{};  // set by the handler before `received`

// A second signal this soon after the first is the same request: `timeout` and a runner's kill
// signal the process and then its whole group, so one stop can arrive twice within microseconds.
constexpr long kSameRequestMilliseconds = 1000;

const char* signal_word(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : signal == SIGHUP ? "SIGHUP" : "";
}

void write_text(const char* text) {
  for (std::size_t left = std::strlen(text); left > 0;) {
    const ssize_t written = ::write(STDERR_FILENO, text, left);
    if (written <= 0) return;
    text += written;
    left -= static_cast<std::size_t>(written);
  }
}

extern "C" void on_signal(int signal) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  if (received != 0) {
    const long since = (now.tv_sec - first_signal_at.tv_sec) * 1000 + (now.tv_nsec - first_signal_at.tv_nsec) / 1000000;
    if (since < kSameRequestMilliseconds) return;
    // A second signal: the user insists; leave now with the conventional status.
    write_text("error: interrupted a second time; the run ended without writing this run's results, and earlier results "
               "files are as they were\n");
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
  first_signal_at = now;
  received = signal;
  alarm(kStopGraceSeconds);  // the run stops by itself before then, or on_stop_overdue ends it
}

// The run did not come to a point where it could stop (one long call: a large benchmark row, a hung
// plugin, a device): it ends now, without results, rather than ignore the signal. Async-signal-safe.
extern "C" void on_stop_overdue(int) {
  if (received == 0) return;
  write_text("error: interrupted by ");
  write_text(signal_word(received));
  write_text(", and the run did not reach a point where it could stop within 10 s (one long call: a large benchmark row or "
             "case, or a plugin or device call that never returns); it ended without writing this run's results, and earlier "
             "results files are as they were\n");
  _exit(128 + received);
}

// A call waiting on a plugin host when the signal came: the host is killed and the run ends now,
// as it would at the grace's end, rather than wait out a call that may never return.
void stop_during_hosted_call() {
  write_text("error: interrupted by ");
  write_text(signal_word(received));
  write_text(" during a plugin call, whose host was killed; the run ended without writing this run's results, and "
             "earlier results files are as they were\n");
  _exit(128 + received);
}

bool stop_was_requested() { return received != 0; }

}  // namespace

void install_interrupt_handlers() {
  fixtures::set_hosted_call_stop(stop_was_requested, stop_during_hosted_call);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A closed terminal (an ssh session that dropped) stops the run as SIGTERM does, keeping its rows;
  // under nohup SIGHUP stays ignored, as asked.
  struct sigaction hangup {};
  if (sigaction(SIGHUP, nullptr, &hangup) == 0 && hangup.sa_handler != SIG_IGN) sigaction(SIGHUP, &action, nullptr);
  struct sigaction overdue {};
  overdue.sa_handler = on_stop_overdue;
  sigemptyset(&overdue.sa_mask);
  sigaction(SIGALRM, &overdue, nullptr);
}

bool interrupted() { return received != 0; }
int interrupt_signal() { return received; }
int interrupted_exit_code() { return 128 + received; }
const char* interrupt_name() { return signal_word(received); }

}  // namespace bitparity::reports
