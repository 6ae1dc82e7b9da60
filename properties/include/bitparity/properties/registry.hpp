#pragma once
// The registry: every quantisation format is described once, and every property iterates it.
#include <cstdint>
#include <string>
#include <vector>

#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity::properties {

struct FormatEntry {
  QuantFormat format;
  std::string name;
  int bits;
  std::vector<std::int64_t> block_sizes;  // every block size the kernels accept for the format
};

struct OptimizerEntry {
  OptimizerKind kind;
  std::string name;
  int states;
};

const std::vector<FormatEntry>& quant_registry();
const std::vector<OptimizerEntry>& optimizer_registry();
const FormatEntry& find_format(const std::string& name);  // throws Error naming the choices
const std::vector<DType>& float_dtypes();                 // f32, f16, bf16

}  // namespace bitparity::properties
