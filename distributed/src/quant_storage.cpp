#include "bitparity/distributed/quant_storage.hpp"

#include <algorithm>
#include <cstring>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

namespace {

std::int64_t element_bytes(DType dtype) { return dtype_storage_bytes(dtype, 1); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// One storage element copied as a value through a wider float, as a cast would.
void copy_through_float(std::uint8_t* to, const std::uint8_t* from, DType dtype) {
  switch (dtype) {
    case DType::u8: *to = static_cast<std::uint8_t>(static_cast<float>(*from)); return;
    case DType::f16: case DType::bf16: {
      std::uint16_t bits;
      std::memcpy(&bits, from, 2);
      const float value = dtype == DType::f16 ? f16_to_float(bits) : bf16_to_float(bits);
      bits = dtype == DType::f16 ? float_to_f16(value) : float_to_bf16(value);
      std::memcpy(to, &bits, 2);
      return;
    }
    default: {
      float value;
      std::memcpy(&value, from, 4);
      volatile double wide = value;  // the widening quiets a signalling NaN
      value = static_cast<float>(wide);
      std::memcpy(to, &value, 4);
    }
  }
}

void copy_canonicalising_nan(std::uint8_t* to, const std::uint8_t* from, DType dtype) {
  const std::int64_t size = element_bytes(dtype);
  std::memcpy(to, from, static_cast<std::size_t>(size));
  if (dtype == DType::f16 || dtype == DType::bf16) {
    std::uint16_t bits;
    std::memcpy(&bits, from, 2);
    const bool nan = dtype == DType::f16 ? (bits & 0x7FFFu) > 0x7C00u : (bits & 0x7FFFu) > 0x7F80u;
    if (nan) {
      bits = dtype == DType::f16 ? kCanonicalNanF16 : kCanonicalNanBF16;
      std::memcpy(to, &bits, 2);
    }
  } else if (dtype == DType::f32) {
    std::uint32_t bits;
    std::memcpy(&bits, from, 4);
    if (is_nan_bits(bits)) {
      bits = 0x7FC00000u;
      std::memcpy(to, &bits, 4);
    }
  }
}

// Equal shards of `elements` items of `size` bytes for every rank, padded with zero bytes at the end
// (at the front under the padding fault); each rank contributes its shard to one all_gather.
std::vector<std::uint8_t> gather_padded(const std::uint8_t* data, std::int64_t elements, std::int64_t shard_elements,
                                        std::int64_t size, Communicator& communicator, bool pad_in_front,
                                        const std::vector<std::int64_t>& order, DType dtype, StorageFault fault) {
  const int world = communicator.size(), rank = communicator.rank();
  const std::int64_t padded_elements = shard_elements * world;
  std::vector<std::uint8_t> padded(static_cast<std::size_t>(padded_elements * size), 0);
  const std::int64_t data_start = pad_in_front ? padded_elements - elements : 0;
  for (std::int64_t i = 0; i < elements; ++i) {
    std::memcpy(&padded[static_cast<std::size_t>((data_start + order[static_cast<std::size_t>(i)]) * size)],
                data + i * size, static_cast<std::size_t>(size));
  }
  std::vector<std::uint8_t> send(static_cast<std::size_t>(shard_elements * size));
  copy_storage(send.data(), padded.data() + rank * shard_elements * size, shard_elements, dtype, fault);
  std::vector<std::uint8_t> gathered(padded.size());
  communicator.all_gather(send.data(), send.size(), gathered.data());
  // The padding is stripped from the end: the first `elements` items are the data.
  std::vector<std::uint8_t> out(static_cast<std::size_t>(elements * size));
  copy_storage(out.data(), gathered.data(), elements, dtype, fault);
  return out;
}

}  // namespace

std::string_view storage_layout_name(StorageLayout layout) {
  return layout == StorageLayout::fsdp1_flat ? "fsdp1-flat" : "fsdp2-dim0";
}

std::string_view storage_fault_name(StorageFault fault) {
  switch (fault) {
    case StorageFault::none: return "none";
    case StorageFault::float_conversion_copy: return "storage-float-conversion-copy";
    case StorageFault::nan_canonicalising_copy: return "storage-nan-canonicalising-copy";
    case StorageFault::padding_from_wrong_end: return "storage-padding-from-wrong-end";
    case StorageFault::absmax_wrong_block_map: return "storage-absmax-wrong-block-map";
    case StorageFault::frozen_weight_stepped: return "storage-frozen-weight-stepped";
  }
  return "?";
}

std::string_view storage_fault_description(StorageFault fault) {
  switch (fault) {
    case StorageFault::none: return "";
    case StorageFault::float_conversion_copy: return "quant_storage elements copied as values through a wider float";
    case StorageFault::nan_canonicalising_copy: return "a copy that writes every NaN pattern as the canonical NaN";
    case StorageFault::padding_from_wrong_end: return "shard padding placed before the data instead of after it";
    case StorageFault::absmax_wrong_block_map: return "absmax blocks dealt round robin but gathered as contiguous chunks";
    case StorageFault::frozen_weight_stepped:
      return "the optimizer steps the frozen quantized storage with the unit's adapter (zero gradient, weight decay)";
  }
  return "";
}

bool is_storage_fault_name(std::string_view name) { return name.rfind("storage-", 0) == 0; }

StorageFault parse_storage_fault(std::string_view name) {
  std::string names;
  for (StorageFault fault : kStorageFaults) {
    if (storage_fault_name(fault) == name) return fault;
    names += (names.empty() ? "" : ", ") + std::string(storage_fault_name(fault));
  }
  throw Error(ErrorCode::invalid_argument, "unknown storage mutant '" + std::string(name) + "'; expected one of " + names);
}

void check_compute_dtype(DType compute_dtype) {
  if (compute_dtype == DType::f32 || compute_dtype == DType::f16 || compute_dtype == DType::bf16) return;
  throw Error(ErrorCode::invalid_argument, std::string("compute dtype ") + dtype_name(compute_dtype) +
                                               " cannot hold dequantized values; use f32, f16 or bf16");
}

StoredWeight store_packed_codes(std::vector<std::uint8_t> packed, std::vector<float> absmax, QuantFormat format,
                                std::int64_t numel, std::int64_t blocksize, DType storage_dtype, std::int64_t columns,
                                bool requires_grad) {
  const char* storage_name = dtype_name(storage_dtype);
  if (storage_dtype != DType::u8 && storage_dtype != DType::f16 && storage_dtype != DType::bf16 && storage_dtype != DType::f32) {
    throw Error(ErrorCode::invalid_argument, std::string("quant_storage ") + storage_name + " is not a storage dtype; use u8, f16, bf16 or f32");
  }
  if (requires_grad && storage_dtype == DType::u8) {
    throw Error(ErrorCode::invalid_argument,
                "gradients on integer storage: quant_storage u8 cannot carry a gradient; freeze the quantized weight "
                "(requires_grad=False) or store it in f16, bf16 or f32");
  }
  const std::int64_t size = element_bytes(storage_dtype);
  const auto bytes = static_cast<std::int64_t>(packed.size());
  if (bytes % size != 0) {
    throw Error(ErrorCode::invalid_argument, std::to_string(bytes) + " packed bytes are not a whole number of " + storage_name +
                                                 " elements (" + std::to_string(size) + " bytes each); pad the weight to a "
                                                 "multiple of " + std::to_string(size) + " packed bytes or store it in u8");
  }
  const std::int64_t elements = bytes / size;
  if (columns < 1 || elements % columns != 0) {
    throw Error(ErrorCode::invalid_argument, std::to_string(columns) + " columns do not divide the " + std::to_string(elements) +
                                                 " storage elements; use a divisor such as 1");
  }
  StoredWeight weight;
  weight.format = format;
  weight.storage_dtype = storage_dtype;
  weight.numel = numel;
  weight.blocksize = blocksize;
  weight.columns = columns;
  weight.rows = elements / columns;
  weight.storage = std::move(packed);
  weight.absmax = std::move(absmax);
  return weight;
}

void copy_storage(std::uint8_t* to, const std::uint8_t* from, std::int64_t count, DType dtype, StorageFault fault) {
  const std::int64_t size = element_bytes(dtype);
  for (std::int64_t i = 0; i < count; ++i) {
    switch (fault) {
      case StorageFault::float_conversion_copy: copy_through_float(to + i * size, from + i * size, dtype); break;
      case StorageFault::nan_canonicalising_copy: copy_canonicalising_nan(to + i * size, from + i * size, dtype); break;
      default: std::memcpy(to + i * size, from + i * size, static_cast<std::size_t>(size));
    }
  }
}

StoredWeight shard_and_regather(const StoredWeight& weight, StorageLayout layout, Communicator& communicator,
                                StorageFault fault) {
  const int world = communicator.size();
  const std::int64_t size = element_bytes(weight.storage_dtype);
  const std::int64_t elements = weight.rows * weight.columns;
  // FSDP1: ceil(elements / W) elements each; FSDP2: ceil(rows / W) whole rows each.
  const std::int64_t shard = layout == StorageLayout::fsdp1_flat ? ceil_div(elements, world)
                                                                 : ceil_div(weight.rows, world) * weight.columns;
  const bool pad_in_front = fault == StorageFault::padding_from_wrong_end;
  std::vector<std::int64_t> in_place(static_cast<std::size_t>(std::max(elements, static_cast<std::int64_t>(weight.absmax.size()))));
  for (std::size_t i = 0; i < in_place.size(); ++i) in_place[i] = static_cast<std::int64_t>(i);
  StoredWeight out = weight;
  out.storage = gather_padded(weight.storage.data(), elements, std::max<std::int64_t>(shard, 1), size, communicator,
                              pad_in_front, in_place, weight.storage_dtype, fault);
  // absmax: fp32 blocks, one dim-0 chunk (or flat partition) per rank, like the storage.
  const auto blocks = static_cast<std::int64_t>(weight.absmax.size());
  const std::int64_t absmax_shard = std::max<std::int64_t>(ceil_div(blocks, world), 1);
  std::vector<std::int64_t> order = in_place;
  if (fault == StorageFault::absmax_wrong_block_map) {
    // Block b goes to rank b % W, slot b / W: the gathered chunks hold the blocks out of order.
    for (std::int64_t b = 0; b < blocks; ++b) order[static_cast<std::size_t>(b)] = (b % world) * absmax_shard + b / world;
  }
  const auto absmax_bytes = gather_padded(reinterpret_cast<const std::uint8_t*>(weight.absmax.data()), blocks, absmax_shard, 4,
                                          communicator, pad_in_front, order, DType::f32, StorageFault::none);
  std::memcpy(out.absmax.data(), absmax_bytes.data(), absmax_bytes.size());
  return out;
}

}  // namespace bitparity::distributed
