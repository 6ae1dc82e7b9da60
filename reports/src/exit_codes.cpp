#include "bitparity/reports/exit_codes.hpp"

namespace bitparity::reports {

const char* exit_code_legend() {
  return "Exit codes:\n"
         "  0    everything ran and held\n"
         "  1    a property violation, a surviving mutant, a harness error, or non-finite drift\n"
         "  2    bad input, refused before any work (the message says what to change)\n"
         "  3    the results file could not be written (an earlier file is left intact), or stdout\n"
         "       could not be (a full disk or device; a pipe whose reader left is not an error)\n"
         "  4    a GPU was required (--require-gpu, BITPARITY_REQUIRE_GPU=1) and none is usable\n"
         "  5    the run failed inside an implementation or the machine (CUDA error, out of memory, a\n"
         "       plugin that exited or crashed inside a call)\n"
         "  130  interrupted by SIGINT, 143 by SIGTERM, 129 by SIGHUP: complete rows written, marked incomplete";
}

}  // namespace bitparity::reports
