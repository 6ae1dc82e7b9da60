#pragma once
// `check --suite storage|resume|sharded` runs P10, P11 or P6 through the sharded runner.
#include <string>

#include "bitparity/reports/commands.hpp"

namespace bitparity::reports {

bool is_suite_over_ranks(const std::string& name);  // storage, resume, sharded

// The sharded run a check of suites over ranks asks for. Throws UsageError when it names a suite
// that runs in one process too, a property of no named suite, or an option that the sharded runner
// has no counterpart for.
ShardedCommand sharded_command_of_check(const CheckCommand& check);

}  // namespace bitparity::reports
