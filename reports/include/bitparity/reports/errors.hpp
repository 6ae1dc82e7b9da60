#pragma once
// Failures of the command line that are not the kernels' refusals: each maps to an exit code.
#include <stdexcept>
#include <string>

#include "bitparity/kernels/errors.hpp"

namespace bitparity::reports {

// Bad input found by the command line itself (a path, a range, an empty selection): exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A results file could not be written: exit 3.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A GPU was required and none is usable: exit 4.
class GpuMissingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel refusal's message without its code name ("invalid_argument: "), for a UsageError that
// passes it on: the code is the exit status's business, the message the person's.
inline std::string refusal_text(const Error& error) { return error.message(); }

// "error: MESSAGE" on stderr as one line: control characters echoed from an argument or a file (a
// newline in --suite, in a map's name) would break the line, or forge one of their own, so they are
// written as escapes (\n, \t, \xNN).
void print_error(const std::string& message);
// The text with its control characters as those escapes: for text from a file printed to a
// terminal (a tensor name holding ESC[2J would clear the screen, a newline forge a row).
std::string printable_text(const std::string& text);

}  // namespace bitparity::reports
