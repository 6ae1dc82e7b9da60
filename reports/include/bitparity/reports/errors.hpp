#pragma once
// Failures of the command line that are not the kernels' refusals: each maps to an exit code.
#include <stdexcept>
#include <string>

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

}  // namespace bitparity::reports
