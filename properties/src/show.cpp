#include "bitparity/properties/show.hpp"

#include <cstdio>

#include "bitparity/kernels/convert.hpp"

namespace bitparity::properties {

std::string show_double(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", value);
  return text;
}

std::string show_float(float value) {
  char text[96];
  std::snprintf(text, sizeof text, "%a [0x%08x]", static_cast<double>(value), float_bits(value));
  return text;
}

std::string show_bits(std::uint32_t bits, DType dtype) {
  char text[96];
  switch (dtype) {
    case DType::f16:
      std::snprintf(text, sizeof text, "%a [f16 0x%04x]", static_cast<double>(f16_to_float(static_cast<std::uint16_t>(bits))), bits);
      break;
    case DType::bf16:
      std::snprintf(text, sizeof text, "%a [bf16 0x%04x]", static_cast<double>(bf16_to_float(static_cast<std::uint16_t>(bits))), bits);
      break;
    default:
      std::snprintf(text, sizeof text, "%a [f32 0x%08x]", static_cast<double>(float_from_bits(bits)), bits);
      break;
  }
  return text;
}

}  // namespace bitparity::properties
