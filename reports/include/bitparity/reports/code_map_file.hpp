#pragma once
// `--map NAME|FILE`: a registered code map by name, or a map read from a file and registered.
#include <string>

#include <vector>

#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/optimizer8.hpp"

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

// The maps of 8-bit states from `--map` specs (`sharded`, `drift`): an 8-bit map with negative
// values goes to the states that can be negative, one without to the non-negative states (second
// moments). Throws UsageError for a 4-bit map, a repeated spec or two maps for the same states.
StateMaps state_maps_option(const std::vector<std::string>& specs);
// The slot of StateMaps that an 8-bit map fills: signed states when it has negative values.
std::optional<QuantFormat>& state_map_slot(StateMaps& maps, const CodeMap& map);
// "maps signed=NAME non-negative=NAME" (empty when neither is set), for run headers.
std::string describe_state_maps(const StateMaps& maps);

}  // namespace bitparity::reports
