#include "bitparity/distributed/value_source.hpp"

#include <cmath>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/philox.hpp"
#include "bitparity/properties/generators.hpp"

namespace bitparity::distributed {

namespace {

constexpr std::uint32_t kParameterStream = 0x9A7A0000u;

// A value with a 24-bit significand and an exponent in [-8, 4), zero one time in sixteen.
float value_from(const Philox4x32& bits, DType dtype) {
  if ((bits.v[2] & 15u) == 0) return 0.0f;
  const double significand = static_cast<double>(static_cast<std::int32_t>(bits.v[0] >> 8) - (1 << 23));
  const int exponent = static_cast<int>(bits.v[1] % 12u) - 8 - 23;
  return properties::round_to_dtype(std::ldexp(significand, exponent), dtype);
}

Philox4x32 draw(std::uint64_t seed, std::uint32_t stream, std::uint64_t parameter_id, std::int64_t index) {
  const Philox4x32 counter{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(static_cast<std::uint64_t>(index) >> 32),
                            static_cast<std::uint32_t>(parameter_id), stream ^ static_cast<std::uint32_t>(parameter_id >> 32)}};
  return philox4x32_10(counter, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

}  // namespace

std::vector<float> initial_parameter(std::uint64_t seed, std::uint64_t parameter_id, std::int64_t numel, DType dtype) {
  std::vector<float> values(static_cast<std::size_t>(numel));
  for (std::int64_t i = 0; i < numel; ++i) values[static_cast<std::size_t>(i)] = value_from(draw(seed, kParameterStream, parameter_id, i), dtype);
  return values;
}

std::vector<float> microbatch_gradient(std::uint64_t seed, std::int64_t step, int microbatch, std::uint64_t parameter_id,
                                       std::int64_t numel, DType dtype) {
  const std::uint32_t stream = static_cast<std::uint32_t>(step) * 64u + static_cast<std::uint32_t>(microbatch);
  std::vector<float> values(static_cast<std::size_t>(numel));
  for (std::int64_t i = 0; i < numel; ++i) values[static_cast<std::size_t>(i)] = value_from(draw(seed, stream, parameter_id, i), dtype);
  // One step in eight (by seed and step) plants an infinity in microbatch 0 of every parameter whose
  // id is divisible by 5: the whole step is skipped everywhere.
  const Philox4x32 skip = draw(seed, 0xFFFF0000u + static_cast<std::uint32_t>(step), 0, 0);
  if ((skip.v[0] & 7u) == 0 && microbatch == 0 && parameter_id % 5 == 0 && numel > 0) {
    values[static_cast<std::size_t>(skip.v[1] % static_cast<std::uint64_t>(numel))] = INFINITY;
  }
  return values;
}

namespace {

const std::vector<float>& recorded_values(const std::vector<float>* found, const std::string& what, std::int64_t numel) {
  if (found == nullptr) throw Error(ErrorCode::invalid_argument, "the saved case holds no " + what + "; save it again with bitparity fuzz");
  if (static_cast<std::int64_t>(found->size()) != numel) {
    throw Error(ErrorCode::invalid_argument, "the saved case holds " + std::to_string(found->size()) + " values of " + what + ", not " +
                                                 std::to_string(numel) + "; save it again with bitparity fuzz");
  }
  return *found;
}

}  // namespace

std::vector<float> initial_parameter(const RecordedValues* recorded, std::uint64_t seed, std::uint64_t parameter_id,
                                     std::int64_t numel, DType dtype) {
  if (recorded == nullptr) return initial_parameter(seed, parameter_id, numel, dtype);
  const auto found = recorded->initial.find(parameter_id);
  return recorded_values(found == recorded->initial.end() ? nullptr : &found->second,
                         "initial value of parameter " + std::to_string(parameter_id), numel);
}

std::vector<float> microbatch_gradient(const RecordedValues* recorded, std::uint64_t seed, std::int64_t step, int microbatch,
                                       std::uint64_t parameter_id, std::int64_t numel, DType dtype) {
  if (recorded == nullptr) return microbatch_gradient(seed, step, microbatch, parameter_id, numel, dtype);
  const auto found = recorded->gradients.find({step, microbatch, parameter_id});
  return recorded_values(found == recorded->gradients.end() ? nullptr : &found->second,
                         "gradient of parameter " + std::to_string(parameter_id) + " at step " + std::to_string(step) + ", microbatch " +
                             std::to_string(microbatch),
                         numel);
}

}  // namespace bitparity::distributed
