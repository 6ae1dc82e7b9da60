// The safetensors reader refuses every malformed file it is shown, and checkpoints load back
// exactly, refuse what does not fit without changing the optimizer, and survive a killed save.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/rank_parity.hpp"
#include "bitparity/distributed/safetensors.hpp"
#include "bitparity/distributed/solo_communicator.hpp"
#include "bitparity/fixtures/host_tensor.hpp"
#include "device_placement_support.hpp"
#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

// A file from a header text (padded to 8 bytes as the reference writer does) and data bytes.
Bytes file_of(std::string header, const Bytes& data = {}) {
  header.append((8 - header.size() % 8) % 8, ' ');
  Bytes out;
  out.reserve(8 + header.size() + data.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>((header.size() >> (8 * i)) & 0xFF));
  for (const char c : header) out.push_back(static_cast<std::uint8_t>(c));
  for (const std::uint8_t b : data) out.push_back(b);
  return out;
}


void expect_refused(const Bytes& contents, const std::string& phrase) {
  try {
    (void)parse_safetensors(contents, "test.safetensors");
    ADD_FAILURE() << "accepted a file that should be refused for: " << phrase;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test.safetensors"), std::string::npos) << e.what();
  }
}

const std::string kOneTensor = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

TEST(Safetensors, ReadsAFileLaidOutAsTheReferenceWriterDoes) {
  const Bytes data{0, 0, 128, 63, 0, 0, 0, 64};  // 1.0f, 2.0f little-endian
  const SafetensorsFile file = parse_safetensors(
      file_of(R"({"__metadata__":{"format":"pt"},"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data), "fixture");
  EXPECT_EQ(file.metadata.at("format"), "pt");
  EXPECT_EQ(file.entry("t").shape, std::vector<std::int64_t>{2});
  const auto bytes = file.bytes("t");
  EXPECT_EQ(Bytes(bytes.begin(), bytes.end()), data);
}

TEST(Safetensors, RoundTripsTensorsAndMetadata) {
  const Bytes a{1, 2, 3, 4, 5, 6}, b{9, 8, 7, 6, 5, 4, 3, 2};
  const std::string text = serialize_safetensors(
      {{"b", "BF16", {2, 2}, b}, {"a", "U8", {6}, a}, {"empty", "F32", {0, 3}, {}}}, {{"k", "v"}, {"step", "3"}});
  const SafetensorsFile file = parse_safetensors(Bytes(text.begin(), text.end()), "round trip");
  EXPECT_EQ(file.header_bytes % 8, 0u);  // padded as the reference writer pads it: the data starts aligned
  EXPECT_EQ(file.metadata, (std::map<std::string, std::string>{{"k", "v"}, {"step", "3"}}));
  EXPECT_EQ(Bytes(file.bytes("a").begin(), file.bytes("a").end()), a);
  EXPECT_EQ(Bytes(file.bytes("b").begin(), file.bytes("b").end()), b);
  EXPECT_EQ(file.entry("b").shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(file.entry("empty").numel(), 0);
  EXPECT_THROW(serialize_safetensors({{"x", "F32", {3}, a}}, {}), Error);           // bytes disagree with the shape
  EXPECT_THROW(serialize_safetensors({{"x", "F33", {1}, {}}}, {}), Error);          // unknown dtype
  EXPECT_THROW(serialize_safetensors({{"x", "U8", {1}, a}, {"x", "U8", {1}, a}}, {}), Error);  // repeated name
}

// A tensor read in pieces gives its bytes in order, held whole or read from the file, and the
// streamed checksums are those of the whole bytes (checkpoint inspect streams them).
TEST(Safetensors, PiecesAndStreamedChecksumsMatchTheWholeBytes) {
  Bytes big(1000), small{7, 7, 7};
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 37 + 11);
  const std::string text = serialize_safetensors({{"big", "U8", {1000}, big}, {"small", "U8", {3}, small}, {"none", "U8", {0}, {}}}, {});
  const std::string path = (std::filesystem::temp_directory_path() / ("pieces-" + std::to_string(::getpid()) + ".safetensors")).string();
  std::ofstream(path, std::ios::binary) << text;
  const SafetensorsFile whole = read_safetensors(path), header = read_safetensors_header(path);
  ASSERT_TRUE(header.contents.empty());
  for (const SafetensorsFile* file : {&whole, &header}) {
    Bytes joined;
    std::vector<std::size_t> sizes;
    read_safetensors_pieces(*file, "big", [&](std::span<const std::uint8_t> piece) {
      joined.insert(joined.end(), piece.begin(), piece.end());
      sizes.push_back(piece.size());
    }, 300);
    EXPECT_EQ(joined, big);
    EXPECT_EQ(sizes, (std::vector<std::size_t>{300, 300, 300, 100}));
    const std::map<std::string, std::string> crc = tensor_checksums(*file);
    EXPECT_EQ(crc.at("big"), tensor_crc32_hex(big));
    EXPECT_EQ(crc.at("small"), tensor_crc32_hex(small));
    EXPECT_EQ(crc.at("none"), "00000000");
  }
  std::filesystem::remove(path);
}

// Each malformed file is refused with a message that names it and says what is wrong.
TEST(Safetensors, RefusesMalformedFiles) {
  const Bytes eight(8, 0);
  expect_refused({}, "fewer than the 8-byte header length");                                   // 1 empty
  expect_refused(Bytes(7, 0), "fewer than the 8-byte header length");                          // 2 short
  Bytes past = file_of(kOneTensor, eight);
  past[0] = 0xF0;                                                                             // 3 length past the end
  expect_refused(past, "reaches past the end");
  Bytes huge = file_of(kOneTensor, eight);
  huge[4] = 0x01;                                                                             // 4 length over 100 MB
  expect_refused(huge, "over the 100 MB limit");
  expect_refused(file_of(R"( {"t":1})"), "does not start with '{'");                          // 5
  expect_refused(file_of(R"({"t":{"dtype":"F32",)"), "not valid JSON");                         // 6
  expect_refused(file_of(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"t":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})"),
                 "repeats the key \"t\"");                                                    // 7 duplicate tensor
  expect_refused(file_of(R"({"t":1})"), "is not an object");                                   // 8
  expect_refused(file_of(R"({"t":{"dtype":"F31","shape":[2],"data_offsets":[0,8]}})", eight), "unknown dtype");        // 9
  expect_refused(file_of(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight), "not a whole number");  // 10
  expect_refused(file_of(R"({"t":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", eight), "not a whole number"); // 11
  expect_refused(file_of(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}})", eight), "data_offsets");       // 12
  expect_refused(file_of(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", eight), "before it begins");     // 13
  expect_refused(file_of(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight), "shape and dtype need 12");  // 14
  expect_refused(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                         eight), "(overlap)");                                                // 15
  expect_refused(file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}})",
                         eight), "(a hole)");                                                 // 16
  expect_refused(file_of(kOneTensor, Bytes(5, 0)), "ends at byte 8 of the data, which has 5"); // 17 truncated data
  expect_refused(file_of(kOneTensor, Bytes(12, 0)), "cover 8 bytes of data, but the file holds 12");  // 18 trailing bytes
  expect_refused(file_of(R"({"__metadata__":{"step":3}})"), "is not a string");                // 19
  expect_refused(file_of(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}})", eight), "unknown field");  // 20
  expect_refused(file_of(R"({"t":{"dtype":"F32","shape":[[2]],"data_offsets":[0,8]}})", eight), "nests deeper");       // 21
  expect_refused(file_of(R"({"t":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", eight),
                 "more than 2^63");                                                           // 22 size overflow
  expect_refused(file_of(R"({"":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})"), "empty name");  // 23
  expect_refused(file_of("{\"t\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}\x01"), "not valid JSON");  // 24 junk after
  // nlohmann stops at a NUL byte: NUL padding (or a NUL that cuts the header short) parsed as JSON.
  expect_refused(file_of(std::string("{\"t\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}") + std::string(4, '\0')),
                 "holds a NUL byte at byte 61");                                                    // 25 NUL padding
}

// A small sharded optimizer on one rank, stepped twice.
struct Solo {
  explicit Solo(OptimizerKind kind = OptimizerKind::adam, bool eight_bit = true, std::uint64_t seed = 7, const StateMaps& maps = {})
      : config(prepared(draw_sharded_config(kind, eight_bit, DType::bf16, ShardLayout::zero12, seed, 1), maps)),
        implementation(fixtures::make_implementation("cpu")),
        optimizer(config, communicator, *implementation) {}
  static ShardedConfig prepared(ShardedConfig config, const StateMaps& maps) {
    config.regroup_step = 0;
    config.maps = maps;
    return config;
  }
  void steps(int count) {
    for (int i = 0; i < count; ++i) optimizer.step(optimizer.completed_steps() + 1);
  }
  ShardedConfig config;
  SoloCommunicator communicator;
  std::unique_ptr<fixtures::Implementation> implementation;
  ShardedOptimizer optimizer;
};

fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("bitparity_checkpoint_tests_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

Bytes read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The file rewritten with its tensors changed by `edit` and checksums that match again (the
// tensors' and, unless `stale_header`, the header's): only the checkpoint's own checks can refuse it.
std::vector<SafetensorsTensor> tensors_of(const SafetensorsFile& file) {
  std::vector<SafetensorsTensor> tensors;
  for (const auto& [name, entry] : file.tensors) tensors.push_back({name, entry.dtype, entry.shape, file.bytes(name)});
  return tensors;
}

void rewrite(const fs::path& path, const std::function<void(std::vector<SafetensorsTensor>&, std::map<std::string, std::string>&)>& edit,
             bool stale_header = false) {
  const SafetensorsFile file = read_safetensors(path.string());
  std::vector<SafetensorsTensor> tensors = tensors_of(file);
  std::map<std::string, std::string> metadata = file.metadata;
  edit(tensors, metadata);
  nlohmann::json crc = nlohmann::json::object();
  for (const auto& t : tensors) crc[t.name] = tensor_crc32_hex(t.bytes);
  metadata["crc32"] = crc.dump();
  if (!stale_header && metadata.count(kHeaderChecksumKey) != 0) {
    std::map<std::string, std::pair<std::string, std::vector<std::int64_t>>> table;
    for (const auto& t : tensors) table[t.name] = {t.dtype, t.shape};
    metadata[kHeaderChecksumKey] = header_checksum(metadata, table);
  }
  const std::string out = serialize_safetensors(tensors, metadata);
  write_file(path, Bytes(out.begin(), out.end()));
}

// The checkpoint's "code_maps" edited as JSON (checksums still match).
void edit_maps(const fs::path& path, const std::function<void(nlohmann::json&)>& edit) {
  rewrite(path, [&](auto&, auto& m) {
    nlohmann::json maps = nlohmann::json::parse(m["code_maps"]);
    edit(maps);
    m["code_maps"] = maps.dump();
  });
}

TEST(Checkpoint, LoadsBackExactlyIntoAFreshOptimizer) {
  for (const bool eight_bit : {false, true}) {
    Solo saved(OptimizerKind::adam, eight_bit);
    saved.steps(2);
    const fs::path folder = fresh_folder("round_trip");
    save_checkpoint(saved.optimizer, folder.string());
    for (const bool universal : {true, false}) {
      Solo loaded(OptimizerKind::adam, eight_bit);
      if (universal) {
        load_universal_checkpoint(loaded.optimizer, folder.string());
      } else {
        load_rank_checkpoint(loaded.optimizer, folder.string());
      }
      EXPECT_EQ(loaded.optimizer.completed_steps(), 2);
      const auto a = saved.optimizer.whole_parameters(), b = loaded.optimizer.whole_parameters();
      ASSERT_EQ(a.size(), b.size());
      for (const auto& [id, w] : a) {
        EXPECT_EQ(w.param, b.at(id).param) << id;
        EXPECT_EQ(w.states, b.at(id).states) << id;
        EXPECT_EQ(w.absmax, b.at(id).absmax) << id;
      }
    }
    fs::remove_all(folder);
  }
}

// 8-bit states written with other maps (bitsandbytes' on x86, a checkpoint's qmap1/qmap2) come back
// with those maps into an optimizer that starts with its own, as bitsandbytes restores qmap1/qmap2:
// the next steps are bitwise those of the optimizer that saved.
TEST(Checkpoint, StatesComeBackWithTheMapsTheyWereWrittenWith) {
  const StateMaps fused{QuantFormat::dynamic8_signed_fused, QuantFormat::dynamic8_unsigned_fused};
  for (const bool universal : {true, false}) {
    Solo saved(OptimizerKind::adam, true, 7, fused);
    saved.steps(2);
    const fs::path folder = fresh_folder("maps");
    save_checkpoint(saved.optimizer, folder.string());
    Solo loaded;  // the optimizer's own maps
    if (universal) {
      load_universal_checkpoint(loaded.optimizer, folder.string());
    } else {
      load_rank_checkpoint(loaded.optimizer, folder.string());
    }
    EXPECT_EQ(loaded.optimizer.config().maps, fused);
    // One parameter's state alone (load_parameter_state) comes with the maps too.
    const GroupConfig& group = saved.config.groups.front();
    fixtures::HostTensor param = fixtures::HostTensor::buffer(group.param_dtype, group.parameters.front().numel);
    const ParameterState one = load_parameter_state(universal_checkpoint_path(folder.string()), group.parameters.front().id, param.view());
    const auto quantized = one.state->quantized_states();
    ASSERT_EQ(quantized.size(), 2u);
    EXPECT_EQ(quantized[0].map, QuantFormat::dynamic8_signed_fused);
    EXPECT_EQ(quantized[1].map, QuantFormat::dynamic8_unsigned_fused);
    saved.steps(2);
    loaded.steps(2);
    const auto a = saved.optimizer.whole_parameters(), b = loaded.optimizer.whole_parameters();
    for (const auto& [id, w] : a) {
      EXPECT_EQ(w.param, b.at(id).param) << id;
      EXPECT_EQ(w.states, b.at(id).states) << id;
      EXPECT_EQ(w.absmax, b.at(id).absmax) << id;
    }
    // With the optimizer's own maps back in the header, the states decode with those again.
    edit_maps(universal_checkpoint_path(folder.string()), [](auto& maps) {
      maps["exp_avg"] = code_map(QuantFormat::dynamic8_signed).values;
      maps["exp_avg_sq"] = code_map(QuantFormat::dynamic8_unsigned).values;
    });
    Solo plain(OptimizerKind::adam, true, 7, fused);
    load_universal_checkpoint(plain.optimizer, folder.string());
    EXPECT_EQ(plain.optimizer.config().maps, StateMaps{});
    fs::remove_all(folder);
  }
}

// A map no registered map equals is registered once, under a name derived from its values.
TEST(Checkpoint, AMapOfItsOwnIsRegisteredFromItsValues) {
  Solo saved;
  saved.steps(1);
  const fs::path folder = fresh_folder("own_map");
  save_checkpoint(saved.optimizer, folder.string());
  std::vector<float> values = code_map(QuantFormat::dynamic8_signed).values;
  values[200] = std::nextafter(values[200], 0.0f);  // one ulp: a map of its own, still a valid one
  edit_maps(universal_checkpoint_path(folder.string()), [&](auto& maps) { maps["exp_avg"] = values; });
  std::optional<QuantFormat> first;
  for (int load = 0; load < 2; ++load) {
    Solo loaded;
    load_universal_checkpoint(loaded.optimizer, folder.string());
    const std::optional<QuantFormat> map = loaded.optimizer.config().maps.signed_states;
    ASSERT_TRUE(map.has_value());
    EXPECT_EQ(std::string(quant_format_info(*map).name).rfind("checkpoint-map-", 0), 0u) << quant_format_info(*map).name;
    EXPECT_EQ(code_map(*map).values, values);
    EXPECT_FALSE(loaded.optimizer.config().maps.nonnegative_states.has_value());
    if (first) {
      EXPECT_EQ(*first, *map);  // loaded again: the same registered map
    }
    first = map;
  }
  fs::remove_all(folder);
}

// Each corruption of a good checkpoint is refused with its reason, and the optimizer that tried to
// load it is left exactly as it was.
TEST(Checkpoint, RefusesCorruptOrForeignCheckpointsAndChangesNothing) {
  Solo saved;
  saved.steps(2);
  const fs::path folder = fresh_folder("corrupt");
  save_checkpoint(saved.optimizer, folder.string());
  const fs::path universal = universal_checkpoint_path(folder.string());
  const Bytes good = read_file(universal);
  const auto first_tensor = [](std::vector<SafetensorsTensor>& t) -> SafetensorsTensor& { return t.front(); };
  struct Corruption {
    const char* what;
    std::function<void()> apply;
    const char* phrase;
  };
  const std::vector<Corruption> corruptions = {
      {"bit flip in the data", [&] { Bytes b = good; b[b.size() - 3] ^= 0x10; write_file(universal, b); }, "does not match its CRC-32"},
      {"truncated to half", [&] { Bytes b = good; b.resize(b.size() / 2); write_file(universal, b); }, "truncated"},
      {"header length lies", [&] { Bytes b = good; b[0] = static_cast<std::uint8_t>(b[0] + 8); write_file(universal, b); }, "not a valid safetensors"},
      {"missing tensor", [&] { rewrite(universal, [](auto& t, auto&) { t.pop_back(); }); }, "holds no tensor"},
      {"extra tensor", [&] {
         static const Bytes four(4, 0);
         rewrite(universal, [](auto& t, auto&) { t.push_back({"zz/extra", "F32", {1}, four}); });
       }, "has no place for"},
      {"wrong shape", [&] {
         rewrite(universal, [&](auto& t, auto&) { auto& x = first_tensor(t); x.shape = {1, x.shape[0]}; });
       }, "expected F32"},
      {"wrong optimizer", [&] { rewrite(universal, [](auto&, auto& m) { m["optimizer"] = "lion"; }); }, "holds lion states"},
      {"32-bit states", [&] { rewrite(universal, [](auto&, auto& m) { m["states"] = "32-bit"; }); }, "holds 32-bit states"},
      {"other block size", [&] { rewrite(universal, [](auto&, auto& m) { m["blocksize"] = "4096"; }); }, "block size 4096"},
      {"code map value not an fp32", [&] { edit_maps(universal, [](auto& maps) { maps["exp_avg"][5] = 0.1; }); }, "not an fp32 value"},
      {"code map value null (NaN)", [&] { edit_maps(universal, [](auto& maps) { maps["exp_avg"][7] = nullptr; }); }, "not an fp32 value"},
      {"code map of 255 values", [&] { edit_maps(universal, [](auto& maps) { maps["exp_avg_sq"].erase(0); }); }, "has 255 values"},
      {"code map missing", [&] { edit_maps(universal, [](auto& maps) { maps.erase("exp_avg_sq"); }); }, "has no map for state"},
      {"code map of a state adam lacks", [&] { edit_maps(universal, [](auto& maps) { maps["momentum"] = maps["exp_avg"]; }); },
       "does not have"},
      {"unsigned map for a signed state", [&] { edit_maps(universal, [](auto& maps) { maps["exp_avg"] = maps["exp_avg_sq"]; }); },
       "cannot be used"},
      {"code map not an object", [&] { rewrite(universal, [](auto&, auto& m) { m["code_maps"] = "[1, 2]"; }); }, "is not an object"},
      {"step not a number", [&] { rewrite(universal, [](auto&, auto& m) { m["step"] = "two"; }); }, "not a whole number"},
      {"no format", [&] { rewrite(universal, [](auto&, auto& m) { m.erase("format"); }); }, "not a bitparity checkpoint"},
      {"other group parameters", [&] {
         rewrite(universal, [](auto&, auto& m) {
           auto groups = nlohmann::json::parse(m["groups"]);
           groups[0]["parameters"][0]["numel"] = 12345;
           m["groups"] = groups.dump();
         });
       }, "holds other parameters"},
      {"invalid hyperparameter", [&] {
         rewrite(universal, [](auto&, auto& m) {
           auto groups = nlohmann::json::parse(m["groups"]);
           groups[0]["hyperparameters"]["lr"] = -1.0;
           m["groups"] = groups.dump();
         });
       }, "lr"},
      {"checksums missing", [&] {
         const SafetensorsFile f = parse_safetensors(good, "x");
         auto m = f.metadata;
         m.erase("crc32");
         m[kHeaderChecksumKey] = header_checksum(m, [&] {
           std::map<std::string, std::pair<std::string, std::vector<std::int64_t>>> table;
           for (const auto& [name, entry] : f.tensors) table[name] = {entry.dtype, entry.shape};
           return table;
         }());
         const std::string out = serialize_safetensors(tensors_of(f), m);
         write_file(universal, Bytes(out.begin(), out.end()));
       }, "its header has no \"crc32\""},
      // The header's own checksum: a step edited from 2 to 7 (one flipped bit makes 3) was read by
      // the resume; each header check above passes only because its rewrite made the checksum anew.
      {"step edited, header checksum stale", [&] { rewrite(universal, [](auto&, auto& m) { m["step"] = "7"; }, true); },
       "its header does not match its \"header_crc32\""},
      {"group hyperparameters edited, header checksum stale", [&] {
         rewrite(universal, [](auto&, auto& m) {
           auto groups = nlohmann::json::parse(m["groups"]);
           groups[0]["hyperparameters"]["lr"] = 0.5;
           m["groups"] = groups.dump();
         }, true);
       }, "the header was edited or corrupted"},
      {"tensor shape edited, header checksum stale", [&] {
         rewrite(universal, [&](auto& t, auto&) { auto& x = first_tensor(t); x.shape = {1, x.shape[0]}; }, true);
       }, "its header does not match"},
      {"header checksum removed", [&] { rewrite(universal, [](auto&, auto& m) { m.erase(kHeaderChecksumKey); }, true); },
       "its header has no \"header_crc32\""},
      {"a universal file given as a rank shard", [&] {
         fs::copy_file(universal, rank_checkpoint_path(folder.string(), 0, 1), fs::copy_options::overwrite_existing);
       }, "not a rank-shard one"},
  };
  int refused = 0;
  for (const Corruption& corruption : corruptions) {
    write_file(universal, good);
    save_checkpoint(saved.optimizer, folder.string());  // a good rank shard again
    corruption.apply();
    Solo target;  // one step behind the checkpoint: a partial load would show
    target.steps(1);
    const auto before = target.optimizer.whole_parameters();
    const bool rank_shard = std::string(corruption.what).find("rank shard") != std::string::npos;
    try {
      if (rank_shard) {
        load_rank_checkpoint(target.optimizer, folder.string());
      } else {
        load_universal_checkpoint(target.optimizer, folder.string());
      }
      ADD_FAILURE() << "loaded a checkpoint with: " << corruption.what;
    } catch (const Error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find(corruption.phrase), std::string::npos) << corruption.what << ": " << e.what();
    }
    EXPECT_EQ(target.optimizer.completed_steps(), 1) << corruption.what;
    const auto after = target.optimizer.whole_parameters();
    for (const auto& [id, w] : before) {
      EXPECT_EQ(w.param, after.at(id).param) << corruption.what;
      EXPECT_EQ(w.states, after.at(id).states) << corruption.what;
    }
  }
  EXPECT_EQ(refused, static_cast<int>(corruptions.size()));
  // A rank shard of another world size points to the universal form.
  write_file(universal, good);
  save_checkpoint(saved.optimizer, folder.string());
  // insert_or_assign, not = "4": GCC 12 warns falsely (-Wrestrict) on that assignment here.
  rewrite(rank_checkpoint_path(folder.string(), 0, 1), [](auto&, auto& m) { m.insert_or_assign("world_size", std::string("4")); });
  Solo target;
  try {
    load_rank_checkpoint(target.optimizer, folder.string());
    ADD_FAILURE() << "loaded a shard of another world size";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("load the universal checkpoint"), std::string::npos) << e.what();
  }
  fs::remove_all(folder);
}

// A save killed half-way leaves the previous checkpoint whole and loadable.
TEST(Checkpoint, AKilledSaveLeavesThePreviousCheckpointIntact) {
  Solo solo;
  solo.steps(2);
  const fs::path folder = fresh_folder("killed");
  save_checkpoint(solo.optimizer, folder.string());
  const fs::path shard = rank_checkpoint_path(folder.string(), 0, 1);
  const Bytes previous = read_file(shard);
  solo.steps(1);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv("BITPARITY_TEST_PAUSE_MID_WRITE", "60", 1);
    save_checkpoint(solo.optimizer, folder.string());
    std::_Exit(0);
  }
  // Kill it once half of the new shard is on disk.
  bool half_written = false;
  for (int i = 0; i < 400 && !half_written; ++i) {
    for (const auto& entry : fs::directory_iterator(folder)) {
      if (entry.path().filename().string().rfind(".rank-", 0) == 0 && entry.file_size() > 0) half_written = true;
    }
    if (!half_written) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(half_written) << "the save never started writing";
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(read_file(shard), previous);
  Solo loaded;
  load_rank_checkpoint(loaded.optimizer, folder.string());
  EXPECT_EQ(loaded.optimizer.completed_steps(), 2);
  fs::remove_all(folder);
}

// torch's load_state_dict places each state on its parameter's device: on a CPU parameter the
// loaded state is on the CPU and holds exactly the checkpoint's bytes.
TEST(DevicePlacement, LoadedStateFollowsACpuParameterWithTheCheckpointsBytes) {
  for (const bool eight_bit : {false, true}) {
    const fs::path folder = fresh_folder("placement");
    const testing::SavedParameter saved = testing::save_one_parameter(OptimizerKind::adam, eight_bit, folder.string());
    fixtures::HostTensor param = fixtures::HostTensor::buffer(saved.dtype, saved.numel);
    std::memcpy(param.view().data, saved.param.data(), saved.param.size());
    const ParameterState loaded = load_parameter_state(saved.path, saved.id, param.view());
    EXPECT_EQ(loaded.state->device(), Device::cpu());
    EXPECT_EQ(loaded.hyper.step, 2);
    const SafetensorsFile file = read_safetensors(saved.path);
    const std::string id = std::to_string(saved.id);
    const std::vector<std::string> names =
        eight_bit ? std::vector<std::string>{"exp_avg.codes/" + id, "exp_avg.absmax/" + id, "exp_avg_sq.codes/" + id, "exp_avg_sq.absmax/" + id}
                  : std::vector<std::string>{"exp_avg/" + id, "exp_avg_sq/" + id};
    ASSERT_EQ(loaded.state->buffer_count(), names.size());
    for (std::size_t b = 0; b < names.size(); ++b) {
      const auto bytes = file.bytes(names[b]);
      EXPECT_EQ(loaded.state->read_buffer(b), Bytes(bytes.begin(), bytes.end())) << names[b];
    }
    // Another parameter's size is refused.
    fixtures::HostTensor other = fixtures::HostTensor::buffer(saved.dtype, saved.numel + 1);
    EXPECT_THROW(load_parameter_state(saved.path, saved.id, other.view()), Error);
    fs::remove_all(folder);
  }
}

// The kernels refuse a step whose state is on another device than its parameter, naming the state
// and both devices, before anything runs (the parameter's views here only claim to be on cuda:0).
TEST(DevicePlacement, AStepWithStateAndParameterOnDifferentDevicesIsRefused) {
  std::vector<float> param(64, 0.5f), grad(64, 0.25f), m(64, 0.0f), v(64, 0.0f);
  const TensorView p = contiguous_view(param.data(), DType::f32, Device::cuda(0), {64});
  const TensorView g = contiguous_view(grad.data(), DType::f32, Device::cuda(0), {64});
  const std::vector<TensorView> states = {contiguous_view(m.data(), DType::f32, Device::cpu(), {64}),
                                          contiguous_view(v.data(), DType::f32, Device::cpu(), {64})};
  try {
    (void)optimizer_step(OptimizerKind::adam, typical_hyperparameters(OptimizerKind::adam), p, g, states);
    FAIL() << "a step with the state on the CPU and the parameter on cuda:0 was computed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::device_mismatch);
    const std::string text = e.what();
    for (const char* word : {"exp_avg", "cpu", "cuda:0"}) EXPECT_NE(text.find(word), std::string::npos) << text;
  }
  EXPECT_EQ(param[0], 0.5f);
}

// The same through an owned state, as a resume leaves it: found on the H100, where OptimizerState
// refused it first as invalid_argument without naming the state. Both paths, 32-bit and 8-bit.
TEST(DevicePlacement, AnOwnedStateOnTheCpuRefusesAParameterOnCudaNamingTheState) {
  for (const bool eight_bit : {false, true}) {
    StateOptions options;
    options.eight_bit = eight_bit;
    options.min_8bit_size = 0;
    OptimizerState state(OptimizerKind::adam, 256, Device::cpu(), options);
    std::vector<float> param(256, 0.5f), grad(256, 0.25f);
    const TensorView p = contiguous_view(param.data(), DType::f32, Device::cuda(0), {256});
    const TensorView g = contiguous_view(grad.data(), DType::f32, Device::cuda(0), {256});
    Hyperparameters hyper = typical_hyperparameters(OptimizerKind::adam);
    try {
      (void)state.step(hyper, p, g);
      ADD_FAILURE() << "a step with the state on the CPU and the parameter on cuda:0 was computed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::device_mismatch) << e.what();
      const std::string text = e.what();
      for (const char* word : {"exp_avg", "cpu", "cuda:0"}) EXPECT_NE(text.find(word), std::string::npos) << text;
    }
    EXPECT_EQ(param[0], 0.5f);
  }
}

TEST(Checkpoint, NamesFaults) {
  for (CheckpointFault fault : kCheckpointFaults) {
    EXPECT_EQ(parse_checkpoint_fault(checkpoint_fault_name(fault)), fault);
    EXPECT_TRUE(is_checkpoint_fault_name(checkpoint_fault_name(fault)));
  }
  EXPECT_EQ(parse_checkpoint_fault(checkpoint_fault_name(kDevicePlacementFault)), kDevicePlacementFault);
  EXPECT_THROW(parse_checkpoint_fault("checkpoint-nope"), Error);
}

}  // namespace
}  // namespace bitparity::distributed
