#pragma once
// Shrinking a failing rank case that carries its inputs: each smaller candidate
// (distributed::smaller_cases) is written to a file and run over its ranks with `sharded --case`;
// the first that still fails its property is kept, until none does or the allowance ends.
#include <chrono>
#include <string>

#include "rank_case.hpp"

namespace bitparity::reports {

struct ShrinkAllowance {
  int runs = 100;  // runs over ranks
  std::chrono::steady_clock::time_point deadline;
};

// `found` shrunk, its "shrinking" record filled in (runs, kept changes, the world and sizes it
// started from). A case whose recorded inputs do not fail again is returned without inputs (it is
// then saved to regenerate from its seeds), with the reason in the record.
RankCase shrink_rank_case(const RankCase& found, const std::string& launcher, const std::string& folder, const ShrinkAllowance& allowance);

}  // namespace bitparity::reports
