// `bitparity sharded`: P6 rank parity and the seed-002 class over the ranks that mpirun started.
// Every rank checks the options the same way before MPI starts; only rank 0 prints.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#if BITPARITY_HAS_MPI
#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/distributed/rank_parity.hpp"
#include "bitparity/fixtures/implementation.hpp"
#endif

namespace bitparity::reports {

void add_sharded_command(CLI::App& app, ShardedCommand& command) {
  auto* sharded = app.add_subcommand(
      "sharded", "P6 rank parity: the sharded step (ZeRO-1/2, ZeRO-3, per-parameter) over the ranks of `mpirun -np W` "
                 "against the unsharded step, bitwise, with gradients and states checked by parameter id");
  sharded->add_option("--optimizer", command.optimizers, "only these optimizers (repeatable; default all)");
  sharded->add_option("--dtype", command.dtypes, "parameter dtypes: f32, f16, bf16 (repeatable; default all)");
  sharded->add_option("--layout", command.layouts, "zero-1/2, zero-3 or per-parameter (repeatable; default all)");
  sharded->add_option("--states", command.state_bits, "32 (fp32 states) or 8 (8-bit states) (repeatable; default both)")
      ->check(CLI::IsMember({32, 8}));
  sharded->add_option("--steps", command.steps, "optimizer steps per case (default 3)")->check(integer_in(1, 1000));
  sharded->add_option("--cases", command.cases, "random configurations per optimizer x dtype x layout x states (default 1)")
      ->check(integer_in(1, 100000));
  sharded->add_option("--seed", command.seed, "run seed (default 1)")->check(seed_value());
  sharded->add_option("--mutant", command.mutant, "run with a driver fault (sharded-*; `bitparity list`): exit 0 when killed");
  sharded->add_option("--stuck-seconds", command.stuck_seconds, "a rank without progress this long fails the run (default 120)")
      ->check(seconds_in(86400));
  sharded->add_option("--inject-failure", command.inject_failure, "test hook RANK:HOW:STEP (HOW: throw, abort, hang, kill)")
      ->group("");
}

#if BITPARITY_HAS_MPI
namespace {

using distributed::ShardLayout;

struct Injected {
  int rank = -1, step = 0;
  std::string how;
};

Injected parse_injection(const std::string& text) {
  Injected injected;
  if (text.empty()) return injected;
  const auto first = text.find(':'), second = text.rfind(':');
  if (first == std::string::npos || first == second) throw UsageError("--inject-failure wants RANK:HOW:STEP, got '" + text + "'");
  try {
    injected.rank = std::stoi(text.substr(0, first));
    injected.step = std::stoi(text.substr(second + 1));
  } catch (const std::exception&) {
    throw UsageError("--inject-failure wants RANK:HOW:STEP with whole numbers, got '" + text + "'");
  }
  injected.how = text.substr(first + 1, second - first - 1);
  if (injected.how != "throw" && injected.how != "abort" && injected.how != "hang" && injected.how != "kill") {
    throw UsageError("--inject-failure: HOW must be throw, abort, hang or kill, got '" + injected.how + "'");
  }
  return injected;
}

void fail_on_purpose(const Injected& injected) {
  distributed::set_activity(distributed::current_activity() + " (failure injected: " + injected.how + ")");
  if (injected.how == "throw") throw Error(ErrorCode::invalid_argument, "injected failure");
  std::fprintf(stderr, "rank %d: injected %s during %s\n", injected.rank, injected.how.c_str(),
               distributed::current_activity().c_str());
  std::fflush(stderr);
  if (injected.how == "abort") std::abort();
  if (injected.how == "kill") std::raise(SIGKILL);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // hang: the watchdog of a peer reports it
}

template <class T, class Parse>
std::vector<T> chosen(const std::vector<std::string>& names, const std::vector<T>& all, Parse parse, const char* option) {
  if (names.empty()) return all;
  std::vector<T> out;
  for (const auto& name : names) {
    const T value = parse(name);
    if (std::find(out.begin(), out.end(), value) != out.end()) throw UsageError(std::string(option) + " " + name + " given twice");
    out.push_back(value);
  }
  return out;
}

DType parse_float_dtype(const std::string& name) {
  if (name == "f32") return DType::f32;
  if (name == "f16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  throw UsageError("unknown dtype '" + name + "'; use f32, f16 or bf16");
}

int run_on_ranks(const ShardedCommand& command, const std::vector<OptimizerKind>& kinds, const std::vector<DType>& dtypes,
                 const std::vector<ShardLayout>& layouts, const std::vector<int>& bits, distributed::DriverFault fault,
                 const Injected& injected, distributed::MpiWorld& world);

}  // namespace

int run_sharded_command(const ShardedCommand& command) {
  std::vector<OptimizerKind> all_kinds;
  for (const auto& info : optimizers()) all_kinds.push_back(info.kind);
  const auto kinds = chosen(command.optimizers, all_kinds, [](const std::string& n) {
    try { return parse_optimizer(n); } catch (const Error& e) { throw UsageError(e.what()); }
  }, "--optimizer");
  const auto dtypes = chosen(command.dtypes, std::vector<DType>{DType::f32, DType::f16, DType::bf16}, parse_float_dtype, "--dtype");
  const auto layouts = chosen(command.layouts, std::vector<ShardLayout>(std::begin(distributed::kShardLayouts), std::end(distributed::kShardLayouts)),
                              [](const std::string& n) {
                                try { return distributed::parse_layout(n); } catch (const Error& e) { throw UsageError(e.what()); }
                              }, "--layout");
  std::vector<int> bits = command.state_bits.empty() ? std::vector<int>{32, 8} : command.state_bits;
  const distributed::DriverFault fault = command.mutant.empty() ? distributed::DriverFault::none : [&] {
    try { return distributed::parse_fault(command.mutant); } catch (const Error& e) { throw UsageError(e.what()); }
  }();
  const Injected injected = parse_injection(command.inject_failure);
  const bool any_8bit_kind = std::any_of(kinds.begin(), kinds.end(), [](OptimizerKind k) { return has_8bit_variant(k); });
  if (command.state_bits == std::vector<int>{8} && !any_8bit_kind) {
    throw UsageError("none of the selected optimizers has 8-bit states; drop --states 8 or choose another optimizer");
  }

  int argc = 0;
  char** argv = nullptr;
  distributed::MpiWorld world(argc, argv, command.stuck_seconds, exit_run_error);
  try {
    return run_on_ranks(command, kinds, dtypes, layouts, bits, fault, injected, world);
  } catch (const std::exception& e) {
    distributed::rank_failed(e.what(), exit_run_error);  // ends every rank, naming this one
  }
}

namespace {

int run_on_ranks(const ShardedCommand& command, const std::vector<OptimizerKind>& kinds, const std::vector<DType>& dtypes,
                 const std::vector<ShardLayout>& layouts, const std::vector<int>& bits, distributed::DriverFault fault,
                 const Injected& injected, distributed::MpiWorld& world) {
  const int rank = world.rank(), size = world.size();
  auto implementation = fixtures::make_implementation("cpu");
  const bool lead = rank == 0;
  if (lead) {
    std::printf("bitparity sharded: world of %d rank%s, seed %llu, %d step%s per case%s\n", size, size == 1 ? "" : "s",
                static_cast<unsigned long long>(command.seed), command.steps, command.steps == 1 ? "" : "s",
                fault == distributed::DriverFault::none ? "" : (", mutant " + command.mutant).c_str());
    std::printf("%-4s %-10s %-6s %-5s %-14s %5s %6s %10s %10s %10s %10s\n", "prop", "optimizer", "states", "dtype", "layout",
                "ranks", "cases", "elements", "wrong p", "wrong g", "wrong s");
  }
  std::int64_t total_wrong = 0, rows = 0, failed_rows = 0;
  std::string first_wrong;
  std::int64_t case_number = 0;
  for (int state_bits : bits) {
    for (OptimizerKind kind : kinds) {
      if (state_bits == 8 && !has_8bit_variant(kind)) continue;
      for (DType dtype : dtypes) {
        for (ShardLayout layout : layouts) {
          distributed::ParityTally row;
          for (int c = 0; c < command.cases; ++c, ++case_number) {
            const std::uint64_t case_seed = command.seed * 1000003ull + static_cast<std::uint64_t>(case_number);
            distributed::ShardedConfig config =
                distributed::draw_sharded_config(kind, state_bits == 8, dtype, layout, case_seed, size);
            config.fault = fault;
            distributed::set_activity("case " + std::to_string(case_number) + " (" + std::string(optimizer_info(kind).name) + ")");
            if (injected.rank == rank && injected.step == case_number) fail_on_purpose(injected);
            const distributed::ParityTally tally = distributed::run_rank_parity(config, command.steps, world.communicator(), *implementation);
            row.wrong_parameters += tally.wrong_parameters;
            row.wrong_gradients += tally.wrong_gradients;
            row.wrong_states += tally.wrong_states;
            row.checked += tally.checked;
            if (first_wrong.empty() && !tally.first_wrong.empty()) first_wrong = tally.first_wrong + " (seed " + std::to_string(case_seed) + ")";
          }
          ++rows;
          failed_rows += row.wrong() > 0 ? 1 : 0;
          total_wrong += row.wrong();
          if (lead) {
            std::printf("%-4s %-10s %-6s %-5s %-14s %5d %6d %10lld %10lld %10lld %10lld\n", "P6",
                        std::string(optimizer_info(kind).name).c_str(), state_bits == 8 ? "8-bit" : "fp32", dtype_name(dtype),
                        std::string(distributed::layout_name(layout)).c_str(), size, command.cases,
                        static_cast<long long>(row.checked), static_cast<long long>(row.wrong_parameters),
                        static_cast<long long>(row.wrong_gradients), static_cast<long long>(row.wrong_states));
          }
        }
      }
    }
  }
  // Where the first wrong element was, from the lowest rank that saw one.
  for (int r = 0; r < size; ++r) {
    if (world.communicator().all_reduce_any(!first_wrong.empty() && r == rank)) {
      if (r == rank) std::fprintf(stderr, "first wrong element: %s\n", first_wrong.c_str());
      break;
    }
  }
  world.communicator().barrier();
  if (lead) {
    std::printf("\nsummary: %lld rows on %d ranks, %lld failed, %lld wrong elements (summed over ranks)\n",
                static_cast<long long>(rows), size, static_cast<long long>(failed_rows), static_cast<long long>(total_wrong));
    if (fault != distributed::DriverFault::none) {
      std::printf("mutant %s: %s\n", command.mutant.c_str(), total_wrong > 0 ? "killed" : "SURVIVED");
    }
  }
  if (fault != distributed::DriverFault::none) return total_wrong > 0 ? exit_passed : exit_failed;
  return total_wrong == 0 ? exit_passed : exit_failed;
}

}  // namespace
#else
int run_sharded_command(const ShardedCommand&) {
  throw Error(ErrorCode::invalid_argument,
              "this bitparity was built without MPI; install Open MPI (./scripts/install-deps) and rebuild to run `sharded`");
}
#endif

}  // namespace bitparity::reports
