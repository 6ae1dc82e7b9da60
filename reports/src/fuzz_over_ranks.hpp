#pragma once
// `bitparity fuzz --suite sharded|storage|resume` (or `--implementation mutant:NAME` with a fault
// only ranks can show): rounds of `sharded` over real ranks started through mpirun, round-robin
// over the properties (P6, P2r, P10, P11) and world sizes 2 to 5, with fresh seeds and growing case
// counts until the budget ends. A failing row is saved to CORPUS/over-ranks (rank_case.hpp).
#include <functional>

#include "bitparity/reports/commands.hpp"

namespace bitparity::reports {

// Whether the command fuzzes the suites over ranks (then all of it must: they run apart).
bool fuzzes_over_ranks(const FuzzCommand& command);

// `shrink_seconds` bounds the shrinking of each failure (past the budget, if need be).
// `prepare_corpus` checks and makes the corpus folder, the last check before any round runs.
int run_fuzz_over_ranks(const FuzzCommand& command, double budget_seconds, double shrink_seconds,
                        const std::function<void()>& prepare_corpus);

}  // namespace bitparity::reports
