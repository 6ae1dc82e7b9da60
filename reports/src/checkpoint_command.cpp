// `bitparity checkpoint inspect FILE`: what a checkpoint holds (header, tensors, checksums, layout),
// checked as strictly as loading it would be. A file that is not valid safetensors is refused
// (exit 2); a bitparity checkpoint whose tensors do not match their CRC-32 fails (exit 1).
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/result_file.hpp"
#if BITPARITY_HAS_MPI
#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/safetensors.hpp"
#include "bitparity/kernels/code_map.hpp"
#include "bitparity/properties/json_document.hpp"
#endif

namespace bitparity::reports {

void add_checkpoint_command(CLI::App& app, CheckpointCommand& command) {
  auto* checkpoint = app.add_subcommand("checkpoint", "checkpoints written by `sharded --property P11` (safetensors)");
  checkpoint->require_subcommand(1);
  auto* inspect = checkpoint->add_subcommand(
      "inspect", "print a safetensors file's header, tensors, checksums and layout; exit 1 when a checksum does not match");
  inspect->add_option("FILE", command.file, "a .safetensors file (universal.safetensors, rank-RRRRR-of-WWWWW.safetensors)")->required();
  inspect->add_option("--json", command.json, "also write what was found as JSON (atomically)")
      ->each([&command](const std::string&) { command.json_given = true; });
}

#if BITPARITY_HAS_MPI
namespace {

// A metadata text as JSON, or discarded (shown as edited) when it is not JSON or repeats a key: the
// loader refuses both, and inspect shows what it can.
nlohmann::json parsed_or_discarded(const std::string& text) {
  try {
    return properties::parse_json_document(text);
  } catch (const nlohmann::json::exception&) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

// The registered map whose values these are, or "a map of its own" (loading registers it).
std::string known_map_name(const nlohmann::json& values) {
  std::vector<float> floats;
  for (const auto& v : values) {
    if (!v.is_number()) return "not a list of numbers";
    floats.push_back(static_cast<float>(v.get<double>()));
  }
  const auto format = find_code_map(8, floats);
  return format ? "equal to " + std::string(quant_format_info(*format).name) : "a map of its own";
}

// How a tensor's bytes compare with the CRC-32 the checkpoint stores for it.
std::string crc_check(const nlohmann::json& checksums, const std::string& name, const std::string& computed) {
  if (!checksums.contains(name)) return "NO CRC STORED";
  const nlohmann::json& entry = checksums.at(name);
  const std::string stored = entry.is_string() ? distributed::stored_checksum(entry.get<std::string>()) : std::string();
  if (stored.empty()) return "BAD CRC " + checksums.at(name).dump() + " (not 8 hex digits)";
  return stored == computed ? "ok" : "MISMATCH (stored " + stored + ")";
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

int run_checkpoint_command(const CheckpointCommand& command) {
  if (command.json_given) {
    check_result_apart_from_input("--json", command.json, command.file, "the checkpoint");
    check_result_path("--json", command.json);
  }
  // The header, then each tensor's bytes in pieces: a checkpoint of gigabytes is checked in a few MiB.
  const distributed::SafetensorsFile file = distributed::read_safetensors_header(command.file);
  std::error_code size_error;
  const std::uint64_t file_bytes = std::filesystem::file_size(command.file, size_error);
  if (size_error) throw UsageError("cannot read the size of '" + command.file + "': " + size_error.message());
  const std::map<std::string, std::string> computed = distributed::tensor_checksums(file);
  // bitparity's by its format, or by the checksums only bitparity writes: one flipped byte of "format"
  // turned every check off (exit 0); the header's own CRC-32 covers the format, so that edit is caught.
  const bool ours = (file.metadata.count("format") != 0 && file.metadata.at("format") == distributed::kCheckpointFormat) ||
                    file.metadata.count(distributed::kHeaderChecksumKey) != 0;
  nlohmann::json checksums = nlohmann::json::object();
  std::vector<std::string> bad, strays;  // tensors that do not match; CRCs of tensors the file lacks
  const bool no_checksums = ours && file.metadata.count("crc32") == 0;  // every tensor unchecked: a finding, not a crash
  // A "crc32" that is not an object of checksums checks nothing either: a finding (exit 1), as a missing one.
  const bool malformed_checksums = ours && !no_checksums && !parsed_or_discarded(file.metadata.at("crc32")).is_object();
  if (no_checksums || malformed_checksums) {
    for (const auto& [name, entry] : file.tensors) bad.push_back(name);
  } else if (ours) {
    checksums = parsed_or_discarded(file.metadata.at("crc32"));
    bad = distributed::checksum_mismatches(file, computed);  // also refuses a "crc32" that is not an object of checksums
    for (const auto& [name, entry] : checksums.items()) {
      if (file.tensors.count(name) == 0) strays.push_back(name);
    }
  }
  // The header's own checksum covers what the tensor checksums do not: step, hyperparameters, layout.
  const std::string header_problem = ours ? distributed::header_checksum_problem(file) : std::string();
  // A header edited and its CRC-32 recomputed passes the checksum: its fields are read as a load reads them.
  const std::string field_problem = ours && header_problem.empty() ? distributed::header_field_problem(file) : std::string();
  std::printf("checkpoint %s: %zu bytes, header %llu bytes, %zu tensors\n", printable_text(command.file).c_str(), static_cast<std::size_t>(file_bytes),
              static_cast<unsigned long long>(file.header_bytes), file.tensors.size());
  if (ours) {
    std::printf("  header CRC-32 %s: %s\n", distributed::header_checksum(file).c_str(),
                header_problem.empty() ? "ok" : ("MISMATCH: " + printable_text(header_problem)).c_str());
  }
  if (ours) {
    const auto& m = file.metadata;
    const auto value = [&](const char* key) { return m.count(key) ? printable_text(m.at(key)) : std::string("?"); };
    std::printf("  %s, %s form: %s with %s states (block size %s), step %s\n", value("format").c_str(), value("form").c_str(),
                value("optimizer").c_str(), value("states").c_str(), value("blocksize").c_str(), value("step").c_str());
    std::printf("  saved by a world of %s rank(s), layout %s%s\n", value("world_size").c_str(), value("layout").c_str(),
                m.count("rank") ? (", this file rank " + value("rank")).c_str() : "");
    const nlohmann::json groups = parsed_or_discarded(m.count("groups") ? m.at("groups") : std::string("[]"));
    if (!groups.is_array()) std::printf("  groups: not a JSON list (the metadata was edited; a resume refuses it)\n");
    for (const auto& group : groups.is_array() ? groups : nlohmann::json::array()) {
      if (!group.is_object()) {
        std::printf("  group %s: not an object (the metadata was edited; a resume refuses it)\n", group.dump().c_str());
        continue;
      }
      const auto field = [&](const char* key) {
        return group.contains(key) && group.at(key).is_string() ? printable_text(group.at(key).get<std::string>()) : std::string("?");
      };
      const nlohmann::json parameters = group.value("parameters", nlohmann::json::array());
      std::printf("  group %s: %zu parameter(s), param %s, grad %s, hyperparameters %s\n", group.value("id", nlohmann::json()).dump().c_str(),
                  parameters.is_array() ? parameters.size() : std::size_t{0}, field("param_dtype").c_str(), field("grad_dtype").c_str(),
                  group.value("hyperparameters", nlohmann::json()).dump().c_str());
    }
    if (m.count("code_maps")) {
      const nlohmann::json maps = parsed_or_discarded(m.at("code_maps"));
      if (maps.is_object()) {
        for (const auto& [state, values] : maps.items()) {
          std::printf("  code map of %s: %zu values, %s\n", printable_text(state).c_str(), values.size(), known_map_name(values).c_str());
        }
      }
    }
  } else {
    std::printf("  not a bitparity checkpoint (no \"format\": %s): tensors listed, no checksums to check\n",
                distributed::kCheckpointFormat);
    for (const auto& [key, text] : file.metadata) {
      std::printf("  metadata %s = %s\n", printable_text(key).c_str(), printable_text(text).c_str());
    }
  }
  std::printf("  %-40s %-5s %-14s %12s %-9s %s\n", "tensor", "dtype", "shape", "bytes", "crc32", "check");
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& [name, entry] : file.tensors) {
    const std::string& crc = computed.at(name);
    const std::string check = !ours ? "-" : crc_check(checksums, name, crc);
    std::printf("  %-40s %-5s %-14s %12llu %-9s %s\n", printable_text(name).c_str(), printable_text(entry.dtype).c_str(), shape_text(entry.shape).c_str(),
                static_cast<unsigned long long>(entry.end - entry.begin), crc.c_str(), check.c_str());
    nlohmann::json t = {{"name", name}, {"dtype", entry.dtype}, {"shape", entry.shape}, {"data_offsets", {entry.begin, entry.end}},
                        {"crc32", crc}, {"check", check}};
    if (checksums.is_object() && checksums.contains(name)) t["crc32_stored"] = checksums[name];
    tensors.push_back(t);
  }
  for (const auto& name : strays) {
    std::printf("  a CRC-32 is stored for tensor '%s', which the file does not hold\n", printable_text(name).c_str());
  }
  if (ours) {
    std::string summary = no_checksums ? "the header stores no CRC-32s (no \"crc32\"), so no tensor can be checked: the header was edited, "
                                         "or the file was not written by bitparity; a resume refuses it"
                          : malformed_checksums ? "the header's \"crc32\" is not an object of tensor checksums, so no tensor can be "
                                                  "checked: the header was edited; a resume refuses it"
                          : bad.empty() ? "every tensor matches its CRC-32"
                                        : std::to_string(bad.size()) + " tensor(s) do not match a stored CRC-32 (check column): the file is corrupt or edited";
    if (!strays.empty()) summary += "; " + std::to_string(strays.size()) + " CRC-32(s) stored for tensors the file lacks";
    if (!header_problem.empty()) {
      summary += "; the header does not match its header CRC-32, so its step, hyperparameters and layout cannot be trusted "
                 "(a resume refuses it)";
    }
    if (!field_problem.empty()) summary += "; its header holds a field a resume refuses: " + printable_text(field_problem);
    std::printf("summary: %s\n", summary.c_str());
  }
  if (!command.json.empty()) {
    nlohmann::json metadata = nlohmann::json::object();
    for (const auto& [key, text] : file.metadata) metadata[key] = text;
    const nlohmann::json document = {{"schema", "bitparity.checkpoint-inspect/1"}, {"file", command.file},
                                     {"bytes", file_bytes},           {"header_bytes", file.header_bytes},
                                     {"bitparity_checkpoint", ours},           {"metadata", metadata},
                                     {"tensors", tensors},                     {"corrupt_tensors", bad},
                                     {"checksums_of_absent_tensors", strays},
                                     {"header_checksum", {{"computed", ours ? distributed::header_checksum(file) : std::string()},
                                                          {"problem", header_problem}}},
                                     {"header_field_problem", field_problem}};
    write_result_file(command.json, json_file_text(document));
  }
  return bad.empty() && strays.empty() && header_problem.empty() && field_problem.empty() ? exit_passed : exit_failed;
}
#else
int run_checkpoint_command(const CheckpointCommand&) {
  throw UsageError("this bitparity was built without MPI, which its checkpoints come with; install Open MPI (./scripts/install-deps) and rebuild");
}
#endif

}  // namespace bitparity::reports
