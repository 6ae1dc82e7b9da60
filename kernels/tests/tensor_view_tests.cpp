#include <gtest/gtest.h>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/tensor_view.hpp"

namespace bitparity {
namespace {

TensorView view_of(std::vector<float>& storage, std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides,
                   std::int64_t offset) {
  TensorView view;
  view.data = storage.data();
  view.storage_elements = static_cast<std::int64_t>(storage.size());
  view.index = make_index(sizes, strides, offset);
  return view;
}

ErrorCode code_of(auto&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.code();
  }
  ADD_FAILURE() << "no error was raised";
  return ErrorCode::invalid_argument;
}

TEST(TensorView, StorageIndexFollowsStrides) {
  std::vector<float> storage(100);
  const TensorView view = view_of(storage, {2, 3}, {1, 10}, 5);  // a transposed view
  EXPECT_FALSE(view.index.contiguous);
  EXPECT_EQ(view.index.storage(0), 5);
  EXPECT_EQ(view.index.storage(1), 15);
  EXPECT_EQ(view.index.storage(3), 6);
  EXPECT_EQ(view.index.storage(5), 26);
}

TEST(TensorView, SixtyFourBitIndexing) {
  StridedIndex index = make_index({3, 1LL << 31}, {1LL << 31, 1}, 0);
  EXPECT_TRUE(index.contiguous);
  index.contiguous = false;  // force the general path
  EXPECT_EQ(index.storage((1LL << 31) * 2 + 7), (1LL << 32) + 7);
  EXPECT_EQ(index.numel(), 3 * (1LL << 31));
}

TEST(TensorView, RefusesOutOfBoundsAndOverlappingOutputs) {
  std::vector<float> storage(10);
  EXPECT_EQ(code_of([&] { validate_input(view_of(storage, {11}, {1}, 0), "input"); }), ErrorCode::out_of_bounds);
  EXPECT_EQ(code_of([&] { validate_input(view_of(storage, {5}, {2}, 2), "input"); }), ErrorCode::out_of_bounds);
  EXPECT_EQ(code_of([&] { validate_input(view_of(storage, {2}, {-1}, 1), "input"); }), ErrorCode::invalid_argument);
  EXPECT_NO_THROW(validate_input(view_of(storage, {4, 3}, {0, 1}, 0), "input"));  // broadcast input is fine
  EXPECT_EQ(code_of([&] { validate_output(view_of(storage, {4, 3}, {0, 1}, 0), "output"); }),
            ErrorCode::overlapping_output);
  EXPECT_EQ(code_of([&] { validate_output(view_of(storage, {3, 3}, {2, 1}, 0), "output"); }),
            ErrorCode::overlapping_output);
  EXPECT_NO_THROW(validate_output(view_of(storage, {3, 3}, {3, 1}, 0), "output"));
  EXPECT_NO_THROW(validate_output(view_of(storage, {2, 2}, {1, 5}, 0), "output"));
}

TEST(TensorView, ErrorMessagesNameTheProblem) {
  std::vector<float> storage(10);
  try {
    validate_input(view_of(storage, {11}, {1}, 0), "quantize input");
    FAIL();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("quantize input"), std::string::npos) << message;
    EXPECT_NE(message.find("storage holds 10"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace bitparity
