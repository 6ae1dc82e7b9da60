// `bitparity list`: what the registry, the catalogues and this machine offer.
#include <cstdio>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/fixtures/mutants.hpp"
#if BITPARITY_HAS_MPI
#include "bitparity/distributed/communicators.hpp"
#include "bitparity/distributed/quant_storage.hpp"
#include "bitparity/distributed/shard_plan.hpp"
#endif
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/properties/property.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/check_over_ranks.hpp"
#include "rank_mutants.hpp"

namespace bitparity::reports {

void add_list_command(CLI::App& app) {
  app.add_subcommand("list", "list suites, formats, optimizers, properties, mutants and devices");
}

int run_list_command() {
  std::printf("suites:");
  for (fixtures::Suite suite : fixtures::kSuites) std::printf(" %s", std::string(fixtures::suite_name(suite)).c_str());
#if BITPARITY_HAS_MPI
  std::printf("; over ranks (mpirun -np W bitparity check --suite NAME):");
  for (const auto& suite : suites_over_ranks()) std::printf(" %s", suite.c_str());
#endif
  std::printf("\ncode maps (suite quant; check --format NAME, or --map NAME|FILE.json|FILE.safetensors[:TENSOR]):\n");
  for (const auto& format : properties::quant_registry()) {
    std::printf("  %-24s %d-bit  block sizes:", format.name.c_str(), format.bits);
    for (auto size : format.block_sizes) std::printf(" %lld", static_cast<long long>(size));
    std::printf("\n  %-24s %s\n", "", std::string(quant_format_info(format.format).description).c_str());
  }
  std::printf("optimizers (suites optim32; optim8 for those with 8-bit states):\n");
  for (const auto& info : optimizers()) {
    std::printf("  %-10s %d states%s  %s\n", std::string(info.name).c_str(), info.states,
                has_8bit_variant(info.kind) ? ", 8-bit" : "       ", std::string(info.description).c_str());
  }
  std::printf("hyperparameters (typical value, valid range; drift --set NAME=VALUE):\n");
  for (const auto& info : optimizers()) {
    const Hyperparameters typical = typical_hyperparameters(info.kind);
    std::printf("  %-10s", std::string(info.name).c_str());
    const char* separator = " ";
    for (const auto& spec : info.hyperparameters) {
      std::printf("%s%s=%g (%s)", separator, std::string(spec.name).c_str(), spec.get(typical),
                  std::string(range_text(spec.range)).c_str());
      separator = ", ";
    }
    std::printf("\n");
  }
  std::printf("properties:\n");
  for (const auto& property : properties::property_catalogue()) {
    std::printf("  %-4s %-20s [%s] %s\n", property.id.c_str(), property.name.c_str(), std::string(fixtures::suite_name(property.suite)).c_str(),
                property.claim.c_str());
  }
  std::printf("optimizer-state memory per parameter element (8-bit: codes + fp32 absmax per block of 256):\n");
  for (const auto& info : optimizers()) {
    if (!has_8bit_variant(info.kind)) continue;
    std::printf("  %-10s 32-bit %5.2f B   8-bit %5.3f B   (%.1f%%)\n", std::string(info.name).c_str(),
                state_bytes_per_element_32bit(info.kind), state_bytes_per_element_8bit(info.kind, 256),
                100.0 * state_bytes_per_element_8bit(info.kind, 256) / state_bytes_per_element_32bit(info.kind));
  }
  std::printf("mutants (bitparity mutants --only NAME):\n");
  for (const auto& mutant : fixtures::mutant_catalogue()) {
    std::printf("  %-32s %s\n", mutant.name.c_str(), mutant.description.c_str());
  }
#if BITPARITY_HAS_MPI
  std::printf("sharded properties (mpirun -np W bitparity sharded --property NAME):\n"
              "  P6   rank parity: sharded step + all_gather bitwise the unsharded step; gradients and states by id (seed 002)\n"
              "  P2r  seed 000: tensors chunked over the ranks, all-gathered, used through non-contiguous views\n"
              "  P10  quantized storage: packed codes in u8/f16/bf16/f32 quant_storage sharded as FSDP does and regathered "
              "bytewise, dequantized bitwise unchanged\n"
              "  P11  resume: save after k steps on W ranks, load on W' ranks (universal form) or the same W (rank shards), "
              "on another device with --resume-implementation, continue: bitwise the run that never stopped\n");
  std::printf("sharded layouts (--layout NAME):");
  for (auto layout : distributed::kShardLayouts) std::printf(" %s", std::string(distributed::layout_name(layout)).c_str());
  std::printf(" (P6, P11) chunk+all_gather (P2r)");
  for (auto layout : distributed::kStorageLayouts) std::printf(" %s", std::string(distributed::storage_layout_name(layout)).c_str());
  std::printf(" (P10)");
  std::printf("\nsharded communicators (--communicator NAME): mpi mpi-integer-sum nccl (%s)",
              distributed::nccl_built() ? "NCCL built" : "NCCL not built: no libnccl with the CUDA toolkit");
  std::printf("\nsharded mutants (bitparity mutants --only NAME hunts one over %d ranks; mpirun -np W bitparity sharded --mutant NAME):\n",
              kRankMutantWorld);
  for (const RankMutant& mutant : rank_mutant_catalogue()) {
    const std::string where = mutant.not_over_ranks.empty() ? "(" + mutant.killer + ")" : "(on a GPU: ctest -R DevicePlacement)";
    std::printf("  %-32s %s %s\n", mutant.name.c_str(), mutant.description.c_str(), where.c_str());
  }
#else
  std::printf("sharded: not built (no Open MPI found; ./scripts/install-deps installs it)\n");
#endif
  std::printf("devices:\n");
  for (const auto& device : fixtures::device_implementation_names()) std::printf("  %s\n", device.c_str());
  std::printf("CUDA launchers %s\n", cuda_built() ? "built" : "not built (nvcc was not found)");
  return exit_passed;
}

}  // namespace bitparity::reports
