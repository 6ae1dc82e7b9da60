#pragma once
// P10: quantized storage through sharding. A weight is quantized by the implementation under test,
// its packed codes stored in a quant_storage dtype (with byte patterns that are NaN, infinite or
// subnormal in that dtype written over some of them: every byte is a valid code), sharded as FSDP
// does over the real ranks and all-gathered. The regathered storage and absmax must be bytewise the
// originals, and their dequantized weights (by the implementation) bitwise unchanged, on every rank.
// With a grad dtype the unit also trains an adapter (adapter_step.hpp): after a sharded step the
// storage is still bytewise the original and the adapter bitwise the unsharded step.
#include <cstdint>
#include <optional>
#include <string>

#include "bitparity/distributed/adapter_step.hpp"
#include "bitparity/distributed/quant_storage.hpp"
#include "bitparity/fixtures/implementation.hpp"

namespace bitparity::distributed {

struct StorageTarget {
  QuantFormat format = QuantFormat::nf4;
  DType storage_dtype = DType::u8;
  DType compute_dtype = DType::f32;
  StorageLayout layout = StorageLayout::fsdp1_flat;
  std::optional<DType> grad_dtype{};  // the adapter's gradients; empty: the weight alone, frozen
};

struct StorageTally {
  std::int64_t wrong_bytes = 0;        // storage and absmax bytes unlike the originals (summed over ranks)
  std::int64_t wrong_dequantized = 0;  // dequantized elements unlike the original's (summed over ranks)
  std::int64_t wrong_adapter = 0;      // adapter elements unlike the unsharded step (summed over ranks)
  std::int64_t checked = 0;            // bytes and elements compared (summed over ranks)
  std::string first_wrong;             // this rank's first finding
  std::int64_t wrong() const { return wrong_bytes + wrong_dequantized + wrong_adapter; }
};

// One case as data: the weight as stored (special byte patterns included) and, with a grad dtype,
// the adapter and its gradient.
struct StorageCase {
  StorageTarget target;
  StoredWeight weight;
  AdapterValues adapter;  // empty without a grad dtype
};

// A case drawn from `seed`, the same on every rank for the same seed and world size: the weight is
// quantized by `implementation`.
StorageCase draw_storage_case(const StorageTarget& target, std::uint64_t seed, int world, fixtures::Implementation& implementation);

// Collective: the case sharded over the communicator's ranks and regathered (and its adapter stepped).
StorageTally run_storage_parity(const StorageCase& storage_case, Communicator& communicator, fixtures::Implementation& implementation,
                                StorageFault fault);

}  // namespace bitparity::distributed
