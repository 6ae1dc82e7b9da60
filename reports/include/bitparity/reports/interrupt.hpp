#pragma once
// SIGINT, SIGTERM and SIGHUP (a closed terminal) stop a run cleanly: the handler only sets a flag; the runners check it
// between cases and rows, write what is complete (marked incomplete) and exit 130 or 143. A run
// that has not ended kStopGraceSeconds after the first signal (a call that never returns) ends then
// with the same status and one line, without results; a second signal ends it at once.
namespace bitparity::reports {

inline constexpr unsigned kStopGraceSeconds = 10;  // the message in interrupt.cpp says 10 s

void install_interrupt_handlers();
bool interrupted();
int interrupt_signal();          // SIGINT, SIGTERM or SIGHUP; 0 when none arrived
int interrupted_exit_code();     // 128 + the signal
const char* interrupt_name();    // "SIGINT", "SIGTERM", "SIGHUP" or ""

}  // namespace bitparity::reports
