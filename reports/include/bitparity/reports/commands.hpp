#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bitparity::reports {

struct CheckCommand {
  std::vector<std::string> suites;
  std::vector<std::string> devices;
  std::vector<std::string> formats;
  std::vector<std::string> dtypes;
  std::vector<std::int64_t> block_sizes;
  double seconds = 0.0;
  int cases = 3;
  std::uint64_t seed = 1;
  std::string json_path;
  bool verbose = false;
};

struct MutantsCommand {
  double seconds = 30.0;
  std::uint64_t seed = 1;
  std::string json_path;
  std::vector<std::string> only;
};

struct DriftCommand {
  std::vector<std::string> optimizers;
  std::vector<std::string> dtypes;
  std::string device = "cpu";
  std::int64_t steps = 200;
  std::int64_t elements = 128;
  std::int64_t every = 50;
  bool eight_bit = false;
  std::int64_t blocksize = 256;
  std::uint64_t seed = 1;
  std::string json_path;
};

struct StatePlanCommand {
  std::string optimizer = "adam";
  std::vector<std::int64_t> sizes;
  std::int64_t blocksize = 256;
  std::int64_t min_8bit_size = 4096;
  bool fp32 = false;
};

void add_state_plan_command(CLI::App& app, StatePlanCommand& command);
int run_state_plan_command(const StatePlanCommand& command);
void add_check_command(CLI::App& app, CheckCommand& command);
void add_drift_command(CLI::App& app, DriftCommand& command);
int run_drift_command(const DriftCommand& command);
void add_mutants_command(CLI::App& app, MutantsCommand& command);
void add_list_command(CLI::App& app);
int run_check_command(const CheckCommand& command);
int run_mutants_command(const MutantsCommand& command);
int run_list_command();

}  // namespace bitparity::reports
