// `--map FILE`: code maps read from JSON lists of bit patterns and from safetensors tensors (as a
// bitsandbytes 8-bit optimizer state stores qmap1 and qmap2), and the refusals of bad files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/reports/code_map_file.hpp"
#include "bitparity/reports/errors.hpp"
#if BITPARITY_HAS_MPI
#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/safetensors.hpp"
#endif

namespace bitparity::reports {
namespace {

class CodeMapFile : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("bitparity-maps-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::string write(const std::string& name, const std::string& contents) {
    const auto path = (folder_ / name).string();
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
  static std::string refusal(const std::string& spec) {
    try {
      read_code_map_file(spec);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path folder_;
};

nlohmann::json bit_list(const std::vector<float>& values, bool as_strings) {
  nlohmann::json list = nlohmann::json::array();
  for (float v : values) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", float_bits(v));
    if (as_strings) {
      list.push_back(text);
    } else {
      list.push_back(float_bits(v));
    }
  }
  return list;
}

TEST_F(CodeMapFile, JsonListOfBitPatternsIsTheMapBitForBit) {
  const CodeMap& fused = code_map(QuantFormat::dynamic8_signed_fused);
  for (bool as_strings : {false, true}) {
    const CodeMap map = read_code_map_file(write("my-qmap.json", bit_list(fused.values, as_strings).dump()));
    EXPECT_EQ(map.name, "my-qmap");
    EXPECT_EQ(map.bits, 8);
    ASSERT_EQ(map.values.size(), 256u);
    for (int i = 0; i < 256; ++i) EXPECT_EQ(float_bits(map.values[i]), float_bits(fused.values[i])) << i;
  }
  // Registered under its name, a map equal to a built-in one decides as that one does.
  const QuantFormat format = resolve_code_map(write("same-as-fused.json", bit_list(fused.values, false).dump()));
  EXPECT_EQ(std::string(quant_format_info(format).name), "same-as-fused");
  EXPECT_EQ(resolve_code_map("dynamic8-signed-fused"), QuantFormat::dynamic8_signed_fused);
}

TEST_F(CodeMapFile, JsonObjectNamesTheMap) {
  nlohmann::json document = {{"name", "nf4-from-json"}, {"bits", 4}, {"values", bit_list(code_map(QuantFormat::nf4).values, true)}};
  const CodeMap map = read_code_map_file(write("x.json", document.dump()));
  EXPECT_EQ(map.name, "nf4-from-json");
  EXPECT_EQ(map.bits, 4);
  document["bits"] = 8;
  EXPECT_NE(refusal(write("y.json", document.dump())).find("\"bits\" says 8"), std::string::npos);
  document.erase("bits");
  document["colour"] = "red";
  EXPECT_NE(refusal(write("z.json", document.dump())).find("unknown key 'colour'"), std::string::npos);
}

TEST_F(CodeMapFile, BadJsonFilesAreRefusedWithTheFix) {
  EXPECT_NE(refusal(write("short.json", "[1, 2, 3]")).find("holds 3 values"), std::string::npos);
  EXPECT_NE(refusal(write("broken.json", "[1, 2")).find("not valid JSON"), std::string::npos);
  nlohmann::json list = bit_list(code_map(QuantFormat::nf4).values, false);
  list[5] = -1;
  EXPECT_NE(refusal(write("negative.json", list.dump())).find("value 5"), std::string::npos);
  list[5] = "0x3f80";
  EXPECT_NE(refusal(write("shorthex.json", list.dump())).find("\"0x3f800000\""), std::string::npos);
  EXPECT_NE(refusal((folder_ / "absent.json").string()).find("no code map file"), std::string::npos);
  EXPECT_NE(refusal(write("map.txt", "[]")).find("*.json or *.safetensors"), std::string::npos);
  try {
    resolve_code_map("no-such-map");
    ADD_FAILURE() << "an unknown name was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown map 'no-such-map'"), std::string::npos);
  }
  // A map the registry refuses (no +0 code) is refused as bad input, naming the file.
  std::vector<float> values = code_map(QuantFormat::nf4).values;
  values[7] = 0.01f;
  const std::string path = write("no-zero.json", bit_list(values, false).dump());
  try {
    resolve_code_map(path);
    ADD_FAILURE() << "a map without +0 was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("+0.0"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
}

#if BITPARITY_HAS_MPI
std::string state_file(const std::vector<std::pair<std::string, const std::vector<float>*>>& maps) {
  std::vector<distributed::SafetensorsTensor> tensors;
  for (const auto& [name, values] : maps) {
    tensors.push_back({name, "F32", {static_cast<std::int64_t>(values->size())},
                       {reinterpret_cast<const std::uint8_t*>(values->data()), values->size() * 4}});
  }
  static const std::vector<float> step = {1.0f};
  tensors.push_back({"step", "F32", {1}, {reinterpret_cast<const std::uint8_t*>(step.data()), 4}});
  return distributed::serialize_safetensors(tensors, {});
}

TEST_F(CodeMapFile, SafetensorsTensorsAreReadByName) {
  const auto& signed_map = code_map(QuantFormat::dynamic8_signed_fused).values;
  const auto& unsigned_map = code_map(QuantFormat::dynamic8_unsigned_fused).values;
  const std::string path = write("state.safetensors", state_file({{"qmap1", &signed_map}, {"qmap2", &unsigned_map}}));
  const CodeMap qmap2 = read_code_map_file(path + ":qmap2");
  EXPECT_EQ(qmap2.name, "state.qmap2");
  for (int i = 0; i < 256; ++i) EXPECT_EQ(float_bits(qmap2.values[i]), float_bits(unsigned_map[i])) << i;
  EXPECT_NE(refusal(path).find("name one as"), std::string::npos) << "two candidates, no tensor named";
  EXPECT_NE(refusal(path + ":step").find("holds 1 values"), std::string::npos);
  EXPECT_NE(refusal(path + ":qmap3").find("no tensor 'qmap3'"), std::string::npos);
  const std::string single = write("one.safetensors", state_file({{"qmap1", &signed_map}}));
  EXPECT_EQ(read_code_map_file(single).name, "one.qmap1");
  EXPECT_NE(refusal(write("garbage.safetensors", "not a safetensors file")).find("garbage.safetensors"), std::string::npos);
}

// A file that stores its tensors' CRC-32s (a bitparity checkpoint) has its map checked against
// them: one flipped bit of a map ran as a map of its own.
TEST_F(CodeMapFile, AMapThatDoesNotMatchItsStoredChecksumIsRefused) {
  const auto& signed_map = code_map(QuantFormat::dynamic8_signed_fused).values;
  const std::span<const std::uint8_t> bytes{reinterpret_cast<const std::uint8_t*>(signed_map.data()), signed_map.size() * 4};
  const std::string crc = "{\"qmap1\": \"" + distributed::tensor_crc32_hex(bytes) + "\"}";
  const std::string good = write("good.safetensors", distributed::serialize_safetensors({{"qmap1", "F32", {256}, bytes}}, {{"crc32", crc}}));
  EXPECT_EQ(read_code_map_file(good).values.size(), 256u);
  std::vector<float> flipped = signed_map;
  flipped[200] = float_from_bits(float_bits(flipped[200]) ^ 1u);
  const std::span<const std::uint8_t> flipped_bytes{reinterpret_cast<const std::uint8_t*>(flipped.data()), flipped.size() * 4};
  const std::string bad = write("bad.safetensors", distributed::serialize_safetensors({{"qmap1", "F32", {256}, flipped_bytes}}, {{"crc32", crc}}));
  EXPECT_NE(refusal(bad).find("bad.safetensors:qmap1 does not match its stored CRC-32"), std::string::npos) << refusal(bad);
}

// A bitsandbytes-style 8-bit state as the reference safetensors implementation wrote it
// (fixtures/interchange/safetensors): its qmap1/qmap2 are bitsandbytes' x86 maps, bit for bit.
TEST_F(CodeMapFile, MapsOfAStateTheReferenceWroteAreReadBitForBit) {
  const std::string path = std::string(BITPARITY_INTERCHANGE_DIR) + "/written_by_reference/bnb_state.safetensors";
  for (const auto& [tensor, format] : {std::pair{"qmap1", QuantFormat::dynamic8_signed_fused},
                                       std::pair{"qmap2", QuantFormat::dynamic8_unsigned_fused}}) {
    const CodeMap map = read_code_map_file(path + ":" + tensor);
    EXPECT_EQ(find_code_map(8, map.values), format) << tensor;
  }
  EXPECT_NE(refusal(path).find("name one as"), std::string::npos) << "qmap1 and qmap2 are both candidates";
}
#endif

}  // namespace
}  // namespace bitparity::reports
