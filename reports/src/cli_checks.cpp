#include "bitparity/reports/cli_checks.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

namespace {

std::string shown(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

bool parse_integer(const std::string& text, std::int64_t& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && ptr == end;
}

}  // namespace

CLI::Validator seconds_in(double max, double min) {
  return CLI::Validator(
      [max, min](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(value) || value < min || value > max) {
          return "must be a finite number of seconds from " + shown(min) + " to " + shown(max) + ", got '" + text + "'";
        }
        return "";
      },
      "SECONDS in [" + shown(min) + ", " + shown(max) + "]");
}

CLI::Validator budget_seconds(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(value) || value <= 0 || value > max) {
          return "must be a finite number of seconds above 0 and at most " + shown(max) + ", got '" + text + "'";
        }
        return "";
      },
      "SECONDS in (0, " + shown(max) + "]");
}

CLI::Validator integer_in(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::int64_t value = 0;
        if (!parse_integer(text, value) || value < lo || value > hi) {
          return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" + text + "'";
        }
        text = std::to_string(value);  // decimal for CLI11 too, which reads a leading 0 as octal (010 was 8)
        return "";
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

CLI::Validator non_empty_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "was given an empty value; give one, or leave the option out" : ""; },
      "");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::int64_t value = 0;
        if (!parse_integer(text, value) || value < 0) {
          return "must be a whole number from 0 to 9223372036854775807, got '" + text + "'";
        }
        text = std::to_string(value);  // decimal for CLI11 too, which reads a leading 0 as octal
        return "";
      },
      "SEED in [0, 2^63)");
}

void refuse_repeats(const std::string& option, const std::vector<std::string>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (values[i] == values[j]) throw UsageError(option + " " + values[i] + " given twice; give each value once");
    }
  }
}

std::uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0, available = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      available = kib * 1024;
      break;
    }
  }
  // An address-space limit (`ulimit -v`, a batch system's) is the memory this process can have.
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const auto cap = static_cast<std::uint64_t>(limit.rlim_cur);
    available = available == 0 ? cap : std::min(available, cap);
  }
  return available;
}

void check_memory(const std::string& what, double bytes_needed, double bytes_per_unit, const std::string& unit_option) {
  const double available = static_cast<double>(available_memory_bytes());
  if (available <= 0 || bytes_needed <= available / 2) return;
  const double gib = 1024.0 * 1024 * 1024;
  char text[256];
  std::snprintf(text, sizeof text, "%s needs about %.1f GiB, more than half of the %.1f GiB available; use %s %.0f or less",
                what.c_str(), bytes_needed / gib, available / gib, unit_option.c_str(), std::floor(available / 2 / bytes_per_unit));
  throw UsageError(text);
}

std::string& program_name() {
  static std::string name = "bitparity";
  return name;
}

}  // namespace bitparity::reports
