#pragma once
// The subcommands of `bitparity`: each adds its options to the parser and runs after parsing.
// Every check of the input happens before any work starts; run_* return an exit code.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "bitparity/reports/check_run.hpp"

namespace bitparity::reports {

// What was asked, as typed: `requested` is resolved and checked into the options of the run
// (devices expanded, default suites filled in) before any work starts.
struct CheckCommand {
  CheckOptions requested;
  std::vector<std::string> suite_names;  // --suite as given, parsed into requested.suites
  std::vector<std::string> maps;         // --map NAME|FILE, resolved into requested.formats
  std::vector<std::string> implementations;  // --implementation, checked besides the --device list
  std::string json_path;
  bool json_given = false;  // --json was given (an empty path is refused, not ignored)
  bool cases_given = false;  // --cases was given (the suites over ranks keep their own default)
  bool require_gpu = false;
};

struct MutantsCommand {
  double seconds = 30.0;
  std::uint64_t seed = 1;
  std::string json_path;
  bool json_given = false;  // --json was given (an empty path is refused, not ignored)
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
  std::vector<std::string> maps;      // 8-bit states: maps instead of the optimizers' own (--map)
  std::vector<std::string> settings;  // NAME=VALUE hyperparameters over the typical values
  std::uint64_t seed = 1;
  std::string json_path;
  bool json_given = false;  // --json was given (an empty path is refused, not ignored)
  bool require_gpu = false;
  CLI::Option* blocksize_option = nullptr;  // to tell a given --block-size from the default
};

struct StatePlanCommand {
  std::string optimizer = "adam";
  std::vector<std::int64_t> sizes;
  std::int64_t blocksize = 256;
  std::int64_t min_8bit_size = 4096;
  bool fp32 = false;
  bool eight_bit_option_given = false;  // --block-size or --min-8bit-size: nothing to do with --fp32
};

// `mpirun -np W bitparity sharded`: P6 rank parity over the ranks mpirun started.
struct ShardedCommand {
  std::vector<std::string> properties;  // P6, P2r, P10, P11 (default all)
  std::vector<std::string> optimizers, formats, dtypes, layouts;
  std::vector<std::string> storages;  // P10 quant_storage dtypes: u8, f16, bf16, f32 (default all)
  std::vector<std::string> grad_dtypes;  // P10: none (frozen) or the adapter's gradient dtype (default all)
  std::vector<int> state_bits;  // 32 and/or 8
  std::string implementation = "cpu";            // on every rank, unless --rank-implementation names it
  std::vector<std::string> rank_implementations;  // R=NAME: rank R runs NAME (a mixed world)
  std::string communicator = "mpi";               // mpi, mpi-integer-sum or nccl
  int steps = 3;
  int cases = 1;
  std::uint64_t seed = 1;
  std::string mutant;           // a driver fault (sharded-*): exit 0 when the properties kill it
  std::string json;             // rows as JSON (written by rank 0, atomically)
  bool json_given = false;      // --json was given (an empty path is refused, not ignored)
  double stuck_seconds = 120;   // a rank with no progress for this long fails the run
  std::string inject_failure;   // test hook RANK:HOW:STEP, HOW = throw, abort, hang or kill
  bool benchmark = false;       // time the sharded step against the unsharded one instead of checking
  std::int64_t elements = 1 << 20;  // --benchmark: parameter elements per row
  bool elements_given = false;
  std::string checkpoint_dir;       // P11: where checkpoints go (default: a temporary folder, removed after)
  std::string resume_implementation;  // P11: the implementation after loading (default: the same)
  bool all_world_pairs = false;     // P11: every (W, W') in 1..size per case instead of one drawn pair
  std::vector<std::string> maps;    // 8-bit states (P6, P11): the maps instead of the optimizers' own
  std::string case_file;            // a saved rank case: its one row with the inputs it holds
  bool steps_given = false, seed_given = false;  // --steps, --seed named (refused with --case)
  bool findings_exit_zero = false;  // hidden: findings end with 0 (the caller reads --json)
};

// `bitparity checkpoint inspect FILE`: a checkpoint's header, tensors, checksums and layout.
// `bitparity list`: the catalogues, as text and with --json FILE as a document for tools.
struct ListCommand {
  std::string json;
  bool json_given = false;  // --json was given (an empty path is refused, not ignored)
};

struct CheckpointCommand {
  std::string file;
  std::string json;  // the same as JSON (atomically)
  bool json_given = false;  // --json was given (an empty path is refused, not ignored)
};

// `bitparity fuzz`: the check's selection, fuzzed round-robin until the budget ends (fuzz.hpp).
struct FuzzCommand {
  CheckCommand selection;                    // --suite, --property, --format, --optimizer, --dtype, --block-size, --device
  std::vector<std::string> implementations;  // --implementation: cpu, cuda:N or mutant:NAME
  std::string budget = "60s";
  std::string shrink_budget;  // over ranks: how long one failure may shrink (default 30s)
  std::int64_t visits = 0;
  std::int64_t first_visit = -1;  // -1: where the corpus state left off
  std::string corpus = "bitparity-corpus";
  int jobs = 1;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::string json_path;
  bool json_given = false;
  bool stop_on_failure = false;
  bool require_gpu = false;
  double log_every = 60;
  // A worker process (started by the supervisor, not by people).
  int worker = -1;
  int report_fd = -1;
  std::int64_t visit_end = 0;
};

// `bitparity replay PATH...`: saved cases re-run from their files.
struct ReplayCommand {
  std::vector<std::string> paths;
  std::string implementation;  // instead of each case's own
  std::string json_path;
  bool json_given = false;
};

// `bitparity report --out DIR`: the release drift campaign and its gate (report.hpp).
struct ReportCommand {
  std::string out;
  std::string baseline;
  std::int64_t steps = 200;
  std::int64_t elements = 256;
  std::int64_t blocksize = 256;
  std::uint64_t seed = 1;
  int check_cases = 20;
  bool skip_sweeps = false;
  std::string implementation = "cpu";
  std::vector<std::string> devices;
  bool require_gpu = false;
};

// The check's selection resolved and checked (devices expanded, suites filled in); throws UsageError.
CheckOptions resolve_check_selection(const CheckCommand& command, bool& asked_all);
// Why a selection plans nothing, in the words of its options.
std::string why_empty(const CheckOptions& options);
// Refuses block sizes that no selected target supports.
void check_block_sizes(const CheckOptions& options, const std::vector<PlannedRow>& plan);

void add_fuzz_command(CLI::App& app, FuzzCommand& command);
void add_report_command(CLI::App& app, ReportCommand& command);
int run_report_command(const ReportCommand& command);
int run_fuzz_command(const FuzzCommand& command);
void add_replay_command(CLI::App& app, ReplayCommand& command);
int run_replay_command(const ReplayCommand& command);
void add_check_command(CLI::App& app, CheckCommand& command);
void add_checkpoint_command(CLI::App& app, CheckpointCommand& command);
int run_checkpoint_command(const CheckpointCommand& command);
void add_sharded_command(CLI::App& app, ShardedCommand& command);
int run_sharded_command(const ShardedCommand& command);
// The words of a saved rank case ("sharded", options) as `sharded` reads them, with `--case` when
// `with_case`: throws UsageError for an unknown option, a bad value or one a case does not take.
void check_rank_case_arguments(const std::vector<std::string>& arguments, bool with_case);
void add_mutants_command(CLI::App& app, MutantsCommand& command);
void add_drift_command(CLI::App& app, DriftCommand& command);
void add_state_plan_command(CLI::App& app, StatePlanCommand& command);
void add_list_command(CLI::App& app, ListCommand& command);

int run_check_command(const CheckCommand& command);
int run_mutants_command(const MutantsCommand& command);
int run_drift_command(const DriftCommand& command);
int run_state_plan_command(const StatePlanCommand& command);
int run_list_command(const ListCommand& command);

// --require-gpu or BITPARITY_REQUIRE_GPU=1: then a missing or unusable GPU is a failure (exit 4).
bool gpu_required(bool flag);
void require_usable_gpu();  // throws GpuMissingError naming the reason
// The notice printed when --device all finds no GPU and none is required.
std::string no_gpu_notice();

}  // namespace bitparity::reports
