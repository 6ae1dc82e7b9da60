// Code maps from files: JSON lists of fp32 bit patterns, and F32 tensors in safetensors files.
#include "bitparity/reports/code_map_file.hpp"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/json_document.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/text_file.hpp"
#if BITPARITY_HAS_MPI
#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/safetensors.hpp"
#endif

namespace bitparity::reports {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A name usable on the command line: the file's stem with anything else replaced by '-'.
std::string map_name_from(const std::string& text) {
  std::string name;
  for (char c : text) name += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-') ? c : '-';
  return name.substr(0, 64);
}

int bits_for_count(std::size_t count, const std::string& where) {
  if (count == 256) return 8;
  if (count == 16) return 4;
  throw UsageError(where + " holds " + std::to_string(count) +
                   " values; a code map has 256 (8-bit) or 16 (4-bit) fp32 values");
}

std::uint32_t bit_pattern(const nlohmann::json& value, std::size_t index, const std::string& where) {
  const std::string at = where + ": value " + std::to_string(index);
  if (value.is_number_unsigned()) {
    const auto bits = value.get<std::uint64_t>();
    if (bits > 0xFFFFFFFFull) throw UsageError(at + " is not a 32-bit pattern");
    return static_cast<std::uint32_t>(bits);
  }
  if (value.is_string()) {
    const auto text = value.get<std::string>();
    if (text.size() == 10 && text.rfind("0x", 0) == 0 && text.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos) {
      return static_cast<std::uint32_t>(std::stoul(text.substr(2), nullptr, 16));
    }
  }
  throw UsageError(at + " is " + value.dump() +
                   "; write each fp32 bit pattern as a number or as a string of \"0x\" and exactly 8 hex digits, "
                   "\"0x3f800000\" (a float's value, such as Python's hex() prints, is not a bit pattern)");
}

CodeMap read_json_map(const std::string& path) {
  const std::string text = read_text_file(path, 16 * kMiB, "a code map (a JSON list of 256 or 16 fp32 bit patterns)");
  nlohmann::json document;
  try {
    document = properties::parse_json_document(text);
  } catch (const nlohmann::json::other_error& e) {
    throw UsageError(path + ": " + json_error_text(e) + "; a code map is a list of fp32 bit patterns");
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + " is not valid JSON (" + properties::json_error_message(e) + "); a code map is a list of fp32 bit patterns");
  }
  CodeMap map;
  map.name = map_name_from(std::filesystem::path(path).stem().string());
  nlohmann::json values = document;
  if (document.is_object()) {
    for (const auto& [key, _] : document.items()) {
      if (key != "name" && key != "bits" && key != "values") {
        throw UsageError(path + ": unknown key '" + key + "'; a code map object has \"name\", \"bits\" and \"values\"");
      }
    }
    if (document.contains("name")) {
      if (!document["name"].is_string()) throw UsageError(path + ": \"name\" must be a string");
      map.name = document["name"].get<std::string>();
    }
    values = document.value("values", nlohmann::json());
  }
  if (!values.is_array()) throw UsageError(path + " holds no list of values; write a JSON list of 256 or 16 fp32 bit patterns");
  map.bits = bits_for_count(values.size(), path);
  if (document.is_object() && document.contains("bits") &&
      (!document["bits"].is_number_integer() || document["bits"].get<std::int64_t>() != map.bits)) {
    const std::string said = document["bits"].is_number_integer() ? document["bits"].dump() : "something other than a number";
    throw UsageError(path + ": \"bits\" says " + said + " but the list holds " + std::to_string(values.size()) + " values; write \"bits\": " +
                     std::to_string(map.bits) + " or leave it out");
  }
  for (std::size_t i = 0; i < values.size(); ++i) map.values.push_back(float_from_bits(bit_pattern(values[i], i, path)));
  map.provenance = "read from " + path;
  return map;
}

CodeMap read_safetensors_map(const std::string& path, const std::string& tensor) {
#if BITPARITY_HAS_MPI
  distributed::SafetensorsFile file;
  try {
    file = distributed::read_safetensors_header(path);  // the map's bytes only, not the whole file
  } catch (const Error& e) {
    throw UsageError(e.message());
  }
  std::vector<std::string> candidates;
  for (const auto& [name, entry] : file.tensors) {
    if (entry.dtype == "F32" && (entry.numel() == 256 || entry.numel() == 16)) candidates.push_back(name);
  }
  std::string chosen = tensor;
  if (chosen.empty()) {
    if (candidates.size() != 1) {
      std::string list;
      for (const auto& name : candidates) list += (list.empty() ? "" : ", ") + name;
      throw UsageError(path + (candidates.empty() ? " holds no F32 tensor of 256 or 16 elements to read as a code map"
                                                  : " holds several code-map-sized tensors (" + list +
                                                        "); name one as " + path + ":NAME"));
    }
    chosen = candidates.front();
  }
  if (!file.tensors.contains(chosen)) throw UsageError(path + " holds no tensor '" + chosen + "'");
  const auto& entry = file.tensors.at(chosen);
  if (entry.dtype != "F32") throw UsageError(path + ":" + chosen + " is " + entry.dtype + "; a code map is an F32 tensor");
  CodeMap map;
  map.bits = bits_for_count(static_cast<std::size_t>(entry.numel()), path + ":" + chosen);
  std::vector<std::uint8_t> bytes;
  try {
    bytes = distributed::read_safetensors_bytes(file, chosen);
  } catch (const Error& e) {
    throw UsageError(e.message());
  }
  // A file that stores CRC-32s (a bitparity checkpoint) is checked as inspect checks it: a flipped
  // bit of a map ran as a map of its own.
  if (const auto stored = file.metadata.find("crc32"); stored != file.metadata.end()) {
    nlohmann::json checksums;
    try {
      checksums = properties::parse_json_document(stored->second);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(path + ": its \"crc32\" is not valid JSON (" + json_error_text(e) + "); restore the file from a good copy");
    }
    if (checksums.is_object() && checksums.contains(chosen)) {
      const std::string computed = distributed::tensor_crc32_hex(bytes);
      const std::string expected = checksums.at(chosen).is_string() ? distributed::stored_checksum(checksums.at(chosen).get<std::string>()) : "";
      if (expected != computed) {
        throw UsageError(path + ":" + chosen + " does not match its stored CRC-32 (" + (expected.empty() ? "none readable" : expected) +
                         ", the bytes give " + computed + "); restore the file from a good copy");
      }
    }
  }
  for (std::int64_t i = 0; i < entry.numel(); ++i) {
    std::uint32_t bits = 0;
    for (int b = 3; b >= 0; --b) bits = (bits << 8) | bytes[static_cast<std::size_t>(i * 4 + b)];  // little-endian
    map.values.push_back(float_from_bits(bits));
  }
  map.name = map_name_from(std::filesystem::path(path).stem().string() + "." + chosen);
  map.provenance = "read from " + path + ", tensor " + chosen;
  return map;
#else
  (void)tensor;
  throw UsageError("reading " + path + " needs the safetensors reader, built with Open MPI; install it (scripts/install-deps) "
                   "or give the map as a JSON list of fp32 bit patterns");
#endif
}

}  // namespace

CodeMap read_code_map_file(const std::string& spec) {
  std::string path = spec, tensor;
  const auto marker = spec.find(".safetensors:");
  if (marker != std::string::npos) {
    path = spec.substr(0, marker + 12);
    tensor = spec.substr(marker + 13);
  }
  // With error codes: a name too long or a loop of links is bad input too (it escaped as exit 5).
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error && error != std::errc::no_such_file_or_directory) throw UsageError("code map file " + path + ": " + error.message());
  if (!std::filesystem::exists(status)) throw UsageError("no code map file " + path);
  if (!std::filesystem::is_regular_file(status)) {
    throw UsageError("code map file " + path + " is not a regular file (a folder, a device or a pipe); give a *.json or *.safetensors file");
  }
  if (ends_with(path, ".safetensors")) return read_safetensors_map(path, tensor);
  if (ends_with(path, ".json")) return read_json_map(path);
  throw UsageError("cannot tell the format of " + path + "; name a code map file *.json or *.safetensors[:TENSOR]");
}

QuantFormat resolve_code_map(const std::string& spec) {
  std::error_code exists_error;  // a name that cannot be a file is an unknown map's name
  for (const auto& info : quant_formats()) {
    if (info.name == spec) return info.format;
  }
  if (!ends_with(spec, ".json") && spec.find(".safetensors") == std::string::npos && !std::filesystem::exists(spec, exists_error)) {
    std::string names;
    for (const auto& info : quant_formats()) names += (names.empty() ? "" : ", ") + std::string(info.name);
    throw UsageError("unknown map '" + spec + "'; give a map's name (" + names + ") or a file *.json or *.safetensors[:TENSOR]");
  }
  const CodeMap map = read_code_map_file(spec);
  try {
    return register_code_map(map);
  } catch (const Error& e) {
    throw UsageError(e.message() + " (in " + spec + ")");
  }
}

std::optional<QuantFormat>& state_map_slot(StateMaps& maps, const CodeMap& map) {
  const bool has_negative = map.has_negative_code();
  return has_negative ? maps.signed_states : maps.nonnegative_states;
}

StateMaps state_maps_option(const std::vector<std::string>& specs) {
  StateMaps maps;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string& spec = specs[i];
    if (std::find(specs.begin(), specs.begin() + static_cast<std::ptrdiff_t>(i), spec) != specs.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw UsageError("--map " + spec + " is given twice; give each map once");
    }
    const QuantFormat format = resolve_code_map(spec);
    const CodeMap& map = code_map(format);
    if (map.bits != 8) {
      throw UsageError("--map " + spec + ": '" + map.name + "' is a " + std::to_string(map.bits) +
                       "-bit map; 8-bit optimizer states take 8-bit maps");
    }
    if (!map.has_positive_code()) {
      throw UsageError("--map " + spec + ": '" + map.name + "' has no code above 0, and every 8-bit state takes positive "
                       "values; give a map whose largest code is positive");
    }
    std::optional<QuantFormat>& slot = state_map_slot(maps, map);
    if (slot) {
      const bool signed_slot = &slot == &maps.signed_states;
      throw UsageError("--map " + spec + ": 8-bit states take one map with negative values (momenta) and one without (second "
                       "moments), and '" + std::string(quant_format_info(*slot).name) + "' is already the one " +
                       (signed_slot ? "with" : "without") + "; give one of each");
    }
    slot = format;
  }
  return maps;
}

std::string describe_state_maps(const StateMaps& maps) {
  std::string text;
  if (maps.signed_states) text += " signed=" + std::string(quant_format_info(*maps.signed_states).name);
  if (maps.nonnegative_states) text += " non-negative=" + std::string(quant_format_info(*maps.nonnegative_states).name);
  return text.empty() ? text : "maps" + text;
}

}  // namespace bitparity::reports
