#pragma once
// One P2r case (the seed-000 class over real ranks) as data: the entry point, the tensor's shape,
// the chunked dimension, the pieces, the block size, the hyperparameters and every value the run
// reads, as "hexfloat bits". `bitparity fuzz` shrinks a failing one with smaller_gathered_cases()
// and saves it; `sharded --case` runs it without the generator.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/distributed/gathered_layout.hpp"

namespace bitparity::distributed {

// The name of a P2r entry point, as the rows print it: "quantize", "dequantize", "convert",
// "fp32 step", "8-bit step"; parse throws Error (invalid_argument) for any other.
std::string gathered_entry_name(fixtures::OperationFamily family);
fixtures::OperationFamily parse_gathered_entry(const std::string& name);

nlohmann::json encode_gathered_case(const GatheredCase& gathered_case);
// Reads and checks a case: a valid entry point, target and block size, the dimensions in range,
// one tensor per step (two steps at most, and only for the optimizers), every value representable
// in the dtype. Throws properties::CaseFileError naming the field and what is wrong.
GatheredCase decode_gathered_case(const nlohmann::json& json);

// One step of shrinking: a smaller case over `world` ranks, and what was taken away.
struct SmallerGatheredCase {
  GatheredCase smaller;
  int world = 1;
  std::string change;
  bool simplifies_values = false;  // the same case with simpler values, not a smaller one
};
// The candidates one step smaller, most shrinking first: fewer ranks (those that divide the chunked
// dimension), one step, no pieces or fewer, dimensions of size 1 dropped, smaller dimensions (the
// values at the kept indices), the smaller block size.
std::vector<SmallerGatheredCase> smaller_gathered_cases(const GatheredCase& gathered_case, int world);

}  // namespace bitparity::distributed
