#pragma once
// A small, strict reader and writer of the safetensors format (huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON ({"__metadata__": {str: str}, NAME: {"dtype",
// "shape", "data_offsets"}}), then the tensors' bytes. The reader refuses, with a message that says
// what is wrong, anything the format does not allow: a length past the end, invalid or duplicated
// JSON keys, unknown dtypes, sizes that disagree with the shape, offsets that overlap, leave holes
// or reach out of the data. Nothing is read out of range.
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bitparity/kernels/dtype.hpp"

namespace bitparity::distributed {

inline constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;  // the reference's limit

struct SafetensorsEntry {
  std::string dtype;                 // "F32", "BF16", "U8", ...
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // data_offsets, relative to the first byte after the header
  std::int64_t numel() const;
};

class SafetensorsFile {
 public:
  std::string source;  // the path, for messages
  std::map<std::string, std::string> metadata;
  std::map<std::string, SafetensorsEntry> tensors;
  std::uint64_t header_bytes = 0;
  std::vector<std::uint8_t> contents;  // the whole file (empty from read_safetensors_header)
  // A tensor's bytes; throws Error naming the file for a name it does not hold.
  std::span<const std::uint8_t> bytes(const std::string& name) const;
  const SafetensorsEntry& entry(const std::string& name) const;
};

// Parses and validates a whole file held in memory. Throws Error(invalid_argument) that names
// `source` and what is wrong.
SafetensorsFile parse_safetensors(std::vector<std::uint8_t> contents, const std::string& source);
// Reads `path` and parses it; an unreadable file throws Error(invalid_argument) too.
SafetensorsFile read_safetensors(const std::string& path);
// Reads and checks only the header of `path` (against the file's size, as read_safetensors does),
// so that one small tensor of a large file (a state's code map in a checkpoint of gigabytes) costs
// its own bytes: `contents` stays empty, and read_safetensors_bytes reads a tensor's bytes.
SafetensorsFile read_safetensors_header(const std::string& path);
std::vector<std::uint8_t> read_safetensors_bytes(const SafetensorsFile& header, const std::string& name);
// A tensor's bytes in pieces of at most `piece_bytes`, in order, each passed to `take`: a checksum
// over a tensor of gigabytes then costs one piece of memory. From `contents` when it is held.
void read_safetensors_pieces(const SafetensorsFile& file, const std::string& name,
                             const std::function<void(std::span<const std::uint8_t>)>& take,
                             std::size_t piece_bytes = std::size_t{8} << 20);

struct SafetensorsTensor {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::span<const std::uint8_t> bytes;  // numel(shape) * size of dtype
};

// The file's bytes: tensors laid out in name order, the header padded with spaces to a multiple of
// 8 bytes (as the reference writer does). Throws Error for a tensor whose bytes disagree with its
// shape, an unknown dtype, an empty or repeated name, or "__metadata__" as a tensor name.
std::string serialize_safetensors(const std::vector<SafetensorsTensor>& tensors,
                                  const std::map<std::string, std::string>& metadata);

// Bytes per element of a safetensors dtype; 0 for a dtype this reader does not know.
std::int64_t safetensors_dtype_bytes(std::string_view dtype);
// "F32", "F16", "BF16", "U8" for the dtypes bitparity stores.
const char* safetensors_dtype(DType dtype);

}  // namespace bitparity::distributed
