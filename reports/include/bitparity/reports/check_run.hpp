#pragma once
// `bitparity check`: runs the properties of a suite over the registry on each device and gathers
// one row per (property, format, dtype, device).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bitparity::reports {

struct CheckOptions {
  std::vector<std::string> suites;   // quant, conversions
  std::vector<std::string> devices;  // cpu, cuda:N
  std::vector<std::string> formats;  // empty: every format of the registry
  std::vector<std::string> dtypes;   // empty: f32, f16, bf16
  std::vector<std::int64_t> block_sizes;  // empty: every block size of each format
  double seconds = 0.0;              // total budget for random properties; 0 = fixed case counts
  int cases_per_block_size = 3;
  std::uint64_t seed = 1;
  bool verbose = false;
};

struct CheckRow {
  std::string suite, property, format, dtype, device;
  std::vector<std::int64_t> block_sizes;
  std::int64_t cases = 0, elements = 0, violations = 0, ill_conditioned = 0;
  double max_error_over_bound = 0.0;
  double seconds = 0.0;
  bool passed = true;
  bool incomplete = false;
  std::string counterexample;
};

std::vector<CheckRow> run_check(const CheckOptions& options);
nlohmann::json check_json(const std::vector<CheckRow>& rows);
void print_check_table(const std::vector<CheckRow>& rows);

}  // namespace bitparity::reports
