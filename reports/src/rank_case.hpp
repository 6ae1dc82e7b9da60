#pragma once
// A failing row of a run over ranks, saved by `fuzz` to CORPUS/over-ranks/ (schema
// bitparity.rank-case/2) and re-run by `replay`. A case carries its inputs ("case": P6 and P11
// groups, steps, worlds and every value as "hexfloat bits"; P10: the stored weight's bits and its
// adapter; P2r: the tensor's shape, chunks, pieces and values), shrunk by `fuzz`, and runs through
// `sharded --case FILE` without the generator. Schema /1 files, and a case whose inputs could not be
// drawn again, regenerate them from the row's seeds: they reproduce on the build that saved them
// (recorded in the file), and on a later build only while the generators draw the same.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bitparity::distributed {
struct ShardedCase;  // sharded_case.hpp: P6, P11
struct StorageCase;  // storage_parity.hpp, storage_case.hpp: P10
struct GatheredCase;  // gathered_layout.hpp, gathered_case.hpp: P2r
}  // namespace bitparity::distributed

namespace bitparity::reports {

inline constexpr const char* kRankCaseSchemaName = "bitparity.rank-case/";  // any version
inline constexpr const char* kRankCaseSchema = "bitparity.rank-case/2";
inline constexpr const char* kSeededRankCaseSchema = "bitparity.rank-case/1";  // read: no inputs
inline constexpr const char* kRankCaseFolder = "over-ranks";  // below the corpus folder

struct RankCase {
  std::string property, entry, target, dtype, layout;
  int world_size = 0;
  std::string implementation;          // what the ranks ran: cpu, cuda:N, mutant:NAME (a fault or a mutant)
  std::vector<std::string> arguments;  // the `sharded` options that run the row alone (no --json)
  std::string violation;               // the row's first wrong element when it was found
  std::string build;                   // the bitparity that saved it
  std::shared_ptr<const distributed::ShardedCase> inputs;          // P6, P11: the case as data
  std::shared_ptr<const distributed::StorageCase> storage_inputs;  // P10: the case as data
  std::shared_ptr<const distributed::GatheredCase> gathered_inputs;  // P2r: the case as data
  // Else every rank regenerates them from seeds.
  bool carries_inputs() const { return inputs || storage_inputs || gathered_inputs; }
  nlohmann::json shrinking;            // how fuzz shrank it (null: not shrunk)
  // The maps its --map FILE arguments name, as values ({"given": FILE, "name", "bits", "values"}):
  // a replay elsewhere, or after the file changed, runs the maps the case was found with.
  nlohmann::json code_maps = nlohmann::json::array();
  std::string file;                    // where it was read from or written (sharded --case reads it)
  std::string target_text() const;    // "P6 8-bit step adam/bf16 zero-3 on 3 ranks"
};

// The case of a failing row of a `sharded --json` run over `world_size` ranks on `implementation`.
// The row's failing case is drawn again here, from its seed, as data.
RankCase rank_case_of_row(const nlohmann::json& row, int world_size, const std::string& implementation);

// The file's document (`found`: seed and round that found it, or null).
nlohmann::json rank_case_document(const RankCase& saved, const nlohmann::json& found);

struct SavedRankCase {
  std::string file;
  bool added = false;  // false: the same property, row and implementation were already saved
};
// Writes the case atomically to corpus/over-ranks/ under a name fingerprinted by its property,
// row, world size and implementation; `found` (seed, round) goes into the file as is.
SavedRankCase save_rank_case(const std::string& corpus, const RankCase& saved, const nlohmann::json& found);

// Whether `file` is a rank case (its schema), without judging anything else in it.
bool is_rank_case_file(const std::filesystem::path& file);
// The rank cases of a corpus folder (its over-ranks/), none for a file or a folder without one.
std::vector<std::filesystem::path> rank_case_files(const std::filesystem::path& path);
// Reads and checks a rank case; throws UsageError naming the file and what is wrong in it.
RankCase read_rank_case(const std::filesystem::path& file);

// The `sharded` options of a case, run on `implementation` instead of its own (cpu, cuda:N,
// mutant:NAME for a rank fault or an in-process mutant).
// Whether the case's arguments run over NCCL (--communicator nccl): its ranks are then GPU ranks.
bool rank_case_uses_nccl(const RankCase& saved);
std::vector<std::string> rank_case_arguments_on(const RankCase& saved, const std::string& implementation);

struct RankReplay {
  bool failed = false;    // its row failed again
  std::string violation;  // that row's finding
  std::string broken;     // the run did not give the row (it broke, or was stopped): why
};
// Runs the case again over its world size with `launcher`, its rows and output in `folder`; a case
// with inputs runs from its file.
RankReplay replay_rank_case(const RankCase& saved, const std::string& implementation, const std::string& launcher,
                            const std::string& folder, std::chrono::steady_clock::time_point deadline);

}  // namespace bitparity::reports
