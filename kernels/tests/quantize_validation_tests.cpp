// Bad input to the quantization entry points: a typed error naming the problem.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quantize.hpp"

namespace bitparity {
namespace {

std::string message_of(auto&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no error was raised";
  return "";
}

TEST(QuantizeValidation, RefusalsNameTheProblem) {
  std::vector<float> x(100, 1.0f), absmax(2), out(100);
  std::vector<std::uint8_t> codes(100), flags(2);
  const TensorView input = contiguous_view(x.data(), DType::f32, Device::cpu(), {100});
  const QuantizeOutputs outputs{contiguous_view(codes.data(), DType::u8, Device::cpu(), {100}),
                                contiguous_view(absmax.data(), DType::f32, Device::cpu(), {2}),
                                contiguous_view(flags.data(), DType::u8, Device::cpu(), {2})};
  EXPECT_NE(message_of([&] { quantize_blockwise(input, QuantFormat::nf4, 64, outputs); }).find("must be packed4"),
            std::string::npos);
  QuantizeOutputs small = outputs;
  small.absmax = contiguous_view(absmax.data(), DType::f32, Device::cpu(), {1});
  EXPECT_NE(message_of([&] { quantize_blockwise(input, QuantFormat::linear8, 64, small); }).find("buffer of 2 elements"),
            std::string::npos);
  QuantizeOutputs elsewhere = outputs;
  elsewhere.codes.device = Device::cuda(0);
  EXPECT_NE(message_of([&] { quantize_blockwise(input, QuantFormat::linear8, 64, elsewhere); }).find("move it to cpu"),
            std::string::npos);
  TensorView integer_input = input;
  integer_input.dtype = DType::u8;
  EXPECT_NE(message_of([&] { quantize_blockwise(integer_input, QuantFormat::linear8, 64, outputs); })
                .find("must be f32, f16 or bf16"),
            std::string::npos);
  EXPECT_NE(message_of([&] { quantize_blockwise(input, QuantFormat::linear8, 48, outputs); }).find("use one of"),
            std::string::npos);
  TensorView broadcast_output = contiguous_view(out.data(), DType::f32, Device::cpu(), {100});
  broadcast_output.index = make_index({10, 10}, {0, 1}, 0);
  EXPECT_NE(message_of([&] { dequantize_blockwise(outputs.codes, outputs.absmax, QuantFormat::linear8, 64, broadcast_output); })
                .find("writes some storage elements more than once"),
            std::string::npos);
}

}  // namespace
}  // namespace bitparity
