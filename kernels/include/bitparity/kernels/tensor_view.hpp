#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/strided_index.hpp"

namespace bitparity {

// A non-owning view of a tensor: storage pointer and extent, dtype, device, shape, strides in
// elements and an offset in elements. Sizes and indices are 64-bit.
struct TensorView {
  void* data = nullptr;
  std::int64_t storage_elements = 0;  // elements of `dtype` that `data` holds
  DType dtype = DType::f32;
  Device device = Device::cpu();
  StridedIndex index;

  std::int64_t numel() const { return index.numel(); }
  int ndim() const { return index.ndim; }
  std::string describe() const;  // "f32 cpu sizes=[..] strides=[..] offset=N storage=N"
};

// A view over contiguous row-major storage of `sizes`.
TensorView contiguous_view(void* data, DType dtype, Device device, const std::vector<std::int64_t>& sizes);
StridedIndex make_index(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                        std::int64_t offset);
std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& sizes);

// Validation. `role` names the argument in the error ("input", "output").
// Inputs: in bounds, non-negative strides (zero strides allowed: broadcast reads).
void validate_input(const TensorView& view, const char* role);
// Outputs additionally must not write one storage element twice.
void validate_output(const TensorView& view, const char* role);
// validate_output with the role built only where it refuses (`role_of()` returns a std::string): a
// step checks each state on every call, and composing their names cost more than the checks.
template <typename RoleOf>
void validate_output_named_by(const TensorView& view, const RoleOf& role_of) {
  try {
    validate_output(view, "output");
  } catch (const Error&) {
    validate_output(view, role_of().c_str());
    throw;  // not reached: the same checks refuse again, now with the role's name
  }
}
// True when no two logical indices map to one storage element (checked by a sufficient rule:
// with dimensions sorted by stride, each stride exceeds the span of all smaller ones).
bool is_non_overlapping(const StridedIndex& index);

}  // namespace bitparity
