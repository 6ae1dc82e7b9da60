#include "bitparity/distributed/storage_case.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/show.hpp"
#include "case_fields.hpp"

namespace bitparity::distributed {

namespace {

using case_fields::counted;
using case_fields::smaller_sizes;
using case_fields::whole_number;
using nlohmann::json;
using properties::CaseFileError;

constexpr std::int64_t kMostStorageElements = std::int64_t{1} << 20;
constexpr std::int64_t kMostAdapterElements = std::int64_t{1} << 20;

bool four_bit(QuantFormat format) { return quant_format_info(format).bits == 4; }

// Codes per storage element.
std::int64_t codes_per_element(const StorageTarget& target) {
  return dtype_storage_bytes(target.storage_dtype, 1) * (four_bit(target.format) ? 2 : 1);
}


std::string text(const json& object, const char* key) {
  if (!object.contains(key) || !object.at(key).is_string()) throw CaseFileError(std::string("'") + key + "' must be a name");
  return object.at(key).get<std::string>();
}

// A storage element as the hex of its bits ("0x7e01" for an f16 NaN): the bytes decide, whatever
// value they would be in the storage dtype.
std::string element_bits(const std::uint8_t* element, std::int64_t size) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, element, static_cast<std::size_t>(size));  // little-endian, as the machine stores it
  char out[16];
  std::snprintf(out, sizeof out, "0x%0*x", static_cast<int>(2 * size), bits);
  return out;
}

void read_element_bits(const json& entry, std::int64_t size, std::uint8_t* element) {
  const std::string bits = entry.is_string() ? entry.get<std::string>() : "";
  const std::size_t digits = static_cast<std::size_t>(2 * size);
  if (bits.size() != digits + 2 || bits.rfind("0x", 0) != 0 ||
      !std::all_of(bits.begin() + 2, bits.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; })) {
    throw CaseFileError("a storage element must be \"0x\" and " + std::to_string(digits) + " hex digits, got " + entry.dump());
  }
  const std::uint32_t value = static_cast<std::uint32_t>(std::stoul(bits.substr(2), nullptr, 16));
  std::memcpy(element, &value, static_cast<std::size_t>(size));
}

// `c` with only the storage elements [first, first + elements) in `columns` columns, and the absmax
// of the blocks from the one that held the first of them (as data: P10 moves bytes, whatever they mean).
StorageCase with_elements(const StorageCase& c, std::int64_t first, std::int64_t elements, std::int64_t columns) {
  StorageCase smaller = c;
  StoredWeight& w = smaller.weight;
  const std::int64_t size = dtype_storage_bytes(w.storage_dtype, 1);
  w.numel = elements * codes_per_element(c.target);
  w.columns = columns;
  w.rows = elements / columns;
  const auto from = c.weight.storage.begin() + first * size;
  w.storage.assign(from, from + elements * size);
  const std::int64_t first_block = first * codes_per_element(c.target) / w.blocksize;
  const auto blocks = c.weight.absmax.begin() + first_block;
  w.absmax.assign(blocks, blocks + block_count(w.numel, w.blocksize));
  return smaller;
}



}  // namespace

json encode_storage_case(const StorageCase& c) {
  const StoredWeight& w = c.weight;
  const std::int64_t size = dtype_storage_bytes(w.storage_dtype, 1);
  json storage = json::array();
  for (std::size_t i = 0; i < w.storage.size(); i += static_cast<std::size_t>(size)) storage.push_back(element_bits(&w.storage[i], size));
  json out = {{"format", std::string(quant_format_info(c.target.format).name)},
              {"storage_dtype", properties::encode_input(c.target.storage_dtype)},
              {"compute_dtype", properties::encode_input(c.target.compute_dtype)},
              {"layout", std::string(storage_layout_name(c.target.layout))},
              {"grad_dtype", c.target.grad_dtype ? dtype_name(*c.target.grad_dtype) : "none"},
              {"blocksize", w.blocksize},
              {"numel", w.numel},
              {"rows", w.rows},
              {"columns", w.columns},
              {"storage", storage},
              {"absmax", properties::encode_floats(w.absmax, DType::f32)}};
  if (c.target.grad_dtype) {
    out["adapter"] = properties::encode_floats(c.adapter.adapter, c.target.storage_dtype);
    out["adapter_grad"] = properties::encode_floats(c.adapter.grad, *c.target.grad_dtype);
  }
  return out;
}

StorageCase decode_storage_case(const json& j) {
  if (!j.is_object()) throw CaseFileError("the case must be an object");
  case_fields::refuse_unknown_fields(j, {"format", "storage_dtype", "compute_dtype", "layout", "grad_dtype", "blocksize", "numel",
                                         "rows", "columns", "storage", "absmax", "adapter", "adapter_grad"});
  StorageCase c;
  StorageTarget& target = c.target;
  try {
    target.format = parse_quant_format(text(j, "format"));
    const std::string layout = text(j, "layout");
    const auto found = std::find_if(std::begin(kStorageLayouts), std::end(kStorageLayouts),
                                    [&](StorageLayout l) { return storage_layout_name(l) == layout; });
    if (found == std::end(kStorageLayouts)) throw CaseFileError("'layout' must be fsdp1-flat or fsdp2-dim0, got '" + layout + "'");
    target.layout = *found;
    // One line for any other name: the dtype parser's own list names dtypes storage does not take.
    bool known = true;
    try {
      properties::decode_input(j.value("storage_dtype", json()), target.storage_dtype);
    } catch (const std::exception&) {  // Error, or CaseFileError quoting one
      known = false;
    }
    if (!known || std::find(std::begin(kStorageDTypes), std::end(kStorageDTypes), target.storage_dtype) == std::end(kStorageDTypes)) {
      throw CaseFileError("'storage_dtype' must be u8, f16, bf16 or f32, not " + j.value("storage_dtype", json()).dump());
    }
    properties::decode_input(j.value("compute_dtype", json()), target.compute_dtype);
    check_compute_dtype(target.compute_dtype);
    const std::string grad = text(j, "grad_dtype");
    if (grad != "none") {
      target.grad_dtype = parse_dtype(grad);
      check_trainable_unit(target.storage_dtype, *target.grad_dtype);
    }
  } catch (const Error& error) {
    throw case_fields::case_file_error("", error);
  }
  StoredWeight& w = c.weight;
  w.format = target.format;
  w.storage_dtype = target.storage_dtype;
  w.blocksize = whole_number(j, "blocksize", 1, 1 << 20);
  const std::vector<std::int64_t> sizes = supported_block_sizes(target.format);
  if (std::find(sizes.begin(), sizes.end(), w.blocksize) == sizes.end()) {
    throw CaseFileError("'blocksize' " + std::to_string(w.blocksize) + " is not a block size of " + std::string(quant_format_info(target.format).name));
  }
  w.rows = whole_number(j, "rows", 1, kMostStorageElements);
  w.columns = whole_number(j, "columns", 1, kMostStorageElements);
  const std::int64_t elements = w.rows * w.columns;
  if (elements > kMostStorageElements) throw CaseFileError("rows x columns is more than " + std::to_string(kMostStorageElements) + " storage elements");
  w.numel = whole_number(j, "numel", 1, kMostStorageElements * 8);
  if (w.numel != elements * codes_per_element(target)) {
    throw CaseFileError("'numel' " + std::to_string(w.numel) + " is not the codes of " + std::to_string(elements) + " storage elements (" +
                        std::to_string(elements * codes_per_element(target)) + ")");
  }
  const json& storage = j.value("storage", json());
  if (!storage.is_array() || static_cast<std::int64_t>(storage.size()) != elements) {
    throw CaseFileError("'storage' must list rows x columns = " + std::to_string(elements) + " storage elements");
  }
  const std::int64_t size = dtype_storage_bytes(w.storage_dtype, 1);
  w.storage.resize(static_cast<std::size_t>(elements * size));
  for (std::int64_t i = 0; i < elements; ++i) {
    try {
      read_element_bits(storage[static_cast<std::size_t>(i)], size, &w.storage[static_cast<std::size_t>(i * size)]);
    } catch (const CaseFileError& error) {
      throw CaseFileError("storage element " + std::to_string(i) + ": " + error.what());
    }
  }
  const std::size_t blocks = static_cast<std::size_t>(block_count(w.numel, w.blocksize));
  try {
    w.absmax = properties::decode_floats(j.value("absmax", json()), DType::f32, blocks);
  } catch (const CaseFileError& error) {
    throw CaseFileError(std::string("absmax: ") + error.what());
  }
  if (w.absmax.size() != blocks) throw CaseFileError("'absmax' must hold one value per block (" + std::to_string(blocks) + ")");
  // What a quantizer stores: +0 or more, or NaN for a block that held NaN or Inf (no Inf, no negative).
  for (std::size_t b = 0; b < w.absmax.size(); ++b) {
    const float a = w.absmax[b];
    if (!std::isnan(a) && (std::isinf(a) || std::signbit(a))) {
      throw CaseFileError("absmax of block " + std::to_string(b) + " is " + properties::show_float(a) +
                          "; a quantizer stores +0 or more, or NaN for a block that held NaN or Inf");
    }
  }
  if (target.grad_dtype) {
    try {
      c.adapter.adapter = properties::decode_floats(j.value("adapter", json()), target.storage_dtype, kMostAdapterElements);
      c.adapter.grad = properties::decode_floats(j.value("adapter_grad", json()), *target.grad_dtype, kMostAdapterElements);
    } catch (const CaseFileError& error) {
      throw CaseFileError(std::string("adapter: ") + error.what());
    }
    if (c.adapter.adapter.empty() || c.adapter.adapter.size() != c.adapter.grad.size()) {
      throw CaseFileError("'adapter' and 'adapter_grad' must hold the same number of values, at least one");
    }
  } else if (j.contains("adapter") || j.contains("adapter_grad")) {
    throw CaseFileError("an adapter is given but 'grad_dtype' is none; remove it or give the gradients' dtype");
  }
  return c;
}

std::vector<SmallerStorageCase> smaller_storage_cases(const StorageCase& c, int world) {
  std::vector<SmallerStorageCase> out;
  for (int w = 2; w < world; ++w) out.push_back({c, w, counted(w, "rank", "ranks")});
  const std::int64_t elements = c.weight.rows * c.weight.columns;
  for (std::int64_t n : smaller_sizes(elements, 1)) {
    // The columns stay where they divide what is left; else one column. The first elements, then the last.
    const std::int64_t columns = n % c.weight.columns == 0 ? c.weight.columns : 1;
    out.push_back({with_elements(c, 0, n, columns), world, "the first " + counted(n, "storage element", "storage elements")});
    out.push_back({with_elements(c, elements - n, n, columns), world, "the last " + counted(n, "storage element", "storage elements")});
  }
  if (c.weight.columns > 1) out.push_back({with_elements(c, 0, elements, 1), world, "one column"});
  for (std::int64_t n : smaller_sizes(static_cast<std::int64_t>(c.adapter.adapter.size()), 1)) {
    StorageCase smaller = c;
    smaller.adapter.adapter.resize(static_cast<std::size_t>(n));
    smaller.adapter.grad.resize(static_cast<std::size_t>(n));
    out.push_back({std::move(smaller), world, counted(n, "adapter element", "adapter elements")});
  }
  // The stored bytes are the case (NaN patterns and all); absmax and the adapter are values.
  case_fields::add_simpler_values(
      c,
      [](StorageCase& simpler) {
        return std::vector<std::vector<float>*>{&simpler.weight.absmax, &simpler.adapter.adapter, &simpler.adapter.grad};
      },
      [&](StorageCase simpler, std::string change) { out.push_back({std::move(simpler), world, std::move(change), true}); });
  return out;
}

}  // namespace bitparity::distributed
