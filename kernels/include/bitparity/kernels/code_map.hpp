#pragma once
// A code map as a value: the fp32 value of every code of a quantization format, with a name and
// where the values come from. bitparity's built-in maps are described once in code_maps.cpp; more
// can be registered at run time (a map read from a file, such as a checkpoint's qmap), and every
// registered map is a QuantFormat that the kernels, the reference and the properties accept.
#include <optional>
#include <string>
#include <vector>

#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {

struct CodeMap {
  std::string name;          // letters, digits, '.', '_', '-': used on the command line and in file names
  int bits = 8;              // 8 (one byte per code) or 4 (two codes per byte)
  std::vector<float> values;  // 2^bits values, indexed by code
  std::string provenance;    // where the values come from, one line

  // What 8-bit optimizer states need of a map: every state takes positive values, and the signed
  // ones (momenta) negative values too.
  bool has_positive_code() const;
  bool has_negative_code() const;
};

// The built-in maps, in QuantFormat order (the named enumerators).
const std::vector<CodeMap>& builtin_code_maps();

// Registers a map and returns its format. A map whose name is taken is refused unless its bits and
// values equal the registered ones (then that format is returned). Throws Error(invalid_argument)
// with what is wrong and how to fix it: a bad name, a count other than 2^bits, a non-finite value,
// no +0 code, neighbours too far apart for an exact midpoint, more than 256 maps. Register before
// any run starts: the registry grows, it is never changed.
QuantFormat register_code_map(const CodeMap& map);

// The registered map with exactly these values (bit for bit, the sign of zero included), if any.
std::optional<QuantFormat> find_code_map(int bits, const std::vector<float>& values);

// The map of a registered format.
const CodeMap& code_map(QuantFormat format);

// torch.linspace on the CPU in fp32, as its two kernels evaluate it: the default kernel rounds
// `step * i` and the sum separately; the AVX2/AVX512 kernels fuse them (one rounding).
std::vector<float> linspace_f32(float start, float end, int steps, bool fused);

}  // namespace bitparity
