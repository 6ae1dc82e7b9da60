#include "bitparity/kernels/dtype.hpp"

#include <charconv>

#include "bitparity/kernels/errors.hpp"

namespace bitparity {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::u8: return "u8";
    case DType::packed4: return "packed4";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::u8, DType::packed4}) {
    if (name == dtype_name(d)) return d;
  }
  if (name == "fp32" || name == "float32") return DType::f32;
  if (name == "fp16" || name == "float16") return DType::f16;
  if (name == "bfloat16") return DType::bf16;
  throw Error(ErrorCode::invalid_argument,
              "unknown dtype '" + std::string(name) + "'; expected one of f32, f16, bf16, u8, packed4");
}

bool is_float_dtype(DType dtype) { return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16; }

std::int64_t dtype_storage_bytes(DType dtype, std::int64_t elements) {
  switch (dtype) {
    case DType::f32: return 4 * elements;
    case DType::f16:
    case DType::bf16: return 2 * elements;
    case DType::u8: return elements;
    case DType::packed4: return (elements + 1) / 2;
  }
  return 0;
}

std::string Device::str() const { return kind == DeviceKind::cpu ? "cpu" : "cuda:" + std::to_string(index); }

Device parse_device(std::string_view text) {
  if (text == "cpu") return Device::cpu();
  if (text.starts_with("cuda:")) {
    int index = -1;
    const auto digits = text.substr(5);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error == std::errc() && end == digits.data() + digits.size() && index >= 0) return Device::cuda(index);
  }
  throw Error(ErrorCode::invalid_argument,
              "unknown device '" + std::string(text) + "'; expected 'cpu' or 'cuda:N' with N a device index");
}

}  // namespace bitparity
