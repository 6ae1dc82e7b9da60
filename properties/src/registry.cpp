#include "bitparity/properties/registry.hpp"

#include <mutex>

#include "bitparity/kernels/errors.hpp"

namespace bitparity::properties {

const std::vector<FormatEntry>& quant_registry() {
  // Every registered code map, maps registered at run time (read from a file) included. Capacity
  // for every possible map is reserved, so appending never moves an entry a caller holds.
  static std::mutex mutex;
  static std::vector<FormatEntry> entries = [] {
    std::vector<FormatEntry> list;
    list.reserve(kMaxCodeMaps);
    return list;
  }();
  const std::lock_guard lock(mutex);
  const auto formats = quant_formats();
  for (std::size_t i = entries.size(); i < formats.size(); ++i) {
    const auto& info = formats[i];
    entries.push_back({info.format, std::string(info.name), info.bits, supported_block_sizes(info.format)});
  }
  return entries;
}

const std::vector<OptimizerEntry>& optimizer_registry() {
  static const std::vector<OptimizerEntry> entries = [] {
    std::vector<OptimizerEntry> list;
    for (const auto& info : optimizers()) list.push_back({info.kind, std::string(info.name), info.states});
    return list;
  }();
  return entries;
}

const FormatEntry& find_format(const std::string& name) {
  std::string choices;
  for (const auto& entry : quant_registry()) {
    if (entry.name == name) return entry;
    choices += (choices.empty() ? "" : ", ") + entry.name;
  }
  throw Error(ErrorCode::invalid_argument, "unknown format '" + name + "'; expected one of " + choices);
}

const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> dtypes = {DType::f32, DType::f16, DType::bf16};
  return dtypes;
}

}  // namespace bitparity::properties
