#include "bitparity/reports/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bitparity::reports {

namespace {
constexpr double kQuietSeconds = 3.0, kTerminalEvery = 0.5, kLogEvery = 10.0;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long s = std::llround(seconds);
  char text[32];
  // Under 10 s, tenths (a 0.001 s budget is not "0s"); whole seconds above.
  if (seconds > 0 && seconds < 0.0005) {  // a budget of 1e-9 s is not "0.000s"
    std::snprintf(text, sizeof text, "%.2gs", seconds);
    return text;
  }
  if (seconds < 9.95) {
    std::snprintf(text, sizeof text, "%.*fs", seconds > 0 && seconds < 0.05 ? 3 : 1, seconds);
    return text;
  }
  if (s >= 3600) std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else if (s >= 60) std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%llds", s);
  return text;
}

int terminal_columns() {
  winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr) {
    const int value = std::atoi(columns);
    if (value > 0) return value;
  }
  return 80;
}

std::string fit_to_terminal(const std::string& line) {
  const std::size_t width = static_cast<std::size_t>(std::max(1, terminal_columns() - 1));
  if (line.size() <= width) return line;
  return width > 3 ? line.substr(0, width - 3) + "..." : line.substr(0, width);
}

Progress::Progress(std::string what, std::int64_t total)
    : what_(std::move(what)), total_(total), start_(std::chrono::steady_clock::now()), last_print_(start_),
      terminal_(::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { finish(); }

void Progress::update(std::int64_t done, double fraction, const std::string& current) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (elapsed < kQuietSeconds || since < (terminal_ ? kTerminalEvery : kLogEvery)) return;
  last_print_ = now;
  const double progress = total_ > 0 ? (static_cast<double>(done) + std::min(1.0, std::max(0.0, fraction))) / total_ : 0.0;
  const double eta = progress > 0 ? elapsed * (1.0 - progress) / progress : NAN;
  char line[512];
  std::snprintf(line, sizeof line, "%s %lld/%lld (%.0f%%), %s elapsed, ETA %s: %s", what_.c_str(),
                static_cast<long long>(done), static_cast<long long>(total_), 100.0 * progress,
                format_duration(elapsed).c_str(), format_duration(eta).c_str(), current.c_str());
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", fit_to_terminal(line).c_str());
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
  printed_ = true;
}

void Progress::finish() {
  if (terminal_ && printed_) std::fprintf(stderr, "\r\033[K");
  printed_ = false;
}

}  // namespace bitparity::reports
