#include "bitparity/distributed/safetensors.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/json_document.hpp"

namespace bitparity::distributed {

namespace {

using nlohmann::json;

struct DTypeSize {
  std::string_view name;
  std::int64_t bytes;
};
constexpr DTypeSize kDTypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
                                 {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
                                 {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};

[[noreturn]] void refuse(const std::string& source, const std::string& what) {
  throw Error(ErrorCode::invalid_argument, "'" + source + "' is not a valid safetensors file: " + what);
}

// A header's bytes as a message shows them: a byte outside printable ASCII (a name that is not
// UTF-8 put a raw 0xFF into the error line) as \xNN.
std::string escaped(const std::string& text) {
  std::string shown;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      shown += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      shown += hex;
    }
  }
  return shown;
}

// Finds repeated keys and nesting deeper than the format has (the DOM parser keeps the last of
// repeated keys silently). Values are checked on the DOM afterwards.
class HeaderShape : public nlohmann::json_sax<json> {
 public:
  std::string problem;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return enter(true); }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(false); }
  bool end_array() override { return leave(); }
  bool key(string_t& name) override {
    if (!keys_.back().insert(name).second) {
      problem = "the header repeats the key \"" + name + "\"";
      return false;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    problem = "the header is not valid JSON (byte " + std::to_string(position) + "): " + properties::json_error_message(e);
    return false;
  }

 private:
  bool enter(bool object) {
    if (keys_.size() >= 3) {  // root object, tensor object, shape or offsets array
      problem = "the header nests deeper than safetensors allows";
      return false;
    }
    keys_.emplace_back();
    (void)object;
    return true;
  }
  bool leave() {
    keys_.pop_back();
    return true;
  }
  std::vector<std::set<std::string>> keys_;
};

std::uint64_t read_u64_le(const std::uint8_t* bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

// numel * element bytes, or nullopt-like -1 on overflow past 2^63.
std::int64_t checked_bytes(const std::vector<std::int64_t>& shape, std::int64_t element_bytes) {
  std::int64_t total = element_bytes;
  for (std::int64_t extent : shape) {
    if (extent != 0 && total > std::numeric_limits<std::int64_t>::max() / extent) return -1;
    total *= extent;
  }
  return total;
}

SafetensorsEntry parse_entry(const std::string& source, const std::string& name, const json& value) {
  const std::string at = "tensor \"" + name + "\"";
  if (!value.is_object()) refuse(source, at + " is not an object");
  for (const auto& [key, _] : value.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") refuse(source, at + " has an unknown field \"" + key + "\"");
  }
  if (!value.contains("dtype") || !value["dtype"].is_string()) refuse(source, at + " has no dtype string");
  if (!value.contains("shape") || !value["shape"].is_array()) refuse(source, at + " has no shape array");
  if (!value.contains("data_offsets") || !value["data_offsets"].is_array() || value["data_offsets"].size() != 2) {
    refuse(source, at + " has no data_offsets [begin, end]");
  }
  SafetensorsEntry entry;
  entry.dtype = value["dtype"].get<std::string>();
  if (safetensors_dtype_bytes(entry.dtype) == 0) refuse(source, at + " has an unknown dtype \"" + entry.dtype + "\"");
  for (const json& extent : value["shape"]) {
    if (!extent.is_number_unsigned() || extent.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      refuse(source, at + " has a shape entry that is not a whole number >= 0: " + extent.dump());
    }
    entry.shape.push_back(extent.get<std::int64_t>());
  }
  for (const json& offset : value["data_offsets"]) {
    if (!offset.is_number_unsigned()) refuse(source, at + " has a data offset that is not a whole number >= 0: " + offset.dump());
  }
  entry.begin = value["data_offsets"][0].get<std::uint64_t>();
  entry.end = value["data_offsets"][1].get<std::uint64_t>();
  if (entry.end < entry.begin) refuse(source, at + " ends (" + std::to_string(entry.end) + ") before it begins (" + std::to_string(entry.begin) + ")");
  const std::int64_t bytes = checked_bytes(entry.shape, safetensors_dtype_bytes(entry.dtype));
  if (bytes < 0 || static_cast<std::uint64_t>(bytes) != entry.end - entry.begin) {
    refuse(source, at + " has " + std::to_string(entry.end - entry.begin) + " bytes in data_offsets, but its shape and dtype need " +
                       (bytes < 0 ? std::string("more than 2^63") : std::to_string(bytes)));
  }
  return entry;
}

}  // namespace

std::int64_t SafetensorsEntry::numel() const {
  std::int64_t n = 1;
  for (std::int64_t extent : shape) n *= extent;
  return n;
}

const SafetensorsEntry& SafetensorsFile::entry(const std::string& name) const {
  const auto found = tensors.find(name);
  if (found == tensors.end()) throw Error(ErrorCode::invalid_argument, "'" + source + "' holds no tensor \"" + name + "\"");
  return found->second;
}

std::span<const std::uint8_t> SafetensorsFile::bytes(const std::string& name) const {
  const SafetensorsEntry& e = entry(name);
  if (contents.size() < 8 + header_bytes + e.end) {
    throw Error(ErrorCode::invalid_argument, "'" + source + "' was read without its tensors (read_safetensors_header); read \"" + name +
                                                 "\" with read_safetensors_bytes");
  }
  return std::span<const std::uint8_t>(contents).subspan(static_cast<std::size_t>(8 + header_bytes + e.begin),
                                                        static_cast<std::size_t>(e.end - e.begin));
}

std::int64_t safetensors_dtype_bytes(std::string_view dtype) {
  for (const DTypeSize& known : kDTypes) {
    if (known.name == dtype) return known.bytes;
  }
  return 0;
}

const char* safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::u8: return "U8";
    case DType::packed4: break;
  }
  throw Error(ErrorCode::dtype_mismatch, std::string("safetensors has no dtype for ") + dtype_name(dtype) + "; store it as U8 bytes");
}

namespace {

// The header length N of a file of `file_bytes` whose first 8 bytes are `first`, checked.
std::uint64_t header_length(const std::uint8_t* first, std::uint64_t file_bytes, const std::string& source) {
  if (file_bytes < 8) {
    refuse(source, "it has " + std::to_string(file_bytes) + " bytes, fewer than the 8-byte header length (truncated?)");
  }
  const std::uint64_t n = read_u64_le(first);
  if (n > kSafetensorsMaxHeaderBytes) refuse(source, "its header length " + std::to_string(n) + " is over the 100 MB limit");
  if (n > file_bytes - 8) {
    refuse(source, "its header length " + std::to_string(n) + " reaches past the end of the file (" +
                       std::to_string(file_bytes) + " bytes; truncated?)");
  }
  return n;
}

// The header in `prefix` (the file's first 8 + N bytes at least), validated against a file of
// `file_bytes`: everything parse_safetensors checks, without the tensors' bytes.
SafetensorsFile parse_header(std::span<const std::uint8_t> prefix, std::uint64_t file_bytes, const std::string& source) {
  SafetensorsFile file;
  file.source = source;
  const std::uint64_t n = header_length(prefix.data(), file_bytes, source);
  if (n < 2 || prefix[8] != '{') refuse(source, "its header does not start with '{'");
  const auto* header_begin = reinterpret_cast<const char*>(prefix.data() + 8);
  const std::string_view header(header_begin, static_cast<std::size_t>(n));
  // nlohmann reads a NUL byte as the end of its input, so a header padded with NULs (or cut by one)
  // would parse; JSON holds none, and safetensors pads with spaces.
  if (const auto nul = header.find('\0'); nul != std::string_view::npos) {
    refuse(source, "its header holds a NUL byte at byte " + std::to_string(8 + nul) + " (safetensors pads a header with spaces)");
  }
  HeaderShape shape;
  if (!json::sax_parse(header, &shape, json::input_format_t::json, /*strict=*/true)) refuse(source, escaped(shape.problem));
  const json root = json::parse(header);
  if (!root.is_object()) refuse(source, "its header is not a JSON object");
  const std::uint64_t data_bytes = file_bytes - 8 - n;
  std::vector<std::pair<std::string, SafetensorsEntry>> by_offset;
  for (const auto& [name, value] : root.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) refuse(source, "its __metadata__ is not an object of strings");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) refuse(source, "its __metadata__ entry \"" + key + "\" is not a string");
        file.metadata[key] = text.get<std::string>();
      }
      continue;
    }
    if (name.empty()) refuse(source, "a tensor has an empty name");
    by_offset.emplace_back(name, parse_entry(source, name, value));
  }
  // The tensors must tile the data exactly: no overlap, no hole, nothing past the end.
  std::sort(by_offset.begin(), by_offset.end(), [](const auto& a, const auto& b) {
    return a.second.begin != b.second.begin ? a.second.begin < b.second.begin : a.second.end < b.second.end;
  });
  std::uint64_t covered = 0;
  for (const auto& [name, entry] : by_offset) {
    if (entry.begin != covered) {
      refuse(source, "tensor \"" + name + "\" starts at byte " + std::to_string(entry.begin) + " of the data, but the tensors before it end at " +
                         std::to_string(covered) + (entry.begin < covered ? " (overlap)" : " (a hole)"));
    }
    if (entry.end > data_bytes) {
      refuse(source, "tensor \"" + name + "\" ends at byte " + std::to_string(entry.end) + " of the data, which has " +
                         std::to_string(data_bytes) + " (truncated?)");
    }
    covered = entry.end;
    file.tensors.emplace(name, entry);
  }
  if (covered != data_bytes) {
    refuse(source, "the tensors cover " + std::to_string(covered) + " bytes of data, but the file holds " + std::to_string(data_bytes) +
                       " after the header");
  }
  file.header_bytes = n;
  return file;
}

// A regular file, or a refusal that says what the path is instead.
void check_regular_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw Error(ErrorCode::invalid_argument, "'" + path + "' is a folder; give the path of a .safetensors file in it");
  }
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error)) {
    throw Error(ErrorCode::invalid_argument, "'" + path + "' is not a regular file (a device or a pipe); give the path of a .safetensors file");
  }
}

}  // namespace

SafetensorsFile parse_safetensors(std::vector<std::uint8_t> contents, const std::string& source) {
  SafetensorsFile file = parse_header(contents, contents.size(), source);
  file.contents = std::move(contents);
  return file;
}

SafetensorsFile read_safetensors_header(const std::string& path) {
  check_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::invalid_argument, "cannot open '" + path + "': " + std::strerror(errno) + "; give the path of a .safetensors file");
  std::error_code error;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, error);
  if (error) throw Error(ErrorCode::invalid_argument, "cannot read the size of '" + path + "': " + error.message());
  std::vector<std::uint8_t> prefix(8, 0);
  in.read(reinterpret_cast<char*>(prefix.data()), static_cast<std::streamsize>(std::min<std::uintmax_t>(8, file_bytes)));
  const std::uint64_t n = header_length(prefix.data(), file_bytes, path);
  prefix.resize(static_cast<std::size_t>(8 + n));
  in.read(reinterpret_cast<char*>(prefix.data() + 8), static_cast<std::streamsize>(n));
  if (!in) throw Error(ErrorCode::invalid_argument, "cannot read the header of '" + path + "' (the file changed while it was read?)");
  return parse_header(prefix, file_bytes, path);
}

std::vector<std::uint8_t> read_safetensors_bytes(const SafetensorsFile& header, const std::string& name) {
  const SafetensorsEntry& e = header.entry(name);
  std::ifstream in(header.source, std::ios::binary);
  if (!in) throw Error(ErrorCode::invalid_argument, "cannot open '" + header.source + "': " + std::strerror(errno));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(e.end - e.begin));
  in.seekg(static_cast<std::streamoff>(8 + header.header_bytes + e.begin));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) throw Error(ErrorCode::invalid_argument, "cannot read tensor \"" + name + "\" of '" + header.source + "' (the file changed while it was read?)");
  return bytes;
}

void read_safetensors_pieces(const SafetensorsFile& file, const std::string& name,
                             const std::function<void(std::span<const std::uint8_t>)>& take, std::size_t piece_bytes) {
  const SafetensorsEntry& e = file.entry(name);
  if (!file.contents.empty()) {
    const std::span<const std::uint8_t> all = file.bytes(name);
    for (std::size_t at = 0; at < all.size(); at += piece_bytes) take(all.subspan(at, std::min(piece_bytes, all.size() - at)));
    return;
  }
  std::ifstream in(file.source, std::ios::binary);
  if (!in) throw Error(ErrorCode::invalid_argument, "cannot open '" + file.source + "': " + std::strerror(errno));
  in.seekg(static_cast<std::streamoff>(8 + file.header_bytes + e.begin));
  std::vector<std::uint8_t> piece(static_cast<std::size_t>(std::min<std::uint64_t>(piece_bytes, e.end - e.begin)));
  for (std::uint64_t left = e.end - e.begin; left > 0;) {
    const auto size = static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), left));
    in.read(reinterpret_cast<char*>(piece.data()), static_cast<std::streamsize>(size));
    if (!in) throw Error(ErrorCode::invalid_argument, "cannot read tensor \"" + name + "\" of '" + file.source + "' (the file changed while it was read?)");
    take(std::span<const std::uint8_t>(piece.data(), size));
    left -= size;
  }
}

SafetensorsFile read_safetensors(const std::string& path) {
  check_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::invalid_argument, "cannot open '" + path + "': " + std::strerror(errno) + "; give the path of a .safetensors file");
  std::vector<std::uint8_t> contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(ErrorCode::invalid_argument, "cannot read '" + path + "': " + std::strerror(errno));
  return parse_safetensors(std::move(contents), path);
}

std::string serialize_safetensors(const std::vector<SafetensorsTensor>& tensors, const std::map<std::string, std::string>& metadata) {
  std::vector<const SafetensorsTensor*> ordered;
  for (const SafetensorsTensor& t : tensors) ordered.push_back(&t);
  std::sort(ordered.begin(), ordered.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const SafetensorsTensor& t = *ordered[i];
    if (t.name.empty() || t.name == "__metadata__" || (i > 0 && ordered[i - 1]->name == t.name)) {
      throw Error(ErrorCode::invalid_argument, "cannot write a safetensors tensor named \"" + t.name + "\" (empty, reserved or repeated)");
    }
    const std::int64_t size = safetensors_dtype_bytes(t.dtype);
    const std::int64_t bytes = size == 0 ? -1 : checked_bytes(t.shape, size);
    if (bytes < 0 || static_cast<std::uint64_t>(bytes) != t.bytes.size()) {
      throw Error(ErrorCode::invalid_argument, "tensor \"" + t.name + "\": " + std::to_string(t.bytes.size()) +
                                                   " bytes do not match dtype " + t.dtype + " and its shape");
    }
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  out += text;
  out.reserve(out.size() + offset);
  for (const SafetensorsTensor* t : ordered) out.append(reinterpret_cast<const char*>(t->bytes.data()), t->bytes.size());
  return out;
}

}  // namespace bitparity::distributed
