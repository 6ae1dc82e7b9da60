#pragma once
// Quantized weights in a float `quant_storage` dtype so that FSDP can shard them (field bug 2):
// packed codes (two 4-bit codes per byte, or one 8-bit code per byte) reinterpreted as elements of
// uint8, f16, bf16 or f32 and laid out as a 2-D [rows, columns] tensor, with the fp32 absmax per
// block alongside. Sharding and gathering follow FSDP1 (one flat buffer of the storage dtype,
// tail-padded, equal partitions) and FSDP2 (dim-0 chunk, padded to ceil(dim0/W)*W rows). Every copy
// on the path must move bytes: the storage faults are the ways real code moves values instead.
#include <cstdint>
#include <string_view>
#include <vector>

#include "bitparity/distributed/communicator.hpp"
#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity::distributed {

enum class StorageLayout { fsdp1_flat, fsdp2_dim0 };
inline constexpr StorageLayout kStorageLayouts[] = {StorageLayout::fsdp1_flat, StorageLayout::fsdp2_dim0};
std::string_view storage_layout_name(StorageLayout layout);  // "fsdp1-flat", "fsdp2-dim0"
inline constexpr DType kStorageDTypes[] = {DType::u8, DType::f16, DType::bf16, DType::f32};

enum class StorageFault {
  none,
  float_conversion_copy,    // storage elements copied as values through a wider float (quiets NaNs)
  nan_canonicalising_copy,  // every NaN pattern copied as the dtype's canonical NaN
  padding_from_wrong_end,   // the shard padding placed before the data instead of after it
  absmax_wrong_block_map,   // absmax blocks dealt to ranks round robin but gathered as contiguous chunks
  frozen_weight_stepped,    // the optimizer steps the frozen storage with the unit's adapter (zero gradient)
};
inline constexpr StorageFault kStorageFaults[] = {StorageFault::float_conversion_copy, StorageFault::nan_canonicalising_copy,
                                                  StorageFault::padding_from_wrong_end, StorageFault::absmax_wrong_block_map,
                                                  StorageFault::frozen_weight_stepped};
std::string_view storage_fault_name(StorageFault fault);  // "storage-float-conversion-copy", ...
std::string_view storage_fault_description(StorageFault fault);
bool is_storage_fault_name(std::string_view name);
StorageFault parse_storage_fault(std::string_view name);  // throws Error naming the choices

struct StoredWeight {
  QuantFormat format = QuantFormat::nf4;
  DType storage_dtype = DType::u8;
  std::int64_t numel = 0, blocksize = 64;
  std::int64_t rows = 0, columns = 0;  // the storage tensor's shape, in storage elements
  std::vector<std::uint8_t> storage;   // rows * columns storage elements
  std::vector<float> absmax;           // one per block
};

// Packed codes (as the quantizer wrote them) laid into `storage_dtype` elements, `columns` per row.
// Refused before anything is written: gradients on integer storage, packed bytes that the storage
// element size does not divide, a column count that does not divide the storage elements.
StoredWeight store_packed_codes(std::vector<std::uint8_t> packed, std::vector<float> absmax, QuantFormat format,
                                std::int64_t numel, std::int64_t blocksize, DType storage_dtype, std::int64_t columns,
                                bool requires_grad);
// A compute dtype that can hold the dequantized values (f32, f16, bf16); throws naming the fix.
void check_compute_dtype(DType compute_dtype);

// This rank's shard of the weight in `layout` and the regathered weight on every rank, through a
// real all_gather. The storage keeps its bytes unless a fault says otherwise.
StoredWeight shard_and_regather(const StoredWeight& weight, StorageLayout layout, Communicator& communicator,
                                StorageFault fault);

// `count` storage elements of `dtype` from `from` to `to`: bytes, or values as the fault copies them.
void copy_storage(std::uint8_t* to, const std::uint8_t* from, std::int64_t count, DType dtype, StorageFault fault);

}  // namespace bitparity::distributed
