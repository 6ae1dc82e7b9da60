#include "bitparity/properties/saved_case.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/fixtures/file_kind.hpp"
#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/quant_format.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/json_document.hpp"

namespace bitparity::properties {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string string_field(const json& j, const char* key, bool required = true) {
  if (!j.contains(key)) {
    if (!required) return "";
    throw CaseFileError(std::string("the case has no '") + key + "'");
  }
  if (!j.at(key).is_string()) throw CaseFileError(std::string("'") + key + "' must be a string, got " + j.at(key).dump());
  return j.at(key).get<std::string>();
}

// Names in file names keep letters, digits, '-' and '.'; anything else becomes '_'.
std::string file_safe(const std::string& text) {
  std::string safe = text;
  for (char& c : safe) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!keep) c = '_';
  }
  return safe;
}

// The maps registered at run time (read from files) that the case uses travel with it, so that a
// replay in another process decides with the same values: the quant entry's map, or the maps an
// 8-bit optimizer case names for its states.
json carried_maps(const SavedCase& saved) {
  std::vector<std::string> used = {saved.entry};
  const json& inputs = saved.recorded.inputs;
  if (inputs.contains("case") && inputs.at("case").is_object() && inputs.at("case").contains("state_maps")) {
    for (const auto& name : inputs.at("case").at("state_maps")) {
      if (name.is_string()) used.push_back(name.get<std::string>());
    }
  }
  json maps = json::array();
  for (const auto& info : quant_formats()) {
    if (info.builtin || std::find(used.begin(), used.end(), info.name) == used.end()) continue;
    const CodeMap& map = code_map(info.format);
    json values = json::array();
    for (float value : map.values) {
      char text[16];
      std::snprintf(text, sizeof text, "0x%08x", float_bits(value));
      values.push_back(text);
    }
    maps.push_back({{"name", map.name}, {"bits", map.bits}, {"provenance", map.provenance}, {"values", values}});
  }
  return maps;
}

}  // namespace

json saved_case_json(const SavedCase& saved) {
  const PropertyDef& property = saved_case_property(saved);
  std::string description;
  for (const auto& [key, note] : saved.recorded.notes.items()) {
    if (note.is_string()) description += (description.empty() ? "" : "; ") + note.get<std::string>();
  }
  json document = {{"schema", kCaseSchema},
          {"property", saved.property},
          {"property_name", property.name},
          {"claim", property.claim},
          {"suite", std::string(fixtures::suite_name(property.suite))},
          {"implementation", saved.implementation},
          {"entry", saved.entry},
          {"dtype", dtype_name(saved.dtype)},
          {"blocksize", saved.blocksize},
          {"violation", saved.violation},
          {"description", description},
          {"fingerprint", case_fingerprint(saved)},
          {"replay", "bitparity replay " + case_file_name(saved)},
          {"found", saved.found},
          {"inputs", saved.recorded.inputs},
          {"input_notes", saved.recorded.notes}};
  if (json maps = carried_maps(saved); !maps.empty()) document["code_maps"] = maps;
  return document;
}

namespace {

// Registers the map a case carries (a map read from a file when the case was found).
void register_carried_map(const json& j) {
  if (!j.is_object() || !j.contains("name") || !j.contains("bits") || !j.contains("values") ||
      !j.at("name").is_string() || !j.at("bits").is_number_integer() || !j.at("values").is_array()) {
    throw CaseFileError("a case's code map must be an object with \"name\", \"bits\" and \"values\" (fp32 bit patterns \"0x3f800000\")");
  }
  CodeMap map;
  map.name = j.at("name").get<std::string>();
  map.bits = j.at("bits").get<int>();
  map.provenance = j.contains("provenance") && j.at("provenance").is_string() ? j.at("provenance").get<std::string>()
                                                                             : "carried by a saved case";
  if (j.at("values").size() > 256) throw CaseFileError("a case's code map holds more than 256 values");
  for (const auto& value : j.at("values")) {
    const std::string text = value.is_string() ? value.get<std::string>() : "";
    if (text.size() != 10 || text.rfind("0x", 0) != 0 || text.find_first_not_of("0123456789abcdef", 2) != std::string::npos) {
      throw CaseFileError("a case's code map value " + value.dump() + " is not an fp32 bit pattern \"0x3f800000\"");
    }
    map.values.push_back(float_from_bits(static_cast<std::uint32_t>(std::stoul(text.substr(2), nullptr, 16))));
  }
  // Maps are known by name for the whole run: an earlier case (or --map) may hold this name.
  const std::vector<QuantFormatInfo> known = quant_formats();
  const auto taken = std::find_if(known.begin(), known.end(), [&](const QuantFormatInfo& info) { return info.name == map.name; });
  try {
    register_code_map(map);
  } catch (const Error& error) {
    if (taken != known.end() && taken->builtin) {
      throw CaseFileError("its code map '" + map.name + "' has other values than bitparity's built-in map of that name; the file was "
                          "edited (a case saves a map read from a file under that file's name)");
    }
    if (taken != known.end()) {
      throw CaseFileError("its code map '" + map.name + "' has other values than the map of that name already read in this run (from " +
                          "another case or --map); one run knows one map per name, so replay the two in separate runs");
    }
    throw CaseFileError(std::string("a case's code map: ") + error.message());
  }
}

}  // namespace

SavedCase parse_saved_case(const json& j) {
  if (!j.is_object()) throw CaseFileError("a case file holds one JSON object");
  const std::string schema = string_field(j, "schema");
  if (schema != kCaseSchema) {
    throw CaseFileError("schema '" + schema + "' is not " + kCaseSchema + "; this build reads only that schema");
  }
  // A field the format does not have (a typo such as "input" for "inputs") would be ignored silently.
  static const std::vector<std::string> kFields = {"schema", "property", "property_name", "claim", "suite", "implementation",
                                                   "entry", "dtype", "blocksize", "violation", "description", "fingerprint",
                                                   "replay", "found", "inputs", "input_notes", "code_maps", "code_map"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(kFields.begin(), kFields.end(), key) != kFields.end()) continue;
    std::string names;
    for (const auto& f : kFields) names += (names.empty() ? "" : ", ") + f;
    throw CaseFileError("a case file has no field '" + (key.size() > 64 ? key.substr(0, 64) + "..." : key) + "'; its fields are " + names);
  }
  SavedCase saved;
  saved.property = string_field(j, "property");
  saved.implementation = string_field(j, "implementation");
  saved.entry = string_field(j, "entry");
  decode_input(j.contains("dtype") ? j.at("dtype") : json(), saved.dtype);
  if (!j.contains("blocksize")) throw CaseFileError("the case has no 'blocksize'");
  try {
    decode_input(j.at("blocksize"), saved.blocksize);
  } catch (const CaseFileError& error) {
    throw CaseFileError(std::string("'blocksize': ") + error.what());
  }
  saved.violation = string_field(j, "violation", false);
  if (!j.contains("inputs") || !j.at("inputs").is_object()) throw CaseFileError("the case has no 'inputs' object");
  saved.recorded.inputs = j.at("inputs");
  if (j.contains("input_notes")) {
    if (!j.at("input_notes").is_object()) throw CaseFileError("'input_notes' must be an object");
    saved.recorded.notes = j.at("input_notes");
  }
  if (j.contains("found")) {
    // Replay acts on found.reproduction, so a value it does not know would be ignored silently.
    const json& found = j.at("found");
    if (!found.is_object()) throw CaseFileError("'found' must be an object (how and when the case was found)");
    if (found.contains("reproduction")) {
      const json& value = found.at("reproduction");
      const bool known = value.is_string() && (value == kReproduces || value == kNeedsEarlierCalls || value == kDoesNotReproduce ||
                                               value.get<std::string>().starts_with(kReproductionErrorPrefix));
      if (!known) {
        throw CaseFileError("'found.reproduction' is " + value.dump().substr(0, 64) + ", not one of \"" + kReproduces + "\", \"" +
                            kNeedsEarlierCalls + "\", \"" + kDoesNotReproduce + "\" or \"" + kReproductionErrorPrefix +
                            "...\"; remove it or give one of those");
      }
    }
    saved.found = found;
  }
  try {
    fixtures::parse_implementation_id(saved.implementation);
  } catch (const Error& error) {
    throw CaseFileError(std::string("'implementation': ") + error.what());
  }
  if (j.contains("code_map")) register_carried_map(j.at("code_map"));  // files written before "code_maps"
  if (j.contains("code_maps")) {
    if (!j.at("code_maps").is_array()) throw CaseFileError("'code_maps' must be a list of maps");
    for (const auto& map : j.at("code_maps")) register_carried_map(map);
  }
  saved_case_property(saved);  // the property and target exist in this build
  saved_case_target(saved);
  // The entry the file names must be the optimizer its inputs hold: an edited "entry" replayed the
  // adam inputs under the name sgd (without a fingerprint nothing else tells).
  // P14's calls are "case1" to "case3", the first on the case's own target.
  const json* inputs_case = saved.recorded.inputs.contains("case")    ? &saved.recorded.inputs.at("case")
                            : saved.recorded.inputs.contains("case1") ? &saved.recorded.inputs.at("case1")
                                                                      : nullptr;
  // The same for the 8-bit steps (their hyperparameters under "base"), the quantizers' format and
  // every case's block size: an edited label ran the old inputs under the new name.
  const auto field_of = [](const json* object, std::initializer_list<const char*> path) -> const json* {
    for (const char* key : path) {
      if (object == nullptr || !object->is_object() || !object->contains(key)) return nullptr;
      object = &object->at(key);
    }
    return object;
  };
  for (const json* named : {field_of(inputs_case, {"hyperparameters", "optimizer"}), field_of(inputs_case, {"base", "hyperparameters", "optimizer"}),
                            field_of(inputs_case, {"format"})}) {
    if (named != nullptr && *named != saved.entry) {
      throw CaseFileError("the case's inputs are " + named->dump() + " inputs, but its 'entry' says '" + saved.entry + "'; fix one of them");
    }
  }
  if (const json* blocks = field_of(inputs_case, {"blocksize"}); blocks != nullptr && *blocks != saved.blocksize) {
    throw CaseFileError("the case's inputs have block size " + blocks->dump() + ", but its 'blocksize' says " +
                        std::to_string(saved.blocksize) + "; fix one of them");
  }
  // A fingerprint of another type (5, null) was taken for none, which let an edited case through.
  if (j.contains("fingerprint") && !j.at("fingerprint").is_string()) {
    throw CaseFileError("'fingerprint' is " + j.at("fingerprint").dump() + ", not the text bitparity wrote; remove it to accept an edit");
  }
  // The dtype and suite the file names are the ones its inputs and property have: "dtype": "f16" over
  // f32 inputs ran and was labelled f16, and "suite" is no part of the fingerprint.
  const json* inputs_dtype = nullptr;
  // A quantizer's input values carry their dtype ("values": {"dtype", "values"}).
  if (const json& inputs = saved.recorded.inputs; inputs.contains("values") && inputs.at("values").is_object() &&
                                                  inputs.at("values").contains("dtype")) {
    inputs_dtype = &inputs.at("values").at("dtype");
  }
  if (inputs_case != nullptr && inputs_case->is_object()) {
    if (inputs_case->contains("param_dtype")) inputs_dtype = &inputs_case->at("param_dtype");
    if (inputs_case->contains("base") && inputs_case->at("base").is_object() && inputs_case->at("base").contains("param_dtype")) {
      inputs_dtype = &inputs_case->at("base").at("param_dtype");
    }
    if (inputs_case->contains("input") && inputs_case->at("input").is_object() && inputs_case->at("input").contains("dtype")) {
      inputs_dtype = &inputs_case->at("input").at("dtype");
    }
  }
  if (inputs_dtype != nullptr && *inputs_dtype != dtype_name(saved.dtype)) {
    throw CaseFileError("the case's inputs are of dtype " + inputs_dtype->dump() + ", but its 'dtype' says '" +
                        std::string(dtype_name(saved.dtype)) + "'; fix one of them");
  }
  if (j.contains("suite")) {
    const std::string suite(fixtures::suite_name(saved_case_property(saved).suite));
    if (j.at("suite") != suite) {
      throw CaseFileError("'suite' is " + j.at("suite").dump() + ", but property " + saved.property + " is of suite " + suite + "; fix it");
    }
  }
  if (j.contains("fingerprint") && j.at("fingerprint").is_string() && j.at("fingerprint").get<std::string>() != case_fingerprint(saved)) {
    throw CaseFileError("the fingerprint " + j.at("fingerprint").get<std::string>() +
                        " does not match the case (" + case_fingerprint(saved) +
                        "): the file was edited; remove 'fingerprint' to accept the edit");
  }
  // Without a fingerprint the inputs may have been edited: the notes written when the case was
  // drawn would describe the old inputs (lr=0.1 for a case now holding lr=-1), so none is shown.
  if (!j.contains("fingerprint")) saved.recorded.notes = json::object();
  return saved;
}

SavedCase read_saved_case(const fs::path& path) {
  std::error_code error;
  if (const std::string kind = fixtures::not_a_regular_file(path); !kind.empty()) throw CaseFileError(path.string() + ": " + kind);
  if (fs::file_size(path, error) > (std::uintmax_t{256} << 20)) throw CaseFileError(path.string() + ": larger than 256 MiB, more than a saved case can be; give a case file that bitparity fuzz saved");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CaseFileError(path.string() + ": cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parse_saved_case(parse_json_document(text.str()));
  } catch (const json::parse_error& parse) {
    throw CaseFileError(path.string() + ": not valid JSON (" + json_error_message(parse) + ")");
  } catch (const json::exception& bad) {
    throw CaseFileError(path.string() + ": " + json_error_message(bad) + "; give a case file that bitparity fuzz saved");
  } catch (const CaseFileError& bad) {
    throw CaseFileError(path.string() + ": " + bad.what());
  }
}

std::string case_fingerprint(const SavedCase& saved) {
  json identity = {{"property", saved.property}, {"implementation", saved.implementation}, {"entry", saved.entry},
                   {"dtype", dtype_name(saved.dtype)}, {"blocksize", saved.blocksize}, {"inputs", saved.recorded.inputs}};
  // A map read from a file decides as much as the inputs (cases with built-in maps only keep their
  // fingerprints).
  if (json maps = carried_maps(saved); !maps.empty()) {
    for (auto& map : maps) map.erase("provenance");  // where the values were read, not what they are
    identity["code_maps"] = maps;
  }
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a over the canonical dump (keys sorted)
  for (unsigned char c : identity.dump()) hash = (hash ^ c) * 0x100000001b3ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, hash);
  return text;
}

std::string case_file_name(const SavedCase& saved) {
  std::string name = saved.property;
  name.append("-").append(saved.entry.empty() ? std::string("conversion") : saved.entry).append("-").append(dtype_name(saved.dtype));
  if (saved.blocksize > 0) name.append("-").append(std::to_string(saved.blocksize));
  const fixtures::ImplementationId id = fixtures::parse_implementation_id(saved.implementation);
  name += '-';
  if (id.kind == fixtures::ImplementationKind::mutant) {
    name.append("mutant.").append(id.name);
  } else {
    name.append(saved.implementation);
  }
  name = file_safe(name);
  name.append("-").append(case_fingerprint(saved)).append(".json");
  return name;
}

const PropertyDef& saved_case_property(const SavedCase& saved) {
  std::string ids;
  for (const auto& property : property_catalogue()) {
    if (property.id == saved.property) return property;
    ids += (ids.empty() ? "" : ", ") + property.id;
  }
  throw CaseFileError("this build has no property '" + saved.property + "' (it has " + ids + ")");
}

TargetSpec saved_case_target(const SavedCase& saved) {
  const PropertyDef& property = saved_case_property(saved);
  for (const TargetSpec& spec : suite_targets(property.suite)) {
    if (spec.entry() != saved.entry || spec.dtype != saved.dtype) continue;
    const auto sizes = spec.block_sizes();
    if (std::find(sizes.begin(), sizes.end(), saved.blocksize) == sizes.end()) {
      std::string listed;
      for (const auto size : sizes) listed += (listed.empty() ? "" : ", ") + std::to_string(size);
      throw CaseFileError("'blocksize' " + std::to_string(saved.blocksize) + " is not one of " + spec.label() + "'s (" + listed +
                          "); fix it, and the block size its inputs were drawn with");
    }
    return spec;
  }
  std::string entries;
  for (const TargetSpec& spec : suite_targets(property.suite)) {
    if (entries.find("'" + spec.entry() + "'") == std::string::npos) entries += (entries.empty() ? "'" : ", '") + spec.entry() + "'";
  }
  throw CaseFileError("its 'property' " + saved.property + " (suite " + std::string(fixtures::suite_name(property.suite)) +
                      ") has no target '" + (saved.entry.empty() ? "" : saved.entry + "/") + dtype_name(saved.dtype) +
                      "': its 'entry' must be one of " + entries + " with a dtype the suite runs, or 'property' another suite's; "
                      "fix the one that was edited" +
                      (property.suite == fixtures::Suite::quant ? " (a map read from a file travels in the case's 'code_maps')" : ""));
}

namespace {

const json* member(const json& object, std::initializer_list<const char*> path) {
  const json* at = &object;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &at->at(key);
  }
  return at;
}

// Why `iut` cannot make one recorded call ("" when it can); unreadable fields are left to the decoder.
std::string call_not_applicable_reason(const json& call, fixtures::Suite suite, const fixtures::Implementation& iut) {
  using fixtures::OperationFamily;
  if (const json* sr = member(call, {"rounding", "enabled"}); sr != nullptr && *sr == true && !iut.offers(OperationFamily::stochastic_rounding)) {
    return iut.name() + " does not offer stochastic rounding, which the case draws";
  }
  try {
    const json* format = member(call, {"format"});
    const json* input_dtype = member(call, {"input", "dtype"});
    if (format != nullptr && format->is_string() && input_dtype != nullptr && input_dtype->is_string()) {
      const QuantFormat map = parse_quant_format(format->get<std::string>());
      for (const OperationFamily family : {OperationFamily::quantize, OperationFamily::dequantize}) {
        if (std::string reason = iut.declines(family, map, parse_dtype(input_dtype->get<std::string>())); !reason.empty()) return reason;
      }
      if (const json* out = member(call, {"out_dtype"}); out != nullptr && out->is_string()) {
        if (std::string reason = iut.declines(OperationFamily::dequantize, map, parse_dtype(out->get<std::string>())); !reason.empty()) {
          return reason;
        }
      }
    }
    const json* hyper = member(call, {"hyperparameters"}) != nullptr ? member(call, {"hyperparameters"}) : member(call, {"base", "hyperparameters"});
    const json* param_dtype = member(call, {"param_dtype"}) != nullptr ? member(call, {"param_dtype"}) : member(call, {"base", "param_dtype"});
    const json* optimizer = hyper != nullptr ? member(*hyper, {"optimizer"}) : nullptr;
    if (optimizer != nullptr && optimizer->is_string() && param_dtype != nullptr && param_dtype->is_string()) {
      const OperationFamily family = suite == fixtures::Suite::optim8 ? OperationFamily::optimizer8_step : OperationFamily::optimizer_step;
      if (std::string reason = iut.declines(family, parse_optimizer(optimizer->get<std::string>()), parse_dtype(param_dtype->get<std::string>()));
          !reason.empty()) {
        return reason;
      }
    }
  } catch (const Error&) {
    // An unknown map, dtype or optimizer name: the case decoder refuses it with the field's name.
  }
  return "";
}

}  // namespace

std::string saved_case_not_applicable_reason(const SavedCase& saved, fixtures::Implementation& iut, fixtures::Implementation& baseline) {
  const PropertyDef& property = saved_case_property(saved);
  const PropertyTarget target = make_target(property, saved_case_target(saved), &iut, &baseline, saved.blocksize);
  if (std::string reason = not_applicable_reason(property, target); !reason.empty()) return reason;
  // A mutant that does not alter the case's entry runs the correct kernels there: it could only
  // "survive", which would say nothing about the case.
  if (const fixtures::ImplementationId id = fixtures::parse_implementation_id(iut.name()); id.kind == fixtures::ImplementationKind::mutant) {
    const fixtures::MutantInfo* mutant = fixtures::find_mutant(id.name);
    if (mutant != nullptr && !mutant->alters(property.suite, saved.entry)) {
      std::string altered;
      for (const std::string& entry : mutant->entries) altered += (altered.empty() ? "" : ", ") + entry;
      return iut.name() + " alters " + std::string(fixtures::suite_name(mutant->suite)) + (altered.empty() ? "" : " " + altered) +
             " only, not this case's " + std::string(fixtures::suite_name(property.suite)) + (saved.entry.empty() ? "" : " " + saved.entry);
    }
  }
  // Every call of the case (P14 makes three, on other targets too) must be one the implementation
  // takes: a quantize drawn with stochastic rounding (a plugin offers none), a map, dtype or optimizer
  // it declines. There the case is not applicable, as its row would be, not a refusal of a valid case.
  for (const char* name : {"case", "case1", "case2", "case3"}) {
    if (!saved.recorded.inputs.contains(name)) continue;
    const json& call = saved.recorded.inputs.at(name);
    if (std::string reason = call_not_applicable_reason(call, property.suite, iut); !reason.empty()) {
      // Which call, where the case makes several: "(its call case2: dynamic8-unsigned)".
      const json* on = member(call, {"format"}) != nullptr ? member(call, {"format"}) : member(call, {"hyperparameters", "optimizer"});
      if (on == nullptr) on = member(call, {"base", "hyperparameters", "optimizer"});
      if (std::string(name) != "case" && on != nullptr && on->is_string()) reason += " (its call " + std::string(name) + ": " + on->get<std::string>() + ")";
      return reason;
    }
  }
  // P7's output dtype is an input of its own, its map the target's.
  if (const json* out = member(saved.recorded.inputs, {"out_dtype"}); out != nullptr && out->is_string() && target.format != nullptr) {
    try {
      if (std::string reason = iut.declines(fixtures::OperationFamily::dequantize, target.format->format, parse_dtype(out->get<std::string>()));
          !reason.empty()) {
        return reason;
      }
    } catch (const Error&) {
      // An unknown dtype name: the case decoder refuses it with the field's name.
    }
  }
  return "";
}

ReplayOutcome replay_saved_case(const SavedCase& saved, fixtures::Implementation& iut, fixtures::Implementation& baseline) {
  const PropertyDef& property = saved_case_property(saved);
  const PropertyTarget target = make_target(property, saved_case_target(saved), &iut, &baseline, saved.blocksize);
  if (const std::string reason = saved_case_not_applicable_reason(saved, iut, baseline); !reason.empty()) {
    ReplayOutcome outcome;
    outcome.not_applicable = true;
    outcome.not_applicable_reason = reason;
    return outcome;
  }
  ReplayOutcome outcome = replay_property(property, target, saved.recorded);
  // A case that ran to its end without reading an input holds one no property draws (an edit, a
  // typo): it was ignored. A failing run may stop before its last inputs, so only a whole one says.
  if (outcome.passed && !outcome.not_applicable && !outcome.unread_inputs.empty()) {
    const std::string& name = outcome.unread_inputs.front();
    throw CaseFileError("the case has an input '" + (name.size() > 64 ? name.substr(0, 64) + "..." : name) + "', which property " +
                        saved.property + " never reads; remove it");
  }
  return outcome;
}

CorpusSave save_to_corpus(const fs::path& corpus, const SavedCase& saved) {
  const fs::path folder = corpus / "cases";
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) throw fixtures::WriteFailure("cannot create the corpus folder " + folder.string() + ": " + error.message());
  CorpusSave result;
  result.path = folder / case_file_name(saved);
  if (fs::exists(result.path, error)) return result;  // the same case (same fingerprint) is kept once
  // A name in another encoding than UTF-8 (an implementation's path) becomes U+FFFD, not a failure.
  fixtures::write_file_atomically(result.path.string(),
                                  saved_case_json(saved).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  result.added = true;
  return result;
}

std::vector<fs::path> corpus_case_files(const fs::path& path) {
  std::error_code error;
  if (fs::is_regular_file(path, error)) return {path};
  if (!fs::is_directory(path, error)) throw CaseFileError(path.string() + ": " + fixtures::not_a_regular_file(path));
  const fs::path folder = fs::is_directory(path / "cases", error) ? path / "cases" : path;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    // Temporary files of an interrupted save start with '.'; they are not cases.
    if (entry.path().extension() != ".json" || name.starts_with(".")) continue;
    // A FIFO or a link to a device named *.json was passed over without a word; given alone it is refused.
    if (const std::string kind = fixtures::not_a_regular_file(entry.path()); !kind.empty()) {
      throw CaseFileError(entry.path().string() + ": " + kind + "; move it out of the corpus");
    }
    files.push_back(entry.path());
  }
  if (error) throw CaseFileError(folder.string() + ": cannot be listed (" + error.message() + ")");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace bitparity::properties
