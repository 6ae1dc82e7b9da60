#pragma once
// What `bitparity sharded` will run, decided from the options alone (before MPI starts, the same on
// every rank): the rows, the implementation of each rank, the mutant hunted. Bad options throw
// UsageError here, so that no rank starts work on them.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/communicators.hpp"
#include "bitparity/distributed/gathered_layout.hpp"
#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/distributed/quant_storage.hpp"
#include "bitparity/distributed/shard_plan.hpp"
#include "bitparity/distributed/sharded_case.hpp"
#include "bitparity/distributed/storage_parity.hpp"
#include "bitparity/distributed/sharded_optimizer.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/fixtures/operation_family.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

inline constexpr const char* kGatheredLayoutName = "chunk+all_gather";  // the P2r rows' layout

struct ShardedRowPlan {
  std::string property;  // "P6" (rank parity and seed 002), "P2r" (seed 000 over real ranks), "P10" (quant storage),
                         // "P11" (resume from a checkpoint on another world size or device)
  fixtures::OperationFamily family = fixtures::OperationFamily::optimizer_step;
  OptimizerKind kind = OptimizerKind::adam;
  QuantFormat format = QuantFormat::dynamic8_signed;
  DType dtype = DType::f32;
  distributed::ShardLayout layout = distributed::ShardLayout::zero12;  // P6 and P11
  DType storage = DType::u8;                                          // P10 only: quant_storage (dtype: compute)
  distributed::StorageLayout storage_layout = distributed::StorageLayout::fsdp1_flat;  // P10 only
  std::optional<DType> grad = std::nullopt;  // P10 only: the gradients of the unit's adapter; empty: the weight alone, frozen
  std::string entry() const;   // "fp32 step", "8-bit step", "quantize", "dequantize", "convert"
  std::string target() const;  // the optimizer or format ("-" for convert)
  std::string layout_name() const;
  std::uint64_t case_seed(std::uint64_t run_seed, int case_index) const;  // independent of the selection
};

struct Injected {
  int rank = -1, step = 0;
  std::string how;
};

struct ShardedPlan {
  std::vector<ShardedRowPlan> rows;
  std::string implementation;             // every rank's, unless named below
  std::map<int, std::string> rank_implementations;
  distributed::CommunicatorKind communicator = distributed::CommunicatorKind::mpi;
  distributed::DriverFault fault = distributed::DriverFault::none;
  distributed::StorageFault storage_fault = distributed::StorageFault::none;
  distributed::CheckpointFault checkpoint_fault = distributed::CheckpointFault::none;
  std::string resume_implementation;      // P11: after loading; empty: the rank's own
  StateMaps maps;                         // P6 and P11 8-bit states (--map); empty: the optimizers' own
  std::string hunted_mutant;              // a driver fault or an implementation mutant; empty: none
  Injected injected;
  std::shared_ptr<const distributed::ShardedCase> saved_case;          // --case: the one P6 or P11 row's inputs
  std::shared_ptr<const distributed::StorageCase> saved_storage_case;  // --case: the one P10 row's inputs
  std::shared_ptr<const distributed::GatheredCase> saved_gathered_case;  // --case: the one P2r row's inputs
  std::string case_file;
  int case_world = 0;  // --case: the world size it was saved on
  std::string implementation_of(int rank) const;
};

// Whether an implementation's mutant alters what a row over ranks runs, from the row's entry() and
// target() (as a saved case names them): a row it does not alter could only see it "survive".
bool mutant_alters_row(const fixtures::MutantInfo& mutant, const std::string& entry, const std::string& target);

// plan_sharded's refusal when the hunted mutant:NAME alters none of the selected rows.
class NoRowTheMutantAlters : public UsageError {
 public:
  using UsageError::UsageError;
};

ShardedPlan plan_sharded(const ShardedCommand& command);

std::vector<std::string> rank_implementations(const ShardedPlan& plan, int world);
// "cpu x3" or "cuda:0, cpu x2": the ranks' implementations, runs of equal names counted.
std::string ranks_summary(const std::vector<std::string>& names);
// Chooses the communicator and builds this rank's implementation. Every rank learns of a refusal
// (rank 0 printed why) and gets its exit code; exit_passed otherwise.
int prepare_rank(const ShardedPlan& plan, distributed::MpiWorld& world, std::unique_ptr<fixtures::Implementation>& implementation);

// --benchmark: the sharded step's cost against the unsharded step for the P6 rows; rank 0 prints.
int run_sharded_benchmark_rows(const ShardedCommand& command, const ShardedPlan& plan, distributed::MpiWorld& world);

// The rows over the ranks of `world`; rank 0 prints them and writes --json. Returns the exit code.
int run_sharded_rows(const ShardedCommand& command, const ShardedPlan& plan, distributed::MpiWorld& world);

}  // namespace bitparity::reports
