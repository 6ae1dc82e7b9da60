// Interchange with the reference safetensors implementation through the files in
// fixtures/interchange/safetensors (remade by scripts/make-interchange-fixtures; README there):
// files the reference wrote open in bitparity, and the files bitparity writes are laid out byte for
// byte as those the reference read back. Python's safetensors itself is tried where it is
// installed (safetensors_interchange_python).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/safetensors.hpp"
#include "bitparity/distributed/solo_communicator.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "interchange_support.hpp"

namespace bitparity::distributed {
namespace {

const std::string kFolder = BITPARITY_INTERCHANGE_DIR;

std::string path_of(const std::string& relative) { return kFolder + "/" + relative; }

// Byte j of the reference's synthetic tensor `pattern` (the writer's formula: reference-writer/main.rs).
std::uint8_t pattern_byte(std::size_t pattern, std::size_t j, const std::string& dtype) {
  const auto b = static_cast<std::uint8_t>((j * 37 + pattern * 11 + 5) & 0xFF);
  return dtype == "BOOL" ? static_cast<std::uint8_t>(b & 1) : b;
}

TEST(SafetensorsInterchange, ReadsEveryDtypeTheReferenceWrote) {
  std::ifstream in(path_of("written_by_reference/synthetic.manifest.json"));
  ASSERT_TRUE(in) << "missing fixture; see fixtures/interchange/safetensors/README.md";
  const nlohmann::json manifest = nlohmann::json::parse(in);
  const SafetensorsFile file = read_safetensors(path_of("written_by_reference/synthetic.safetensors"));
  EXPECT_EQ(file.metadata.at("format"), "pt");
  ASSERT_EQ(file.tensors.size(), manifest.at("tensors").size());
  std::set<std::string> dtypes;
  for (const auto& expected : manifest.at("tensors")) {
    const std::string name = expected.at("name");
    const SafetensorsEntry& entry = file.entry(name);
    EXPECT_EQ(entry.dtype, expected.at("dtype").get<std::string>()) << name;
    EXPECT_EQ(entry.shape, expected.at("shape").get<std::vector<std::int64_t>>()) << name;
    const auto bytes = file.bytes(name);
    bool same = true;
    for (std::size_t j = 0; j < bytes.size(); ++j) same = same && bytes[j] == pattern_byte(expected.at("pattern"), j, entry.dtype);
    EXPECT_TRUE(same) << name << ": bytes differ from what the reference wrote";
    EXPECT_EQ(tensor_crc32_hex(bytes), expected.at("crc32").get<std::string>()) << name;
    dtypes.insert(entry.dtype);
  }
  EXPECT_EQ(dtypes.size(), 15u);  // every dtype of the format, scalars and empty tensors included
}

struct Loaded {
  explicit Loaded(const std::string& folder, bool universal) : implementation(fixtures::make_implementation("cpu")) {
    ShardedConfig config = interchange_config();
    config.maps = {};  // the checkpoint's maps must come with it
    optimizer = std::make_unique<ShardedOptimizer>(config, communicator, *implementation);
    if (universal) {
      load_universal_checkpoint(*optimizer, folder);
    } else {
      load_rank_checkpoint(*optimizer, folder);
    }
  }
  SoloCommunicator communicator;
  std::unique_ptr<fixtures::Implementation> implementation;
  std::unique_ptr<ShardedOptimizer> optimizer;
};

// The reference's own layout of the file (its tensor order, its header) carries the same checkpoint.
TEST(SafetensorsInterchange, ACheckpointTheReferenceRewroteLoadsAsTheOriginal) {
  for (const bool universal : {true, false}) {
    Loaded original(path_of("written_by_bitparity/checkpoint"), universal);
    Loaded rewritten(path_of("written_by_reference/checkpoint"), universal);
    EXPECT_EQ(rewritten.optimizer->completed_steps(), kInterchangeSteps);
    EXPECT_EQ(rewritten.optimizer->config().maps, interchange_config().maps);
    const auto a = original.optimizer->whole_parameters(), b = rewritten.optimizer->whole_parameters();
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [id, w] : a) {
      EXPECT_EQ(w.param, b.at(id).param) << id;
      EXPECT_EQ(w.states, b.at(id).states) << id;
      EXPECT_EQ(w.absmax, b.at(id).absmax) << id;
    }
  }
}

// The files the reference read back (reference-read-bitparity.txt) are the bytes today's writer lays
// out for the same tensors and metadata.
TEST(SafetensorsInterchange, TodaysWriterLaysOutTheBytesTheReferenceRead) {
  for (const char* name : {"checkpoint/universal.safetensors", "checkpoint/rank-00000-of-00001.safetensors", "bnb_state.safetensors"}) {
    const SafetensorsFile file = read_safetensors(path_of(std::string("written_by_bitparity/") + name));
    std::vector<SafetensorsTensor> tensors;
    for (const auto& [tensor, entry] : file.tensors) tensors.push_back({tensor, entry.dtype, entry.shape, file.bytes(tensor)});
    const std::string again = serialize_safetensors(tensors, file.metadata);
    const std::vector<std::uint8_t> rewritten(again.begin(), again.end());
    EXPECT_TRUE(rewritten == file.contents)
        << name << ": the writer's layout changed; remake the fixtures (scripts/make-interchange-fixtures) so that the "
        << "reference reads the new layout";
  }
}

}  // namespace
}  // namespace bitparity::distributed
