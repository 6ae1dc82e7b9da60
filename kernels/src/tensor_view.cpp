#include "bitparity/kernels/tensor_view.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "bitparity/kernels/errors.hpp"

namespace bitparity {

namespace {

std::string join(const std::int64_t* values, int count) {
  std::ostringstream out;
  out << '[';
  for (int i = 0; i < count; ++i) out << (i ? "," : "") << values[i];
  out << ']';
  return out.str();
}

bool strides_are_contiguous(const StridedIndex& index) {
  std::int64_t expected = 1;
  for (int d = index.ndim - 1; d >= 0; --d) {
    if (index.sizes[d] != 1 && index.strides[d] != expected) return false;
    expected *= index.sizes[d];
  }
  return true;
}

}  // namespace

std::string TensorView::describe() const {
  std::ostringstream out;
  out << dtype_name(dtype) << ' ' << device.str() << " sizes=" << join(index.sizes, index.ndim)
      << " strides=" << join(index.strides, index.ndim) << " offset=" << index.offset
      << " storage=" << storage_elements;
  return out.str();
}

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> strides(sizes.size());
  std::int64_t stride = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}

StridedIndex make_index(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                        std::int64_t offset) {
  if (sizes.size() > static_cast<std::size_t>(kMaxDims)) {
    throw Error(ErrorCode::invalid_argument, "a view has " + std::to_string(sizes.size()) +
                                                 " dimensions; at most 8 are supported (reshape the tensor)");
  }
  if (sizes.size() != strides.size()) {
    throw Error(ErrorCode::invalid_argument, "sizes and strides differ in length (" + std::to_string(sizes.size()) +
                                                 " vs " + std::to_string(strides.size()) + ")");
  }
  StridedIndex index;
  index.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < index.ndim; ++d) {
    if (sizes[d] < 0) throw Error(ErrorCode::invalid_argument, "size of dimension " + std::to_string(d) + " is negative");
    index.sizes[d] = sizes[d];
    index.strides[d] = strides[d];
  }
  index.offset = offset;
  index.contiguous = strides_are_contiguous(index);
  return index;
}

TensorView contiguous_view(void* data, DType dtype, Device device, const std::vector<std::int64_t>& sizes) {
  TensorView view;
  view.data = data;
  view.dtype = dtype;
  view.device = device;
  view.index = make_index(sizes, contiguous_strides(sizes), 0);
  view.storage_elements = view.index.numel();
  return view;
}

bool is_non_overlapping(const StridedIndex& index) {
  std::vector<int> dims;
  for (int d = 0; d < index.ndim; ++d) {
    if (index.sizes[d] > 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(), [&](int a, int b) { return index.strides[a] < index.strides[b]; });
  std::int64_t span = 0;  // largest storage distance reachable with the dimensions seen so far
  for (int d : dims) {
    if (index.strides[d] <= span) return false;
    span += (index.sizes[d] - 1) * index.strides[d];
  }
  return true;
}

void validate_input(const TensorView& view, const char* role) {
  const StridedIndex& index = view.index;
  if (index.offset < 0) {
    throw Error(ErrorCode::out_of_bounds, std::string(role) + " has a negative offset: " + view.describe());
  }
  for (int d = 0; d < index.ndim; ++d) {
    if (index.strides[d] < 0) {
      throw Error(ErrorCode::invalid_argument, std::string(role) + " has a negative stride in dimension " +
                                                   std::to_string(d) + " (" + view.describe() +
                                                   "); flip the tensor into a new buffer first");
    }
  }
  if (view.numel() == 0) return;
  if (view.data == nullptr) throw Error(ErrorCode::invalid_argument, std::string(role) + " has no storage (null data)");
  std::int64_t last = index.offset;
  for (int d = 0; d < index.ndim; ++d) last += (index.sizes[d] - 1) * index.strides[d];
  if (last >= view.storage_elements) {
    throw Error(ErrorCode::out_of_bounds, std::string(role) + " reaches storage element " + std::to_string(last) +
                                              " but its storage holds " + std::to_string(view.storage_elements) +
                                              " elements: " + view.describe());
  }
}

void validate_output(const TensorView& view, const char* role) {
  validate_input(view, role);
  if (!is_non_overlapping(view.index)) {
    throw Error(ErrorCode::overlapping_output,
                std::string(role) + " writes some storage elements more than once (zero or overlapping strides): " +
                    view.describe() + "; pass a non-overlapping view, for example a contiguous tensor");
  }
}

}  // namespace bitparity
