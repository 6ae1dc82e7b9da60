#include "rank_case.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/saved_case.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/version.hpp"
#include "rank_mutants.hpp"
#include "rank_runs.hpp"

namespace bitparity::reports {

namespace fs = std::filesystem;

namespace {

std::string file_name_part(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '-';
  }
  return text;
}

// FNV-1a of what makes two saved cases the same: the property, the row, the world and the
// implementation (the seeds that found it are not: the same failing row is stored once).
std::string fingerprint(const RankCase& saved) {
  std::uint64_t hash = 0xCBF29CE484222325ull;
  for (const std::string& part : {saved.property, saved.entry, saved.target, saved.dtype, saved.layout,
                                  std::to_string(saved.world_size), saved.implementation}) {
    for (char c : part + "\x1f") hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

nlohmann::json parsed_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw UsageError(file.string() + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, false);
}

std::string text_field(const nlohmann::json& document, const char* name, const fs::path& file) {
  if (!document.contains(name) || !document.at(name).is_string() || document.at(name).get<std::string>().empty()) {
    throw UsageError(file.string() + ": a rank case needs the text field \"" + name + "\"; save it again with bitparity fuzz");
  }
  return document.at(name).get<std::string>();
}

bool row_matches(const nlohmann::json& row, const RankCase& saved) {
  return row.value("property", "") == saved.property && row.value("entry", "") == saved.entry &&
         row.value("target", "") == saved.target && row.value("dtype", "") == saved.dtype && row.value("layout", "") == saved.layout;
}

}  // namespace

std::string RankCase::target_text() const {
  return property + " " + entry + " " + target + "/" + dtype + " " + layout + " on " + std::to_string(world_size) + " ranks";
}

RankCase rank_case_of_row(const nlohmann::json& row, int world_size, const std::string& implementation) {
  RankCase saved;
  saved.property = row.at("property").get<std::string>();
  saved.entry = row.at("entry").get<std::string>();
  saved.target = row.at("target").get<std::string>();
  saved.dtype = row.at("dtype").get<std::string>();
  saved.layout = row.at("layout").get<std::string>();
  saved.world_size = world_size;
  saved.implementation = implementation;
  saved.arguments = row.at("replay_arguments").get<std::vector<std::string>>();
  saved.violation = row.value("counterexample", std::string());
  saved.build = version_string();
  return saved;
}

SavedRankCase save_rank_case(const std::string& corpus, const RankCase& saved, const nlohmann::json& found) {
  const fs::path folder = fs::path(corpus) / kRankCaseFolder;
  fs::create_directories(folder);
  const std::string name = file_name_part(saved.property + "-" + saved.entry + "-" + saved.target + "-" + saved.dtype + "-" +
                                          saved.layout + "-W" + std::to_string(saved.world_size) + "-" + saved.implementation) +
                           "-" + fingerprint(saved) + ".json";
  SavedRankCase result{(folder / name).string(), false};
  std::error_code error;
  if (fs::exists(result.file, error)) return result;
  const nlohmann::json document = {
      {"schema", kRankCaseSchema},
      {"property", saved.property},
      {"entry", saved.entry},
      {"target", saved.target},
      {"dtype", saved.dtype},
      {"layout", saved.layout},
      {"world_size", saved.world_size},
      {"implementation", saved.implementation},
      {"arguments", saved.arguments},
      {"violation", saved.violation},
      {"build", saved.build},
      {"reproduction", "every rank regenerates the inputs from the row's seeds: the build above reproduces it; a later "
                       "build does while its generators draw the same"},
      {"found", found}};
  fixtures::write_file_atomically(result.file, document.dump(2) + "\n");
  result.added = true;
  return result;
}

bool is_rank_case_file(const fs::path& file) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return false;
  try {
    const nlohmann::json document = parsed_file(file);
    return document.is_object() && document.value("schema", "") == kRankCaseSchema;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<fs::path> rank_case_files(const fs::path& path) {
  std::error_code error;
  const fs::path folder = path / kRankCaseFolder;
  if (!fs::is_directory(folder, error)) return {};
  try {
    return properties::corpus_case_files(folder);  // the same listing as the one-process cases
  } catch (const properties::CaseFileError& listing) {
    throw UsageError(listing.what());
  }
}

RankCase read_rank_case(const fs::path& file) {
  const nlohmann::json document = parsed_file(file);
  if (!document.is_object() || document.value("schema", "") != kRankCaseSchema) {
    throw UsageError(file.string() + ": not a rank case (" + kRankCaseSchema + ")");
  }
  RankCase saved;
  saved.property = text_field(document, "property", file);
  saved.entry = text_field(document, "entry", file);
  saved.target = text_field(document, "target", file);
  saved.dtype = text_field(document, "dtype", file);
  saved.layout = text_field(document, "layout", file);
  saved.implementation = text_field(document, "implementation", file);
  saved.build = text_field(document, "build", file);
  saved.violation = document.value("violation", std::string());
  if (!document.contains("world_size") || !document.at("world_size").is_number_unsigned() ||
      document.at("world_size").get<int>() < 1 || document.at("world_size").get<int>() > 64) {
    throw UsageError(file.string() + ": \"world_size\" must be a whole number from 1 to 64");
  }
  saved.world_size = document.at("world_size").get<int>();
  const nlohmann::json& arguments = document.value("arguments", nlohmann::json());
  if (!arguments.is_array() || arguments.empty() || arguments.front() != "sharded" ||
      !std::all_of(arguments.begin(), arguments.end(), [](const nlohmann::json& a) { return a.is_string(); })) {
    throw UsageError(file.string() + ": \"arguments\" must be the `sharded` command's words, starting with \"sharded\"");
  }
  saved.arguments = arguments.get<std::vector<std::string>>();
  if (std::find(saved.arguments.begin(), saved.arguments.end(), "--json") != saved.arguments.end()) {
    throw UsageError(file.string() + ": \"arguments\" must not name --json (replay chooses where the rows go)");
  }
  return saved;
}

std::vector<std::string> rank_case_arguments_on(const RankCase& saved, const std::string& implementation) {
  std::vector<std::string> args;
  for (std::size_t i = 0; i < saved.arguments.size(); ++i) {
    const std::string& word = saved.arguments[i];
    if (word == "--implementation" || word == "--mutant" || word == "--rank-implementation") {
      ++i;  // and its value
      continue;
    }
    args.push_back(word);
  }
  const std::string mutant = implementation.starts_with("mutant:") ? implementation.substr(7) : "";
  if (!mutant.empty() && find_rank_mutant(mutant) != nullptr) {
    args.insert(args.end(), {"--mutant", mutant});
  } else if (implementation != "cpu") {
    args.insert(args.end(), {"--implementation", implementation});
  }
  return args;
}

RankReplay replay_rank_case(const RankCase& saved, const std::string& implementation, const std::string& launcher,
                            const std::string& folder, std::chrono::steady_clock::time_point deadline) {
  const std::string rows_file = folder + "/rows.json", output = folder + "/output.txt";
  std::vector<std::string> args = rank_case_arguments_on(saved, implementation);
  args.insert(args.end(), {"--json", rows_file});
  fs::remove(rows_file);
  RankReplay replay;
  const RankRun run = run_over_ranks(launcher, saved.world_size, args, output, deadline);
  if (run.exit_code < 0) {
    replay.broken = run.failure.empty() ? "stopped before it ended" : run.failure;
    return replay;
  }
  const RankRows rows = read_rank_rows(rows_file, run, output);
  if (!rows.broken.empty()) {
    replay.broken = rows.broken;
    return replay;
  }
  const auto row = std::find_if(rows.results.begin(), rows.results.end(), [&](const nlohmann::json& r) { return row_matches(r, saved); });
  if (row == rows.results.end()) {
    replay.broken = "the run over ranks did not run the row " + saved.target_text() + " (exit " + std::to_string(run.exit_code) +
                    "): " + last_printed_line(output);
    return replay;
  }
  replay.failed = row->value("wrong_elements", std::int64_t{0}) > 0;
  replay.violation = row->value("counterexample", std::string());
  return replay;
}

}  // namespace bitparity::reports
