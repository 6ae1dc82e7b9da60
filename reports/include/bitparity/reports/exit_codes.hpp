#pragma once
// The exit codes of `bitparity`, documented in README.md and `bitparity --help`.
namespace bitparity::reports {

enum ExitCode : int {
  exit_passed = 0,            // everything ran and held
  exit_failed = 1,            // a property violation, a surviving mutant, a harness error, non-finite drift
  exit_bad_input = 2,         // refused before any work: the message says what to change
  exit_write_failed = 3,      // the results could not be written (earlier files are left intact)
  exit_gpu_missing = 4,       // --require-gpu (or BITPARITY_REQUIRE_GPU=1) and no usable CUDA device
  exit_run_error = 5,         // an implementation or the machine failed mid-run (CUDA error, out of memory)
  exit_interrupted_int = 130, // SIGINT: complete rows written, marked incomplete
  exit_interrupted_term = 143,// SIGTERM: likewise
};

// One line per code, for --help and the README.
const char* exit_code_legend();

}  // namespace bitparity::reports
