#pragma once
// `bitparity check`: plans one row per (property, registry entry, dtype, device), runs every block
// size of the row, and renders the rows as a table and as JSON.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/properties/planner.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::reports {

struct CheckOptions {
  std::vector<fixtures::Suite> suites;  // empty on the command line: every suite
  std::vector<std::string> devices;     // cpu, cuda:N
  std::vector<std::string> properties;  // property ids; empty: every property of the suites
  std::vector<std::string> formats;     // quantization formats; empty: every format
  std::vector<std::string> optimizers;  // optimizers; empty: every optimizer
  std::vector<std::string> dtypes;      // empty: f32, f16, bf16
  std::vector<std::int64_t> block_sizes;  // empty: every block size of each entry
  double seconds = 0.0;              // total budget; 0 = fixed case counts
  int cases_per_block_size = 3;
  std::uint64_t seed = 1;
  bool verbose = false;
  properties::StateMaps state_maps;    // --map for the 8-bit optimizers' states
  // --map as given (a name or a file) by the name of the map it registered: replays need them.
  std::map<std::string, std::string> map_spec_of;
};

struct PlannedRow {
  const properties::PropertyDef* property = nullptr;
  properties::TargetSpec spec;
  std::string device;
  std::vector<std::int64_t> block_sizes;  // {0} for rows without blocks
};

struct CheckRow {
  fixtures::Suite suite = fixtures::Suite::quant;
  std::string property, property_id, format, dtype, device;
  std::vector<std::int64_t> block_sizes;
  std::int64_t cases = 0, informative_cases = 0, elements = 0, violations = 0, ill_conditioned = 0;
  double max_error_over_bound = 0.0;
  double seconds = 0.0;
  bool passed = true;
  bool incomplete = false;
  std::string not_applicable;  // why the device's implementation cannot run the row ("" when it ran)
  std::string counterexample;
  std::int64_t failing_block_size = 0, replay_cases = 0;
  std::vector<std::string> state_maps;  // optim8: the map of each state, when --map chose them
  std::vector<std::string> map_specs;   // the --map arguments its replay needs (its own maps')
};

// The rows a selection runs, in order; empty when nothing matches.
std::vector<PlannedRow> plan_check(const CheckOptions& options);
// splitmix64's finaliser: spreads a seed's bits (row and visit seeds derive through it).
std::uint64_t mix_seed(std::uint64_t x);
// The RapidCheck seed of one block size of one row: a function of the run's seed and the row's own
// identity, never of its position, so a filtered run replays any row of a full one.
std::uint64_t row_seed(std::uint64_t seed, const PlannedRow& row, std::int64_t blocksize);

// Why each planned row cannot run on its device's implementation ("" where it can), decided from
// what the implementations offer before any case runs.
std::vector<std::string> not_applicable_reasons(const std::vector<PlannedRow>& plan);
// The one rule, for check, fuzz and replay, that a run which checks nothing does not pass: throws
// UsageError "nothing to check: none of the N WHAT applies (REASON); ..." when every reason is
// non-empty. `reasons` as not_applicable_reasons gives them.
void refuse_when_nothing_applies(const std::vector<std::string>& reasons, const std::string& what);

struct CheckCallbacks {
  std::function<bool()> cancelled;                                           // stop between batches
  std::function<void(std::size_t row, double fraction, const PlannedRow&)> progress;
};

std::vector<CheckRow> run_check(const std::vector<PlannedRow>& plan, const CheckOptions& options,
                                const CheckCallbacks& callbacks = {});

// The command that replays a failed row: the same selection narrowed to it, the same seed and cases.
std::string replay_command(const CheckRow& row, std::uint64_t seed);
nlohmann::json check_row_json(const CheckRow& row, std::uint64_t seed);
void print_check_table(const std::vector<CheckRow>& rows, std::uint64_t seed);
// err/bound for people: truncated, never rounded up to 1 (0.99999987 prints as 0.999999).
std::string format_ratio(double ratio);

}  // namespace bitparity::reports
