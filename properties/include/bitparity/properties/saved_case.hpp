#pragma once
// A failing case saved as a small, self-describing JSON file (schema bitparity.case/1): the
// property, the implementation it failed on, the target (entry, dtype, block size), the violation
// and every input as data. It replays without the generators, so it survives generator changes.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

inline constexpr const char* kCaseSchema = "bitparity.case/1";

// found.reproduction: whether the case failed again on a fresh instance of its implementation.
// Replay reads "needs-earlier-calls" (the failure shows on the second call); a failed check is
// recorded as "replay-error: WHY".
inline constexpr const char* kReproduces = "replays";
inline constexpr const char* kNeedsEarlierCalls = "needs-earlier-calls";
inline constexpr const char* kDoesNotReproduce = "does-not-replay";
inline constexpr const char* kReproductionErrorPrefix = "replay-error: ";

struct SavedCase {
  std::string property;        // id: "P7"
  std::string implementation;  // what it failed on: cpu, cuda:N, mutant:NAME
  std::string entry;           // format or optimizer name ("" for conversions)
  DType dtype = DType::f32;
  std::int64_t blocksize = 0;  // 0 for targets without blocks
  std::string violation;       // the message when it was found
  RecordedCase recorded;
  nlohmann::json found = nlohmann::json::object();  // provenance: seed, visit, build, date (not identity)
};

// The file's JSON, with the property's name and claim, the case description and a replay command.
nlohmann::json saved_case_json(const SavedCase& saved);
// Throws CaseFileError naming what is missing or wrong (schema, property, entry, dtype, block size).
SavedCase parse_saved_case(const nlohmann::json& json);
SavedCase read_saved_case(const std::filesystem::path& path);  // CaseFileError names the file

// Identity of a case: the property, implementation, target and inputs (not how or when it was
// found). Two failures with the same minimal counterexample have the same fingerprint.
std::string case_fingerprint(const SavedCase& saved);
// "P7-nf4-bf16-64-<fingerprint>.json"
std::string case_file_name(const SavedCase& saved);

// The property and target a saved case names (CaseFileError when this build has no such one).
const PropertyDef& saved_case_property(const SavedCase& saved);
TargetSpec saved_case_target(const SavedCase& saved);

// Replays on `iut` (the baseline is cpu for properties that compare with one).
ReplayOutcome replay_saved_case(const SavedCase& saved, fixtures::Implementation& iut, fixtures::Implementation& baseline);
// Why `iut` cannot run the case ("" when it can): its target's reason, or a call the case's inputs
// need that the implementation does not offer (stochastic rounding on a plugin).
std::string saved_case_not_applicable_reason(const SavedCase& saved, fixtures::Implementation& iut, fixtures::Implementation& baseline);

// A corpus folder: cases/ holds one file per distinct case.
struct CorpusSave {
  std::filesystem::path path;
  bool added = false;  // false: the same case was already saved
};
// Writes atomically (temporary file, fsync, rename); an existing case is left as it is.
CorpusSave save_to_corpus(const std::filesystem::path& corpus, const SavedCase& saved);
// Every *.json under `path` (a corpus folder, its cases/ folder, or one file), sorted by name.
std::vector<std::filesystem::path> corpus_case_files(const std::filesystem::path& path);

}  // namespace bitparity::properties
