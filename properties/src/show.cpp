#include "bitparity/properties/show.hpp"

#include <cstdio>
#include <sstream>

#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/optimizer.hpp"

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

std::string describe_hyperparameters(OptimizerKind kind, const Hyperparameters& h) {
  std::ostringstream os;
  os << optimizer_info(kind).name << "{step=" << h.step;
  for (const auto& spec : optimizer_info(kind).hyperparameters) {
    os << " " << spec.name << "=";
    if (spec.range == ValueRange::flag || spec.range == ValueRange::count) {
      os << static_cast<std::int64_t>(spec.get(h));
    } else {
      os << show_float(static_cast<float>(spec.get(h)));
    }
  }
  os << " grad_scale=" << h.grad_scale << (h.maximize ? " maximize" : "");
  if (h.max_unorm > 0.0f) os << " max_unorm=" << h.max_unorm;
  os << "}";
  return os.str();
}

}  // namespace bitparity::properties
