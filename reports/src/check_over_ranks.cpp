// `bitparity check --suite storage|resume|sharded`: the suites that run over ranks are checked by
// the sharded runner (P10, P11, P6 and P2r), under `mpirun -np W` for W > 1 and on one rank without it. The
// check's own options carry over where they mean the same thing; the others are refused.
#include "bitparity/reports/check_over_ranks.hpp"

#include <algorithm>
#include <map>

#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

namespace {

const std::map<std::string, std::vector<std::string>> kPropertiesOfSuite = {
    {"storage", {"P10"}}, {"resume", {"P11"}}, {"sharded", {"P6", "P2r"}}};

}  // namespace

bool is_suite_over_ranks(const std::string& name) { return kPropertiesOfSuite.count(name) != 0; }

std::vector<std::string> suites_over_ranks() { return {"storage", "resume", "sharded"}; }

std::string suite_over_ranks_of(const std::string& property) {
  for (const auto& [suite, checked] : kPropertiesOfSuite) {
    if (std::find(checked.begin(), checked.end(), property) != checked.end()) return suite;
  }
  return "";
}

std::string runs_over_ranks_message(const std::string& suite) {
  std::string properties;
  for (const auto& property : kPropertiesOfSuite.at(suite)) properties += (properties.empty() ? "" : " --property ") + property;
  return "suite '" + suite + "' runs over ranks: use mpirun -np W bitparity sharded --property " + properties +
         " (or mpirun -np W bitparity check --suite " + suite + ")";
}

ShardedCommand sharded_command_of_check(const CheckCommand& check) {
  const auto& names = check.suite_names;
  const CheckOptions& asked = check.requested;
  ShardedCommand sharded;
  std::string suites;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), name) != names.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw UsageError("--suite " + name + " given twice");
    }
    if (!is_suite_over_ranks(name)) {
      throw UsageError("suite " + name + " runs in one process and suites storage, resume and sharded run over ranks; check "
                       "them in two runs (`check --suite " + name + "`, then `mpirun -np W bitparity check --suite ...`)");
    }
    const auto& checked = kPropertiesOfSuite.at(name);
    sharded.properties.insert(sharded.properties.end(), checked.begin(), checked.end());
    suites += (suites.empty() ? "" : ", ") + name;
  }
  for (const auto& id : asked.properties) {
    if (std::find(sharded.properties.begin(), sharded.properties.end(), id) == sharded.properties.end()) {
      throw UsageError("--property " + id + " is not a property of suite " + suites + " (storage: P10, resume: P11, sharded: P6 and P2r)");
    }
  }
  if (!asked.properties.empty()) sharded.properties = asked.properties;
  std::vector<std::string> devices = asked.devices;
  devices.insert(devices.end(), check.implementations.begin(), check.implementations.end());
  if (devices.size() > 1) {
    throw UsageError("the suites over ranks run one implementation on every rank; give one --device (a mixed world: "
                     "`sharded --rank-implementation 0=cuda:0`)");
  }
  if (!devices.empty()) {
    if (devices.front() == "all") throw UsageError("--device all: the suites over ranks run one device on every rank; name it");
    sharded.implementation = devices.front();
  }
  if (!asked.block_sizes.empty()) throw UsageError("--block-size: the suites over ranks draw block sizes per case; drop it");
  if (asked.seconds > 0) throw UsageError("--seconds: the suites over ranks run fixed case counts; use --cases");
  if (asked.verbose) throw UsageError("--verbose: the suites over ranks print every row; drop it");
  sharded.optimizers = asked.optimizers;
  sharded.formats = asked.formats;
  sharded.dtypes = asked.dtypes;
  sharded.maps = check.maps;
  sharded.seed = asked.seed;
  if (check.cases_given) sharded.cases = asked.cases_per_block_size;
  if (check.json_given) {
    sharded.json = check.json_path;
    sharded.json_given = true;
  }
  return sharded;
}

}  // namespace bitparity::reports
