#pragma once
// One P10 case (quantized storage through sharding) as data: the target, the weight as stored (every
// storage element as its bits, NaN and subnormal patterns included; absmax as "hexfloat bits") and
// the adapter with its gradient. `bitparity fuzz` shrinks a failing one with smaller_storage_cases()
// and saves it; `sharded --case` runs it without the generator.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/distributed/storage_parity.hpp"

namespace bitparity::distributed {

nlohmann::json encode_storage_case(const StorageCase& storage_case);
// Reads and checks a case: the target's combination valid, the storage holding rows x columns
// elements that carry exactly the packed codes, one absmax per block, an adapter exactly when there
// is a grad dtype. Throws properties::CaseFileError naming the field and what is wrong.
StorageCase decode_storage_case(const nlohmann::json& json);

// A smaller case over `world` ranks, and what was taken away.
struct SmallerStorageCase {
  StorageCase smaller;
  int world = 1;
  std::string change;
  bool simplifies_values = false;  // the same case with simpler values, not a smaller one
};
// The candidates one step smaller, most shrinking first: fewer ranks, fewer storage elements (the
// first ones kept, their absmax with them), one column, a shorter adapter.
std::vector<SmallerStorageCase> smaller_storage_cases(const StorageCase& storage_case, int world);

}  // namespace bitparity::distributed
