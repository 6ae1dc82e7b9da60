#pragma once
// `check --suite storage|resume|sharded` runs P10, P11 or P6 and P2r through the sharded runner.
#include <string>
#include <vector>

#include "bitparity/reports/commands.hpp"

namespace bitparity::reports {

bool is_suite_over_ranks(const std::string& name);  // storage, resume, sharded
std::vector<std::string> suites_over_ranks();      // in `bitparity list` order
std::string suite_over_ranks_of(const std::string& property);  // P6, P2r: sharded, P10: storage, P11: resume; "" otherwise
// The one-process runners (fuzz, report) refuse a suite over ranks with this, naming the property.
std::string runs_over_ranks_message(const std::string& suite);

// The sharded run a check of suites over ranks asks for. Throws UsageError when it names a suite
// that runs in one process too, a property of no named suite, or an option that the sharded runner
// has no counterpart for.
ShardedCommand sharded_command_of_check(const CheckCommand& check);

}  // namespace bitparity::reports
