#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace bitparity {

// Element types. packed4 counts nibbles: two 4-bit codes per byte, the first in the high nibble.
enum class DType : std::uint8_t { f32, f16, bf16, u8, packed4 };

const char* dtype_name(DType dtype);
DType parse_dtype(std::string_view name);  // throws Error(invalid_argument) naming the choices
bool is_float_dtype(DType dtype);
// Bytes needed for `elements` elements stored contiguously.
std::int64_t dtype_storage_bytes(DType dtype, std::int64_t elements);

enum class DeviceKind : std::uint8_t { cpu, cuda };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;
  static Device cpu() { return {DeviceKind::cpu, 0}; }
  static Device cuda(int index) { return {DeviceKind::cuda, index}; }
  std::string str() const;
  bool operator==(const Device&) const = default;
};

Device parse_device(std::string_view text);  // "cpu" or "cuda:N"; throws Error(invalid_argument)

}  // namespace bitparity
