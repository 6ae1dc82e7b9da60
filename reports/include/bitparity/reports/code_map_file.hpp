#pragma once
// `--map NAME|FILE`: a registered code map by name, or a map read from a file and registered.
#include <string>

#include "bitparity/kernels/code_map.hpp"

namespace bitparity::reports {

// Reads a map from a file (nothing is registered):
// - FILE.json: a JSON list of 2^bits fp32 bit patterns (numbers, or strings "0x3f800000"), 256 for
//   an 8-bit map and 16 for a 4-bit one; or an object {"name", "bits", "values": [...]} with the same
//   list. The map is named after the file (or its "name").
// - FILE.safetensors[:TENSOR]: an F32 tensor of 256 or 16 elements, such as a bitsandbytes 8-bit
//   optimizer state's qmap1 / qmap2. Without :TENSOR the file must hold exactly one such tensor.
//   The map is named FILE-stem.TENSOR.
// Throws UsageError naming the file and what is wrong.
CodeMap read_code_map_file(const std::string& spec);

// The format `spec` names: a registered map, or a file's map, registered. Throws UsageError.
QuantFormat resolve_code_map(const std::string& spec);

}  // namespace bitparity::reports
