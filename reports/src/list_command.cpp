// `bitparity list`: what the registry, the catalogues and this machine offer.
#include <cstdio>
#include <initializer_list>
#include <utility>

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
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"
#include "bitparity/reports/check_over_ranks.hpp"
#include "rank_mutants.hpp"

namespace bitparity::reports {

void add_list_command(CLI::App& app, ListCommand& command) {
  auto* list = app.add_subcommand("list", "list suites, formats, optimizers, properties, mutants and devices");
  list->add_option("--json", command.json, "also write the lists as JSON to this file (atomically), for tools")
      ->each([&command](const std::string&) { command.json_given = true; });
}

namespace {

// What `list` prints, as one document: the text below and --json both come from it.
nlohmann::json list_document() {
  nlohmann::json document = {{"schema", "bitparity.list/1"}, {"bitparity", version_string()}};
  for (fixtures::Suite suite : fixtures::kSuites) document["suites"].push_back(std::string(fixtures::suite_name(suite)));
  document["suites_over_ranks"] = nlohmann::json::array();
#if BITPARITY_HAS_MPI
  for (const auto& suite : suites_over_ranks()) document["suites_over_ranks"].push_back(suite);
#endif
  for (const auto& format : properties::quant_registry()) {
    document["code_maps"].push_back({{"name", format.name}, {"bits", format.bits}, {"block_sizes", format.block_sizes},
                                     {"description", std::string(quant_format_info(format.format).description)}});
  }
  for (const auto& info : optimizers()) {
    const Hyperparameters typical = typical_hyperparameters(info.kind);
    nlohmann::json hyperparameters = nlohmann::json::array();
    for (const auto& spec : info.hyperparameters) {
      hyperparameters.push_back({{"name", std::string(spec.name)}, {"typical", spec.get(typical)}, {"range", std::string(range_text(spec.range))}});
    }
    nlohmann::json entry = {{"name", std::string(info.name)}, {"states", info.states}, {"eight_bit", has_8bit_variant(info.kind)},
                            {"description", std::string(info.description)}, {"hyperparameters", hyperparameters}};
    if (has_8bit_variant(info.kind)) {
      entry["state_bytes_per_element"] = {{"32-bit", state_bytes_per_element_32bit(info.kind)},
                                          {"8-bit at block size 256", state_bytes_per_element_8bit(info.kind, 256)}};
    }
    document["optimizers"].push_back(entry);
  }
  for (const auto& property : properties::property_catalogue()) {
    document["properties"].push_back({{"id", property.id}, {"name", property.name}, {"suite", std::string(fixtures::suite_name(property.suite))},
                                      {"claim", property.claim}});
  }
  for (const auto& mutant : fixtures::mutant_catalogue()) document["mutants"].push_back({{"name", mutant.name}, {"description", mutant.description}});
#if BITPARITY_HAS_MPI
  for (const auto& [id, claim] : std::initializer_list<std::pair<const char*, const char*>>{
           {"P6", "rank parity: sharded step + all_gather bitwise the unsharded step; gradients and states by id (seed 002)"},
           {"P2r", "seed 000: tensors chunked over the ranks, all-gathered, used through non-contiguous views"},
           {"P10", "quantized storage: packed codes in u8/f16/bf16/f32 quant_storage sharded as FSDP does and regathered bytewise, "
                   "dequantized bitwise unchanged"},
           {"P11", "resume: save after k steps on W ranks, load on W' ranks (universal form) or the same W (rank shards), on another "
                   "device with --resume-implementation, continue: bitwise the run that never stopped"}}) {
    document["sharded"]["properties"].push_back({{"id", id}, {"claim", claim}});
  }
  nlohmann::json layouts = nlohmann::json::array();
  for (auto layout : distributed::kShardLayouts) layouts.push_back({{"name", std::string(distributed::layout_name(layout))}, {"properties", {"P6", "P11"}}});
  layouts.push_back({{"name", "chunk+all_gather"}, {"properties", {"P2r"}}});
  for (auto layout : distributed::kStorageLayouts) layouts.push_back({{"name", std::string(distributed::storage_layout_name(layout))}, {"properties", {"P10"}}});
  document["sharded"]["layouts"] = layouts;
  document["sharded"]["communicators"] = {"mpi", "mpi-integer-sum", "nccl"};
  document["sharded"]["nccl_built"] = distributed::nccl_built();
  document["sharded"]["mutant_world"] = kRankMutantWorld;
  for (const RankMutant& mutant : rank_mutant_catalogue()) {
    document["sharded"]["mutants"].push_back({{"name", mutant.name}, {"description", mutant.description}, {"killer", mutant.killer},
                                              {"over_ranks", mutant.not_over_ranks.empty()}});
  }
#else
  document["sharded"] = nullptr;  // not built: no Open MPI
#endif
  document["devices"] = fixtures::device_implementation_names();
  document["cuda_built"] = cuda_built();
  return document;
}

std::string text(const nlohmann::json& value) { return value.get<std::string>(); }

}  // namespace

int run_list_command(const ListCommand& command) {
  if (command.json_given) check_result_path("--json", command.json);
  const nlohmann::json d = list_document();
  std::printf("suites:");
  for (const auto& suite : d.at("suites")) std::printf(" %s", text(suite).c_str());
  if (!d.at("suites_over_ranks").empty()) {
    std::printf("; over ranks (mpirun -np W bitparity check --suite NAME):");
    for (const auto& suite : d.at("suites_over_ranks")) std::printf(" %s", text(suite).c_str());
  }
  std::printf("\ncode maps (suite quant; check --format NAME, or --map NAME|FILE.json|FILE.safetensors[:TENSOR]):\n");
  for (const auto& format : d.at("code_maps")) {
    std::printf("  %-24s %d-bit  block sizes:", text(format.at("name")).c_str(), format.at("bits").get<int>());
    for (const auto& size : format.at("block_sizes")) std::printf(" %lld", size.get<long long>());
    std::printf("\n  %-24s %s\n", "", text(format.at("description")).c_str());
  }
  std::printf("optimizers (suites optim32; optim8 for those with 8-bit states):\n");
  for (const auto& info : d.at("optimizers")) {
    std::printf("  %-10s %d states%s  %s\n", text(info.at("name")).c_str(), info.at("states").get<int>(),
                info.at("eight_bit").get<bool>() ? ", 8-bit" : "       ", text(info.at("description")).c_str());
  }
  std::printf("hyperparameters (typical value, valid range; drift --set NAME=VALUE):\n");
  for (const auto& info : d.at("optimizers")) {
    std::printf("  %-10s", text(info.at("name")).c_str());
    const char* separator = " ";
    for (const auto& spec : info.at("hyperparameters")) {
      std::printf("%s%s=%g (%s)", separator, text(spec.at("name")).c_str(), spec.at("typical").get<double>(), text(spec.at("range")).c_str());
      separator = ", ";
    }
    std::printf("\n");
  }
  std::printf("properties:\n");
  for (const auto& property : d.at("properties")) {
    std::printf("  %-4s %-20s [%s] %s\n", text(property.at("id")).c_str(), text(property.at("name")).c_str(), text(property.at("suite")).c_str(),
                text(property.at("claim")).c_str());
  }
  std::printf("optimizer-state memory per parameter element (8-bit: codes + fp32 absmax per block of 256):\n");
  for (const auto& info : d.at("optimizers")) {
    if (!info.contains("state_bytes_per_element")) continue;
    const double wide = info.at("state_bytes_per_element").at("32-bit"), narrow = info.at("state_bytes_per_element").at("8-bit at block size 256");
    std::printf("  %-10s 32-bit %5.2f B   8-bit %5.3f B   (%.1f%%)\n", text(info.at("name")).c_str(), wide, narrow, 100.0 * narrow / wide);
  }
  std::printf("mutants (bitparity mutants --only NAME):\n");
  for (const auto& mutant : d.at("mutants")) std::printf("  %-32s %s\n", text(mutant.at("name")).c_str(), text(mutant.at("description")).c_str());
  if (d.at("sharded").is_null()) {
    std::printf("sharded: not built (no Open MPI found; ./scripts/install-deps installs it)\n");
  } else {
    const auto& sharded = d.at("sharded");
    std::printf("sharded properties (mpirun -np W bitparity sharded --property NAME):\n");
    for (const auto& property : sharded.at("properties")) std::printf("  %-4s %s\n", text(property.at("id")).c_str(), text(property.at("claim")).c_str());
    std::printf("sharded layouts (--layout NAME):");
    for (const auto& layout : sharded.at("layouts")) {
      std::string properties;
      for (const auto& id : layout.at("properties")) properties += (properties.empty() ? "" : ", ") + text(id);
      std::printf(" %s (%s)", text(layout.at("name")).c_str(), properties.c_str());
    }
    std::printf("\nsharded communicators (--communicator NAME): mpi mpi-integer-sum nccl (%s)",
                sharded.at("nccl_built").get<bool>() ? "NCCL built" : "NCCL not built: no libnccl with the CUDA toolkit");
    std::printf("\nsharded mutants (bitparity mutants --only NAME hunts one over %d ranks; mpirun -np W bitparity sharded --mutant NAME):\n",
                sharded.at("mutant_world").get<int>());
    for (const auto& mutant : sharded.at("mutants")) {
      const std::string where = mutant.at("over_ranks").get<bool>() ? "(" + text(mutant.at("killer")) + ")" : "(on a GPU: ctest -R DevicePlacement)";
      std::printf("  %-32s %s %s\n", text(mutant.at("name")).c_str(), text(mutant.at("description")).c_str(), where.c_str());
    }
  }
  std::printf("devices:\n");
  for (const auto& device : d.at("devices")) std::printf("  %s\n", text(device).c_str());
  std::printf("CUDA launchers %s\n", d.at("cuda_built").get<bool>() ? "built" : "not built (nvcc was not found)");
  if (command.json_given) {
    write_result_file(command.json, json_file_text(d));
    std::printf("results: %s\n", printable_text(command.json).c_str());
  }
  return exit_passed;
}

}  // namespace bitparity::reports
