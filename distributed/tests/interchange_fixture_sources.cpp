// Writes, with bitparity's own writer, the files that scripts/make-interchange-fixtures hands to the
// reference safetensors implementation: a checkpoint (universal and rank shard) of
// interchange_config() after kInterchangeSteps steps, and a bitsandbytes-style 8-bit state file
// with its maps as qmap1/qmap2 tensors.
//   interchange_fixture_sources OUT_DIR
#include <cstdio>
#include <exception>
#include <filesystem>
#include <vector>

#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/safetensors.hpp"
#include "bitparity/distributed/solo_communicator.hpp"
#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/code_map.hpp"
#include "interchange_support.hpp"

namespace {

using namespace bitparity;
using namespace bitparity::distributed;

std::span<const std::uint8_t> bytes_of(const std::vector<float>& values) {
  return {reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * sizeof(float)};
}

void write_sources(const std::filesystem::path& out) {
  std::filesystem::create_directories(out / "checkpoint");
  SoloCommunicator communicator;
  const auto cpu = fixtures::make_implementation("cpu");
  ShardedOptimizer optimizer(interchange_config(), communicator, *cpu);
  for (int step = 1; step <= kInterchangeSteps; ++step) optimizer.step(step);
  save_checkpoint(optimizer, (out / "checkpoint").string());
  // As bitsandbytes' 8-bit Adam keeps one parameter's state: codes, absmax per block, and the maps.
  const std::vector<float> qmap1 = code_map(QuantFormat::dynamic8_signed_fused).values;
  const std::vector<float> qmap2 = code_map(QuantFormat::dynamic8_unsigned_fused).values;
  std::vector<std::uint8_t> codes(300);
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(i * 7);
  const std::vector<float> absmax = {0.5f, 0.25f};
  const std::vector<SafetensorsTensor> tensors = {{"qmap1", "F32", {256}, bytes_of(qmap1)},
                                                  {"qmap2", "F32", {256}, bytes_of(qmap2)},
                                                  {"state1", "U8", {300}, codes},
                                                  {"absmax1", "F32", {2}, bytes_of(absmax)}};
  fixtures::write_file_atomically((out / "bnb_state.safetensors").string(),
                                  serialize_safetensors(tensors, {{"optimizer", "bitsandbytes Adam8bit (one parameter)"}}));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: interchange_fixture_sources OUT_DIR\n");
    return 2;
  }
  try {
    write_sources(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
