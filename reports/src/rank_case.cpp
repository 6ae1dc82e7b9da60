#include "rank_case.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/json_document.hpp"
#include "bitparity/properties/saved_case.hpp"
#include "bitparity/reports/code_map_file.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/text_file.hpp"
#include "bitparity/reports/version.hpp"
#include "rank_mutants.hpp"
#include "rank_runs.hpp"
#include "shell_words.hpp"
#if BITPARITY_HAS_MPI
#include "bitparity/distributed/gathered_case.hpp"
#include "bitparity/distributed/shard_plan.hpp"
#include "bitparity/distributed/sharded_case.hpp"
#include "bitparity/distributed/storage_case.hpp"
#include "sharded_plan.hpp"  // kGatheredLayoutName
#endif

namespace bitparity::reports {

namespace fs = std::filesystem;

namespace {

std::string file_name_part(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '-';
  }
  return text;
}

// The case's inputs as data (null without).
nlohmann::json encoded_inputs(const RankCase& saved) {
#if BITPARITY_HAS_MPI
  if (saved.inputs) return distributed::encode_sharded_case(*saved.inputs);
  if (saved.storage_inputs) return distributed::encode_storage_case(*saved.storage_inputs);
  if (saved.gathered_inputs) return distributed::encode_gathered_case(*saved.gathered_inputs);
#else
  (void)saved;
#endif
  return nullptr;
}

// FNV-1a of what makes two saved cases the same: the property, the row, the world, the
// implementation and, with inputs, the (shrunk) case (the seeds that found it are not: the same
// minimal counterexample is stored once).
std::string fingerprint(const RankCase& saved) {
  std::uint64_t hash = 0xCBF29CE484222325ull;
  const std::string inputs = saved.carries_inputs() ? encoded_inputs(saved).dump() : "";
  for (const std::string& part : {saved.property, saved.entry, saved.target, saved.dtype, saved.layout,
                                  std::to_string(saved.world_size), saved.implementation, inputs}) {
    for (char c : part + "\x1f") hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// The document's "schema" when it is a text ("" otherwise: a number there is no schema of ours).
std::string schema_of(const nlohmann::json& document) {
  if (!document.is_object() || !document.contains("schema") || !document.at("schema").is_string()) return "";
  return document.at("schema").get<std::string>();
}

nlohmann::json parsed_file(const fs::path& file) {
  return read_json_file(file, 256 * kMiB, std::string("a rank case from CORPUS/") + kRankCaseFolder);
}

std::string text_field(const nlohmann::json& document, const char* name, const fs::path& file) {
  if (!document.contains(name) || !document.at(name).is_string() || document.at(name).get<std::string>().empty()) {
    throw UsageError(file.string() + ": a rank case needs the text field \"" + name + "\"; save it again with bitparity fuzz");
  }
  return document.at(name).get<std::string>();
}

// The --map values of `arguments`, in order.
std::vector<std::string> map_specs(const std::vector<std::string>& arguments) {
  std::vector<std::string> specs;
  for (std::size_t i = 0; i + 1 < arguments.size(); ++i) {
    if (arguments[i] == "--map") specs.push_back(arguments[++i]);
  }
  return specs;
}

bool names_builtin_map(const std::string& spec) {
  for (const auto& info : quant_formats()) {
    if (info.builtin && info.name == spec) return true;
  }
  return false;
}

// The maps the case's --map FILE arguments name, read as this process knows them (fuzz registered
// them when it checked its options): carried in the file so that they do not depend on the file.
nlohmann::json carried_code_maps(const RankCase& saved) {
  nlohmann::json maps = saved.code_maps;
  for (const std::string& spec : map_specs(saved.arguments)) {
    if (names_builtin_map(spec)) continue;
    if (std::any_of(maps.begin(), maps.end(), [&](const nlohmann::json& m) { return m.value("given", "") == spec; })) continue;
    const CodeMap& map = code_map(resolve_code_map(spec));
    nlohmann::json values = nlohmann::json::array();
    for (const float value : map.values) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &value, sizeof bits);
      char text[16];
      std::snprintf(text, sizeof text, "0x%08x", bits);
      values.push_back(text);
    }
    maps.push_back({{"given", spec}, {"name", map.name}, {"bits", map.bits}, {"values", values}});
  }
  return maps;
}

// The options of a row's replay that a case with inputs keeps: what runs it, not what selects it.
std::vector<std::string> implementation_options(const std::vector<std::string>& arguments) {
  std::vector<std::string> kept = {"sharded"};
  for (std::size_t i = 1; i + 1 < arguments.size(); ++i) {
    const std::string& word = arguments[i];
    if (word == "--implementation" || word == "--mutant" || word == "--rank-implementation" || word == "--communicator" ||
        word == "--map" || word == "--resume-implementation") {
      kept.insert(kept.end(), {word, arguments[i + 1]});
      ++i;
    }
  }
  return kept;
}

#if BITPARITY_HAS_MPI
// The failing case of a P6 or P11 row drawn again from its seed, as `sharded` drew it.
std::shared_ptr<const distributed::ShardedCase> drawn_case(const nlohmann::json& row, int world_size) {
  const std::string property = row.value("property", "");
  if ((property != "P6" && property != "P11") || !row.contains("failing_case")) return nullptr;
  const nlohmann::json& failing = row.at("failing_case");
  auto drawn = std::make_shared<distributed::ShardedCase>();
  const bool eight_bit = row.at("entry").get<std::string>() == "8-bit step";
  drawn->config = distributed::draw_sharded_config(parse_optimizer(row.at("target").get<std::string>()), eight_bit,
                                                   parse_dtype(row.at("dtype").get<std::string>()),
                                                   distributed::parse_layout(row.at("layout").get<std::string>()),
                                                   std::stoull(failing.at("seed").get<std::string>()), world_size);
  drawn->steps = row.at("steps").get<int>();
  if (property == "P11") {
    const nlohmann::json& r = failing.at("resume");
    drawn->resume = distributed::ResumeCase{r.at("save_world").get<int>(), r.at("load_world").get<int>(), r.at("steps_before").get<int>(),
                                            r.at("steps_after").get<int>()};
  }
  drawn->config.recorded = std::make_shared<const distributed::RecordedValues>(distributed::record_values(*drawn));
  return drawn;
}

// "nf4@f16+grad bf16", as the P10 rows name their target.
std::string storage_target_text(const distributed::StorageTarget& target) {
  return std::string(quant_format_info(target.format).name) + "@" + dtype_name(target.storage_dtype) +
         (target.grad_dtype ? std::string("+grad ") + dtype_name(*target.grad_dtype) : "");
}

// The failing case of a P10 row drawn again from its seed on the rows' implementation (the weight is
// quantized by it; a fault of the driver runs on the cpu).
std::shared_ptr<const distributed::StorageCase> drawn_storage_case(const nlohmann::json& row, int world_size, const std::string& implementation) {
  if (row.value("property", "") != "P10" || !row.contains("failing_case")) return nullptr;
  const std::string target = row.at("target").get<std::string>();
  distributed::StorageTarget drawn_target;
  drawn_target.format = parse_quant_format(target.substr(0, target.find('@')));
  drawn_target.storage_dtype = parse_dtype(row.at("storage").get<std::string>());
  drawn_target.compute_dtype = parse_dtype(row.at("dtype").get<std::string>());
  for (auto layout : distributed::kStorageLayouts) {
    if (distributed::storage_layout_name(layout) == row.at("layout").get<std::string>()) drawn_target.layout = layout;
  }
  if (row.at("grad_dtype").get<std::string>() != "none") drawn_target.grad_dtype = parse_dtype(row.at("grad_dtype").get<std::string>());
  const bool fault = implementation.starts_with("mutant:") && find_rank_mutant(implementation.substr(7)) != nullptr;
  const auto quantizer = fixtures::make_implementation(fault ? std::string("cpu") : implementation);
  return std::make_shared<const distributed::StorageCase>(distributed::draw_storage_case(
      drawn_target, std::stoull(row.at("failing_case").at("seed").get<std::string>()), world_size, *quantizer));
}

// The failing case of a P2r row drawn again from its seed, as `sharded` drew it.
std::shared_ptr<const distributed::GatheredCase> drawn_gathered_case(const nlohmann::json& row, int world_size) {
  if (row.value("property", "") != "P2r" || !row.contains("failing_case")) return nullptr;
  distributed::GatheredTarget target;
  target.family = distributed::parse_gathered_entry(row.at("entry").get<std::string>());
  target.dtype = parse_dtype(row.at("dtype").get<std::string>());
  const std::string name = row.at("target").get<std::string>();
  if (distributed::is_optimizer_family(target.family)) target.kind = parse_optimizer(name);
  if (target.family == fixtures::OperationFamily::quantize || target.family == fixtures::OperationFamily::dequantize) {
    target.format = parse_quant_format(name);
  }
  return std::make_shared<const distributed::GatheredCase>(
      distributed::draw_gathered_case(target, std::stoull(row.at("failing_case").at("seed").get<std::string>()), world_size));
}
#endif

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
#if BITPARITY_HAS_MPI
  try {
    saved.inputs = drawn_case(row, world_size);
    saved.storage_inputs = drawn_storage_case(row, world_size, implementation);
    saved.gathered_inputs = drawn_gathered_case(row, world_size);
  } catch (const std::exception& error) {
    // Kept in the form that reproduces it (its seeds), with the reason.
    saved.inputs = nullptr;
    saved.storage_inputs = nullptr;
    saved.gathered_inputs = nullptr;
    saved.shrinking = {{"not_shrunk", std::string("its inputs could not be drawn again here: ") + error.what()}};
  }
#endif
  if (saved.carries_inputs()) saved.arguments = implementation_options(saved.arguments);
  return saved;
}

nlohmann::json rank_case_document(const RankCase& saved, const nlohmann::json& found) {
  nlohmann::json document = {
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
      // With the arguments' implementation: without it the case runs on cpu, where it holds.
      {"reproduction", saved.carries_inputs() ? "the inputs below, without the generator: mpirun -np " + std::to_string(saved.world_size) +
                                          " bitparity sharded --case THIS-FILE" +
                                          (saved.arguments.size() > 1
                                               ? " " + shell_words(std::vector<std::string>(saved.arguments.begin() + 1, saved.arguments.end()))
                                               : std::string()) +
                                          " (bitparity replay does it)"
                                    : "every rank regenerates the inputs from the row's seeds: the build above reproduces it; a "
                                      "later build does while its generators draw the same"}};
  if (!found.is_null()) document["found"] = found;
  if (!saved.shrinking.is_null()) document["shrinking"] = saved.shrinking;
  if (saved.carries_inputs()) document["case"] = encoded_inputs(saved);
  if (nlohmann::json maps = carried_code_maps(saved); !maps.empty()) document["code_maps"] = std::move(maps);
  return document;
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
  fixtures::write_file_atomically(result.file, json_file_text(rank_case_document(saved, found), 1));
  result.added = true;
  return result;
}

bool is_rank_case_file(const fs::path& file) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return false;
  try {
    const nlohmann::json document = parsed_file(file);
    // Any version: read_rank_case names the ones this build reads.
    return schema_of(document).starts_with(kRankCaseSchemaName);
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

namespace {

RankCase read_rank_case_fields(const fs::path& file, const nlohmann::json& document) {
  const std::string schema = schema_of(document);
  if (schema.starts_with(kRankCaseSchemaName) && schema != kRankCaseSchema && schema != kSeededRankCaseSchema) {
    throw UsageError(file.string() + ": schema '" + schema + "' is not one this build reads (" + kRankCaseSchema + ", or " +
                     kSeededRankCaseSchema + " without inputs); save the case again with this build's bitparity fuzz");
  }
  if (schema != kRankCaseSchema && schema != kSeededRankCaseSchema) {
    throw UsageError(file.string() + ": not a rank case (" + kRankCaseSchema + "); give a file from CORPUS/" + kRankCaseFolder +
                     " (bitparity fuzz saves them there), or replay a one-process case with bitparity replay FILE");
  }
  // A field the format does not have (a typo, an edit meant elsewhere) would be ignored silently.
  static const std::vector<std::string> kFields = {"schema", "property", "entry", "target", "dtype", "layout", "world_size",
                                                   "implementation", "arguments", "violation", "build", "reproduction",
                                                   "found", "shrinking", "case", "code_maps"};
  for (const auto& [key, value] : document.items()) {
    if (std::find(kFields.begin(), kFields.end(), key) != kFields.end()) continue;
    std::string names;
    for (const auto& f : kFields) names += (names.empty() ? "" : ", ") + f;
    throw UsageError(file.string() + ": a rank case has no field '" + printable_text(key.size() > 64 ? key.substr(0, 64) + "..." : key) +
                     "'; its fields are " + names);
  }
  RankCase saved;
  saved.file = file.string();
  saved.property = text_field(document, "property", file);
  if (saved.property != "P6" && saved.property != "P2r" && saved.property != "P10" && saved.property != "P11") {
    throw UsageError(file.string() + ": \"property\" " + ("'" + printable_text(saved.property) + "'") +
                     " is none of the properties over ranks (P6, P2r, P10, P11); undo the edit, or save the case again with bitparity fuzz");
  }
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
  // The arguments run the implementation the file names: a replay takes "implementation", so an edit
  // to one of the two ran the other without a word.
  {
    std::string named = "cpu";
    bool per_rank = false;
    for (std::size_t i = 1; i + 1 < saved.arguments.size(); ++i) {
      if (saved.arguments[i] == "--mutant") named = "mutant:" + saved.arguments[i + 1];
      if (saved.arguments[i] == "--implementation") named = saved.arguments[i + 1];
      per_rank = per_rank || saved.arguments[i] == "--rank-implementation";
    }
    if (!per_rank && named != saved.implementation) {
      throw UsageError(file.string() + ": \"arguments\" run " + printable_text(named) + ", but \"implementation\" says " +
                       printable_text(saved.implementation) + "; fix one of them, or save the case again with bitparity fuzz");
    }
    // The ranks would refuse it after mpirun started them, and the replay would count an error.
    if (rank_case_uses_nccl(saved) && !per_rank && !named.starts_with("cuda:")) {
      throw UsageError(file.string() + ": \"arguments\" name --communicator nccl, whose ranks are GPU ranks, and run " + printable_text(named) +
                       "; give --implementation cuda:0 (or --rank-implementation R=cuda:N), or drop --communicator nccl");
    }
  }
  if (std::find(saved.arguments.begin(), saved.arguments.end(), "--json") != saved.arguments.end()) {
    throw UsageError(file.string() + ": \"arguments\" must not name --json (replay chooses where the rows go)");
  }
  for (const char* option : {"--checkpoint-dir", "--case"}) {
    if (std::find(saved.arguments.begin(), saved.arguments.end(), option) != saved.arguments.end()) {
      throw UsageError(file.string() + ": \"arguments\" must not name " + option +
                       " (a replay keeps checkpoints in a temporary folder, and the case is the file's own)");
    }
  }
  // A --map FILE runs the values the case carries, not the file of that name where the replay runs
  // (another folder, or an edited file, ran other maps without a word). The check below reads
  // them by the names they are registered under here.
  std::vector<std::string> checked_arguments = saved.arguments;
  if (document.contains("code_maps")) {
    const nlohmann::json& maps = document.at("code_maps");
    const auto carried_shape = [](const nlohmann::json& m) {
      return m.is_object() && m.contains("given") && m.at("given").is_string() && m.contains("name") && m.at("name").is_string() &&
             m.contains("bits") && m.at("bits").is_number_integer() && m.contains("values") && m.at("values").is_array();
    };
    if (!maps.is_array() || !std::all_of(maps.begin(), maps.end(), carried_shape)) {
      throw UsageError(file.string() + ": \"code_maps\" must be a list of {\"given\", \"name\", \"bits\", \"values\"}; save the case "
                       "again with bitparity fuzz");
    }
    saved.code_maps = maps;
  }
  for (std::size_t i = 0; i + 1 < checked_arguments.size(); ++i) {
    if (checked_arguments[i] != "--map") continue;
    const std::string spec = checked_arguments[++i];
    if (names_builtin_map(spec)) continue;
    const auto carried = std::find_if(saved.code_maps.begin(), saved.code_maps.end(),
                                      [&](const nlohmann::json& m) { return m.at("given") == spec; });
    if (carried == saved.code_maps.end()) {
      throw UsageError(file.string() + ": \"arguments\" name the map " + printable_text(spec) + ", whose values the case does not "
                       "carry in \"code_maps\" (fuzz saves them), so a replay would read whatever file has that name; save the case "
                       "again with bitparity fuzz");
    }
    CodeMap map{carried->at("name").get<std::string>(), carried->at("bits").get<int>(), {}, "carried by a saved rank case"};
    for (const auto& value : carried->at("values")) {
      const std::string text = value.is_string() ? value.get<std::string>() : "";
      if (text.size() != 10 || !text.starts_with("0x") || text.find_first_not_of("0123456789abcdef", 2) != std::string::npos) {
        throw UsageError(file.string() + ": a value of the carried map " + printable_text(map.name) + " is " + value.dump().substr(0, 40) +
                         ", not an fp32 bit pattern \"0x3f800000\"; save the case again with bitparity fuzz");
      }
      const std::uint32_t bits = static_cast<std::uint32_t>(std::stoul(text.substr(2), nullptr, 16));
      float f = 0;
      std::memcpy(&f, &bits, sizeof f);
      map.values.push_back(f);
    }
    try {
      register_code_map(map);
    } catch (const Error& error) {
      throw UsageError(file.string() + ": its carried map " + printable_text(map.name) + ": " + error.message());
    }
    checked_arguments[i] = map.name;
  }
#if BITPARITY_HAS_MPI
  // Arguments the ranks would refuse were run, and their refusal counted as an unexpected result.
  try {
    check_rank_case_arguments(checked_arguments, document.contains("case"));
  } catch (const UsageError& error) {
    throw UsageError(file.string() + ": \"arguments\" " + printable_text(shell_words(saved.arguments)) + ": " + error.what() +
                     "; fix them or save the case again with bitparity fuzz");
  }
  if (document.contains("case")) {
    if (schema == kSeededRankCaseSchema) throw UsageError(file.string() + ": a " + kSeededRankCaseSchema + " file names its case by seed, but this one holds a \"case\"; "
                       "its schema should be " + kRankCaseSchema + " (or save the case again with bitparity fuzz)");
    std::string property, entry, target, dtype, layout;  // the row the case is
    try {
      if (saved.property == "P2r") {
        saved.gathered_inputs = std::make_shared<const distributed::GatheredCase>(distributed::decode_gathered_case(document.at("case")));
        const distributed::GatheredTarget& t = saved.gathered_inputs->target;
        property = "P2r", entry = distributed::gathered_entry_name(t.family), dtype = dtype_name(t.dtype), layout = kGatheredLayoutName;
        target = distributed::is_optimizer_family(t.family) ? std::string(optimizer_info(t.kind).name)
                 : t.family == fixtures::OperationFamily::convert ? std::string("-")
                                                                  : std::string(quant_format_info(t.format).name);
      } else if (saved.property == "P10") {
        saved.storage_inputs = std::make_shared<const distributed::StorageCase>(distributed::decode_storage_case(document.at("case")));
        const distributed::StorageTarget& t = saved.storage_inputs->target;
        property = "P10", entry = "storage", target = storage_target_text(t), dtype = dtype_name(t.compute_dtype);
        layout = distributed::storage_layout_name(t.layout);
      } else {
        saved.inputs = std::make_shared<const distributed::ShardedCase>(distributed::decode_sharded_case(document.at("case")));
        const distributed::ShardedConfig& config = saved.inputs->config;
        property = saved.inputs->resume ? "P11" : "P6", entry = config.eight_bit ? "8-bit step" : "fp32 step";
        target = optimizer_info(config.kind).name, dtype = dtype_name(config.groups.front().param_dtype);
        layout = distributed::layout_name(config.layout);
      }
    } catch (const properties::CaseFileError& error) {
      throw UsageError(file.string() + ": case: " + error.what() + "; fix it or save the case again with bitparity fuzz");
    }
    // The replay runs on world_size ranks: a resume past them was refused by the ranks, after the start.
    if (saved.inputs && saved.inputs->resume &&
        std::max(saved.inputs->resume->save_world, saved.inputs->resume->load_world) > saved.world_size) {
      throw UsageError(file.string() + ": the case saves on " + std::to_string(saved.inputs->resume->save_world) + " ranks and resumes on " +
                       std::to_string(saved.inputs->resume->load_world) + ", more than its \"world_size\" " +
                       std::to_string(saved.world_size) + "; fix one of them");
    }
    if (property != saved.property || entry != saved.entry || target != saved.target || dtype != saved.dtype || layout != saved.layout) {
      throw UsageError(file.string() + ": the case is a " + property + " " + entry + " " + target + "/" + dtype + " " + layout +
                       " case, but the file says " + saved.property + " " + saved.entry + " " + saved.target + "/" + saved.dtype + " " +
                       saved.layout + "; fix one of them");
    }
    if (saved.gathered_inputs) {
      try {
        distributed::check_gathered_world(*saved.gathered_inputs, saved.world_size);
      } catch (const Error& error) {
        throw UsageError(file.string() + ": \"world_size\" " + std::to_string(saved.world_size) + ": " + error.message());
      }
    }
  }
#endif
  // Without its inputs a case is drawn again from the seed in its arguments; without either, the
  // ranks would run whatever the default seed draws.
  if (!document.contains("case") && std::find(saved.arguments.begin(), saved.arguments.end(), "--seed") == saved.arguments.end()) {
    throw UsageError(file.string() + ": the file holds no \"case\" and its \"arguments\" no --seed, so nothing says which case to "
                                     "run; save the case again with bitparity fuzz");
  }
  if (document.contains("shrinking")) saved.shrinking = document.at("shrinking");
  return saved;
}

}  // namespace

RankCase read_rank_case(const fs::path& file) {
  const nlohmann::json document = parsed_file(file);
  return read_json_fields(file.string(), std::string("a rank case as bitparity fuzz saved it to CORPUS/") + kRankCaseFolder,
                          [&] { return read_rank_case_fields(file, document); });
}

bool rank_case_uses_nccl(const RankCase& saved) {
  const auto& words = saved.arguments;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--communicator=nccl" || (words[i] == "--communicator" && i + 1 < words.size() && words[i + 1] == "nccl")) return true;
  }
  return false;
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
  // The ranks read the maps the case carries from files of their own in the run's folder.
  for (const nlohmann::json& carried : saved.code_maps) {
    const std::string map_file = folder + "/map-" + carried.at("name").get<std::string>() + ".json";
    fixtures::write_file_atomically(map_file, nlohmann::json({{"name", carried.at("name")}, {"bits", carried.at("bits")},
                                                              {"values", carried.at("values")}}).dump() + "\n");
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--map" && args[i + 1] == carried.at("given")) args[i + 1] = map_file;
    }
  }
  if (saved.carries_inputs()) args.insert(args.end(), {"--case", saved.file});
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
                    "): " + what_the_run_said(output);
    return replay;
  }
  replay.failed = row->value("wrong_elements", std::int64_t{0}) > 0;
  replay.violation = row->value("counterexample", std::string());
  return replay;
}

}  // namespace bitparity::reports
