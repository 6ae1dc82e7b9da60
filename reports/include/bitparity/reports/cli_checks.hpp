#pragma once
// Checks of raw command-line values, before conversion: a value out of range gets one line that
// says what was given, what is accepted and the option's name (CLI11 adds it).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bitparity::reports {

// A finite number of seconds in [min, max]; refuses nan, inf, negatives.
CLI::Validator seconds_in(double max, double min = 0);
// A budget: a finite number of seconds in (0, max]. A budget of 0 would check nothing, so every
// command's --seconds refuses it the same way.
CLI::Validator budget_seconds(double max);
// An integer in [lo, hi], written in decimal (no wrap-around of -1, no 1e9). Give it to
// ->transform(), not ->check(): it rewrites the text without leading zeros, which CLI11 would
// otherwise read as octal (--steps 010 ran 8 steps, --seed 010 was seed 8).
CLI::Validator integer_in(std::int64_t lo, std::int64_t hi);
// A seed: a decimal integer in [0, 2^63); ->transform() too.
CLI::Validator seed_value();
// Refuses "" (an unset shell variable): the option would fall back to its default without a word
// (replay --implementation "" replayed on each case's own; --checkpoint-dir "" kept nothing).
CLI::Validator non_empty_value();

// Refuses a list that names one thing twice: "--device cpu given twice; give each once".
void refuse_repeats(const std::string& option, const std::vector<std::string>& values);
// Memory available now, in bytes: MemAvailable, or the address-space limit (ulimit -v) where that
// is smaller; 0 when neither is known.
std::uint64_t available_memory_bytes();
// Refuses a run that needs more than half the available memory, naming the largest that fits.
void check_memory(const std::string& what, double bytes_needed, double bytes_per_unit, const std::string& unit_option);

// The program's name as invoked (for replay commands).
std::string& program_name();

}  // namespace bitparity::reports
