#pragma once
// Progress of a long run on stderr: units done of the total, elapsed time and an ETA. On a terminal
// one line is redrawn (at most twice a second); otherwise a plain line every 10 s. Nothing is
// printed during the first 3 s, so short runs stay quiet.
#include <chrono>
#include <cstdint>
#include <string>

namespace bitparity::reports {

class Progress {
 public:
  Progress(std::string what, std::int64_t total);
  ~Progress();
  // `done` whole units plus `fraction` of the current one; `current` names what runs now.
  void update(std::int64_t done, double fraction, const std::string& current);
  void finish();  // clears the terminal line

 private:
  std::string what_;
  std::int64_t total_;
  std::chrono::steady_clock::time_point start_, last_print_;
  bool terminal_;
  bool printed_ = false;
};

std::string format_duration(double seconds);
// The columns of the terminal on stderr (TIOCGWINSZ; else $COLUMNS; else 80).
int terminal_columns();
// `line` cut to one terminal row (the columns less one): a redrawn line longer than the terminal
// wraps, and every redraw then leaves a row behind.
std::string fit_to_terminal(const std::string& line);

}  // namespace bitparity::reports
