// Saved cases replay without the generators: every property records the inputs it draws, a kill
// of every catalogued mutant replays from its file (failing on the mutant, holding on cpu), and
// malformed files are refused with a message that names the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/mutant_hunt.hpp"
#include "bitparity/properties/saved_case.hpp"

namespace bitparity::fixtures {
inline void PrintTo(const MutantInfo& mutant, std::ostream* os) { *os << mutant.name; }
}  // namespace bitparity::fixtures

namespace bitparity::properties {
namespace {

// A saved case after a trip through its file's text.
SavedCase through_text(const SavedCase& saved) { return parse_saved_case(nlohmann::json::parse(saved_case_json(saved).dump(1))); }

// The sixth case the property draws on `spec` (RapidCheck's first cases are the smallest), recorded:
// a wrapper fails it on purpose so that run_property keeps its inputs.
SavedCase record_first_case(const PropertyDef& property, const TargetSpec& spec, std::int64_t blocksize,
                            fixtures::Implementation& cpu, std::uint64_t seed) {
  PropertyDef recording = property;
  auto cases = std::make_shared<int>(0);
  recording.body = [&property, cases](const PropertyTarget& t, PropertyStats& stats) {
    property.body(t, stats);
    if (++*cases == 6) report_violation(stats, 1, "recorded on purpose");
  };
  RunOptions options;
  options.seed = seed;
  options.max_cases = 10;
  options.record_failing_case = true;
  options.shrink = false;  // the case as drawn, not its smallest failing form (which would be empty)
  const RunResult result = run_property(recording, make_target(property, spec, &cpu, &cpu, blocksize), options);
  EXPECT_FALSE(result.passed);
  EXPECT_TRUE(result.failing_case.has_value()) << property.id << " on " << spec.label() << ": " << result.counterexample;
  SavedCase saved;
  saved.property = property.id;
  saved.implementation = "cpu";
  saved.entry = spec.entry();
  saved.dtype = spec.dtype;
  saved.blocksize = blocksize;
  saved.violation = result.counterexample;
  if (result.failing_case) saved.recorded = *result.failing_case;
  return saved;
}

TEST(SavedCase, EveryRandomPropertyReplaysTheInputsItRecorded) {
  const auto cpu = fixtures::make_implementation("cpu");
  std::int64_t elements = 0;
  for (const auto& property : property_catalogue()) {
    if (property.exhaustive) continue;
    const auto targets = suite_targets(property.suite);
    for (std::size_t k : {std::size_t{0}, targets.size() - 1}) {
      const TargetSpec& spec = targets[k];
      const std::int64_t blocksize = spec.block_sizes().front();
      const SavedCase saved = through_text(record_first_case(property, spec, blocksize, *cpu, 41 + k));
      EXPECT_FALSE(saved.recorded.inputs.empty()) << property.id << " recorded no input";
      const ReplayOutcome outcome = replay_saved_case(saved, *cpu, *cpu);
      EXPECT_TRUE(outcome.passed) << property.id << " on " << spec.label() << ": " << outcome.violation;
      EXPECT_TRUE(outcome.unread_inputs.empty()) << property.id << " left inputs unread";
      elements += outcome.stats.elements;
    }
  }
  EXPECT_GT(elements, 1000) << "the replayed cases were (nearly) empty";
}

// An input a property began to draw after cases were saved: files without it replay with what the
// property did before, and say so; files with it read it back.
TEST(SavedCase, AnInputAddedLaterReadsItsAbsentValueFromOlderFiles) {
  const auto never_drawn = [] {
    ADD_FAILURE() << "a replay drew an input";
    return true;
  };
  PropertyStats stats;
  CaseTape older = CaseTape::replaying({{"case", 1}}, nlohmann::json::object());
  EXPECT_FALSE(older.take_or_absent<bool>("contiguous", stats, false, "strided tensors", never_drawn));
  EXPECT_NE(stats.context.find("strided tensors (the case file predates input 'contiguous')"), std::string::npos)
      << stats.context;
  CaseTape newer = CaseTape::replaying({{"contiguous", true}}, nlohmann::json::object());
  EXPECT_TRUE(newer.take_or_absent<bool>("contiguous", stats, false, "strided tensors", never_drawn));
  EXPECT_TRUE(newer.unread_inputs().empty());
  CaseTape second_use = CaseTape::replaying({{"contiguous", false}}, nlohmann::json::object());
  EXPECT_FALSE(second_use.take_or_absent<bool>("contiguous", stats, true, "contiguous tensors", never_drawn));
  EXPECT_TRUE(second_use.take_or_absent<bool>("contiguous", stats, true, "contiguous tensors", never_drawn))
      << "the second use of a name is 'contiguous#2', which the file lacks";
}

class MutantKill : public ::testing::TestWithParam<fixtures::MutantInfo> {};

// The shrunk kill of each mutant, saved and read back, fails on the mutant and holds on cpu: the
// file holds everything the failure needs.
SavedCase saved_kill(const fixtures::MutantInfo& mutant, const HuntResult& hunt) {
  SavedCase saved;
  saved.property = hunt.property_id;
  saved.implementation = "mutant:" + mutant.name;
  saved.entry = hunt.spec.entry();
  saved.dtype = hunt.spec.dtype;
  saved.blocksize = hunt.blocksize;
  saved.violation = hunt.counterexample;
  saved.recorded = *hunt.failing_case;
  return through_text(saved);
}

TEST_P(MutantKill, ReplaysFromItsSavedCase) {
  const fixtures::MutantInfo& mutant = GetParam();
  // 120 s: the hunt ends at the kill (under a second alone); a loaded CI runner stretched one past 30 s.
  const HuntResult hunt = hunt_mutant(mutant, 120.0, 11);
  ASSERT_TRUE(hunt.killed) << mutant.name << " survived";
  ASSERT_TRUE(hunt.failing_case.has_value()) << mutant.name << " was killed by " << hunt.property << " without a recorded case";
  SavedCase parsed = saved_kill(mutant, hunt);
  const auto broken = fixtures::make_implementation(fixtures::ImplementationId{fixtures::ImplementationKind::mutant, 0, mutant.name});
  const auto cpu = fixtures::make_implementation("cpu");
  ReplayOutcome on_mutant = replay_saved_case(parsed, *broken, *cpu);
  // A mutant with hidden state between calls (a step counter) fails only after earlier calls: the
  // same case a second time on the same instance must then fail.
  if (on_mutant.passed) on_mutant = replay_saved_case(parsed, *broken, *cpu);
  if (on_mutant.passed) {
    // State kept from the first call on (captured hyperparameters) shows only after other calls:
    // the kill of its own property, whose case holds the calls before, must replay on a fresh instance.
    const HuntResult own = hunt_mutant(mutant, 120.0, 11, mutant.killer);
    ASSERT_TRUE(own.killed && own.failing_case.has_value()) << mutant.name << " survived " << mutant.killer;
    parsed = saved_kill(mutant, own);
    const auto fresh = fixtures::make_implementation(fixtures::ImplementationId{fixtures::ImplementationKind::mutant, 0, mutant.name});
    on_mutant = replay_saved_case(parsed, *fresh, *cpu);
  }
  EXPECT_FALSE(on_mutant.passed) << mutant.name << ": the saved case of " << parsed.property << " holds on replay; found as:\n"
                                 << parsed.violation;
  const ReplayOutcome on_cpu = replay_saved_case(parsed, *cpu, *cpu);
  EXPECT_TRUE(on_cpu.passed) << mutant.name << ": the saved case fails on cpu: " << on_cpu.violation;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, MutantKill, ::testing::ValuesIn(fixtures::mutant_catalogue()), [](const auto& info) {
  std::string name = info.param.name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
});

class CaseFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu_ = fixtures::make_implementation("cpu");
    const PropertyDef& p7 = *std::find_if(property_catalogue().begin(), property_catalogue().end(),
                                          [](const PropertyDef& p) { return p.id == "P7"; });
    valid_ = saved_case_json(record_first_case(p7, suite_targets(fixtures::Suite::quant).front(), 64, *cpu_, 3));
    valid_.erase("fingerprint");  // the edits below would otherwise all be refused as edits
  }
  std::string refusal(const nlohmann::json& file) {
    try {
      const SavedCase saved = parse_saved_case(file);
      replay_saved_case(saved, *cpu_, *cpu_);
    } catch (const CaseFileError& error) {
      return error.what();
    }
    return "";
  }
  std::unique_ptr<fixtures::Implementation> cpu_;
  nlohmann::json valid_;
};

TEST_F(CaseFiles, ValidFileReplays) { EXPECT_EQ(refusal(valid_), ""); }

TEST_F(CaseFiles, RefusesWhatIsWrongAndSaysWhat) {
  const auto edited = [&](auto edit) {
    nlohmann::json file = valid_;
    edit(file);
    return refusal(file);
  };
  EXPECT_NE(edited([](auto& f) { f["schema"] = "bitparity.case/9"; }).find("schema 'bitparity.case/9'"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["property"] = "P99"; }).find("no property 'P99'"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["implementation"] = "tpu:0"; }).find("'implementation'"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["entry"] = "nf5"; }).find("has no target 'nf5/"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["blocksize"] = 100; }).find("'blocksize' 100 is not one of"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["inputs"].erase("values"); }).find("no input 'values'"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["inputs"]["values"]["values"][0] = "0x1p+0 0x3f800001"; })
                .find("the hexfloat is not the value of the bits"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["inputs"]["values"]["values"][0] = "1.0"; }).find("not \"hexfloat bits\""), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["inputs"]["shape"] = {1 << 20, 1 << 20}; }).find("more than 2^24 elements"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["inputs"]["out_dtype"] = "f64"; }).find("input 'out_dtype'"), std::string::npos);
  EXPECT_NE(edited([](auto& f) { f["input"] = f["inputs"]; }).find("a case file has no field 'input'; its fields are schema,"),
            std::string::npos);
  // Storage dtypes are no output of dequantize: refused, not replayed into a "violation" (or a kill).
  for (const char* storage : {"u8", "packed4"}) {
    EXPECT_NE(edited([&](auto& f) { f["inputs"]["out_dtype"] = storage; }).find("is not a float dtype; use f32, f16 or bf16"), std::string::npos)
        << storage;
  }
  nlohmann::json fingerprinted = saved_case_json(parse_saved_case(valid_));
  fingerprinted["violation"] = "edited message";  // not part of the identity: accepted
  EXPECT_EQ(refusal(fingerprinted), "");
  fingerprinted["inputs"]["out_dtype"] = fingerprinted["inputs"]["out_dtype"] == "f32" ? "f16" : "f32";
  EXPECT_NE(refusal(fingerprinted).find("the file was edited"), std::string::npos);
}

// Random edits anywhere in a case file: each is refused with CaseFileError or replays (holding or
// failing); nothing else escapes, and nothing crashes (the ASan subset runs this too).
TEST_F(CaseFiles, RandomEditsAreRefusedOrReplayed) {
  std::vector<nlohmann::json> files = {valid_};
  for (const char* id : {"P2", "P1", "P2q", "P8"}) {
    const PropertyDef& property = *std::find_if(property_catalogue().begin(), property_catalogue().end(),
                                                [&](const PropertyDef& p) { return p.id == id; });
    const TargetSpec spec = suite_targets(property.suite).front();
    nlohmann::json file = saved_case_json(record_first_case(property, spec, spec.block_sizes().front(), *cpu_, 5));
    file.erase("fingerprint");
    files.push_back(file);
  }
  const std::vector<nlohmann::json> replacements = {nullptr, -1, 0, 255, std::int64_t{1} << 40, 1e300, "x", "0x1p+0 0x3f800000",
                                                    "nan 0x7fc00000", nlohmann::json::array(), nlohmann::json::object(), true};
  std::mt19937_64 rng(20261123);
  int refused = 0, replayed = 0;
  for (int trial = 0; trial < 400; ++trial) {
    nlohmann::json file = files[rng() % files.size()];
    // A random path down to a leaf of the inputs (or of the top level, one time in four).
    nlohmann::json* node = rng() % 4 == 0 ? &file : &file["inputs"];
    while ((node->is_object() || node->is_array()) && !node->empty() && rng() % 5 != 0) {
      auto it = node->begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % node->size()));
      node = &*it;
    }
    *node = replacements[rng() % replacements.size()];
    try {
      const SavedCase saved = parse_saved_case(file);
      replay_saved_case(saved, *cpu_, *cpu_);
      ++replayed;
    } catch (const CaseFileError&) {
      ++refused;
    } catch (const std::exception& error) {
      ADD_FAILURE() << "trial " << trial << ": an edit escaped as " << error.what() << "\n" << file.dump().substr(0, 400);
    }
  }
  EXPECT_GT(refused, 100);
  std::printf("%d edits refused, %d replayed\n", refused, replayed);
}

TEST_F(CaseFiles, LayoutsThatReachPastTheirStorageAreRefused) {
  Layout layout;
  const nlohmann::json outside = {{"sizes", {4, 4}}, {"strides", {4, 1}}, {"offset", 1}, {"storage_elements", 16}, {"recipe", ""}};
  try {
    decode_input(outside, layout);
    FAIL() << "a layout past its storage was accepted";
  } catch (const CaseFileError& error) {
    EXPECT_NE(std::string(error.what()).find("reaches storage element 16"), std::string::npos) << error.what();
  }
}

TEST_F(CaseFiles, WholeNumbersPastInt64AreRefusedAsWritten) {
  // 2^64 - 1 is an unsigned JSON number: through int64 it was -1, a valid int input.
  int value = 0;
  try {
    decode_input(nlohmann::json(std::uint64_t{18446744073709551615ull}), value);
    FAIL() << "2^64 - 1 was read as " << value;
  } catch (const CaseFileError& error) {
    EXPECT_NE(std::string(error.what()).find("18446744073709551615"), std::string::npos) << error.what();
  }
}

TEST_F(CaseFiles, TheCorpusKeepsEachCaseOnce) {
  const std::filesystem::path corpus = std::filesystem::path(::testing::TempDir()) / "bitparity-corpus-once";
  std::filesystem::remove_all(corpus);
  const SavedCase saved = parse_saved_case(valid_);
  const CorpusSave first = save_to_corpus(corpus, saved);
  EXPECT_TRUE(first.added);
  SavedCase again = saved;
  again.found = {{"seed", "9"}};  // found another time: the same case
  const CorpusSave second = save_to_corpus(corpus, again);
  EXPECT_FALSE(second.added);
  EXPECT_EQ(first.path, second.path);
  EXPECT_EQ(corpus_case_files(corpus), std::vector<std::filesystem::path>{first.path});
  const SavedCase read = read_saved_case(first.path);
  EXPECT_EQ(case_fingerprint(read), case_fingerprint(saved));
  std::filesystem::remove_all(corpus);
}

}  // namespace
}  // namespace bitparity::properties
