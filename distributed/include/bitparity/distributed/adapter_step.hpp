#pragma once
// P10 with gradients: the FSDP unit that holds the quantized weight also trains an adapter (LoRA),
// as FSDP-QLoRA does. FSDP1 flattens both into one buffer of one dtype, which is why quant_storage
// must be a float dtype equal to the adapter's; FSDP2 shards each as its own dim-0 chunk. Each rank
// steps the adapter elements of its shard (AdamW with weight decay, gradients in `grad_dtype`), and
// the shards are all-gathered. The frozen storage must come back bytewise unchanged and the adapter
// bitwise the unsharded step. The fault steps the storage too: with a zero gradient, AdamW's
// decoupled weight decay still rewrites its "values".
#include <cstdint>
#include <vector>

#include "bitparity/distributed/quant_storage.hpp"
#include "bitparity/fixtures/implementation.hpp"

namespace bitparity::distributed {

struct AdapterStepResult {
  std::vector<std::uint8_t> storage;   // the quantized weight's storage after the step and all_gather
  std::vector<std::uint8_t> adapter;   // the adapter after the sharded step and all_gather
  std::vector<std::uint8_t> expected;  // the adapter stepped whole, on one rank
  std::int64_t adapter_numel = 0;
};

// Throws Error(invalid_argument) naming the fix for u8 storage (it cannot carry a gradient, and
// FSDP1 flattens the adapter into the same dtype) and for a grad dtype that is not a float dtype.
void check_trainable_unit(DType storage_dtype, DType grad_dtype);

// An adapter and its gradient drawn from `seed`: 1 to 300 elements, in the storage dtype (FSDP1
// flattens one dtype) and in `grad_dtype`, rounded to them.
struct AdapterValues {
  std::vector<float> adapter, grad;
};
AdapterValues draw_adapter(std::uint64_t seed, DType storage_dtype, DType grad_dtype);

// One training step of the unit on every rank (collective), the same adapter on every rank.
AdapterStepResult step_unit_with_adapter(const StoredWeight& weight, StorageLayout layout, DType grad_dtype, const AdapterValues& values,
                                         Communicator& communicator, fixtures::Implementation& implementation, StorageFault fault);

}  // namespace bitparity::distributed
