#include "bitparity/kernels/optimizer_state.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quantize.hpp"

namespace bitparity {

const char* state_path_name(StatePath path) { return path == StatePath::fp32 ? "fp32" : "8-bit"; }

std::int64_t StatePlan::bytes() const {
  std::int64_t total = 0;
  for (auto size : buffer_bytes) total += size;
  return total;
}

StatePlan plan_state(OptimizerKind kind, std::int64_t numel, const StateOptions& options) {
  if (numel < 0) throw Error(ErrorCode::invalid_argument, "a tensor size must be >= 0, got " + std::to_string(numel));
  if (options.min_8bit_size < 0) {
    throw Error(ErrorCode::invalid_argument, "min_8bit_size must be >= 0 (0: every tensor 8-bit), got " +
                                                 std::to_string(options.min_8bit_size));
  }
  StatePlan plan;
  const bool small = options.min_8bit_size > 0 && numel < options.min_8bit_size;
  plan.path = options.eight_bit && has_8bit_variant(kind) && !small ? StatePath::eight_bit : StatePath::fp32;
  if (plan.path == StatePath::eight_bit) {
    validate_block_size(QuantFormat::dynamic8_signed, options.blocksize);
    for (int k = 0; k < optimizer_info(kind).states; ++k) (void)state8_map(kind, k, options.maps.of_state(kind, k));
  }
  for (int k = 0; k < optimizer_info(kind).states; ++k) {
    if (plan.path == StatePath::fp32) {
      plan.buffer_bytes.push_back(4 * numel);
    } else {
      plan.buffer_bytes.push_back(numel);
      plan.buffer_bytes.push_back(4 * block_count(numel, options.blocksize));
    }
  }
  return plan;
}

OptimizerState::OptimizerState(OptimizerKind kind, std::int64_t numel, Device device, const StateOptions& options)
    : kind_(kind), numel_(numel), device_(device), options_(options) {
  const StatePlan plan = plan_state(kind, numel, options);
  path_ = plan.path;
  sizes_ = plan.buffer_bytes;
  for (auto size : sizes_) buffers_.push_back(allocate(size));
  // Zero states: fp32 zeros; codes of +0 (every map has it) with absmax 0, which dequantizes to 0.
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    std::uint8_t fill = 0;
    if (path_ == StatePath::eight_bit && i % 2 == 0) {
      const int k = static_cast<int>(i / 2);
      fill = code_table(state8_map(kind, k, options_.maps.of_state(kind, k))).zero_code;
    }
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(sizes_[i]), fill);
    if (device_.kind == DeviceKind::cpu) {
      if (!bytes.empty()) std::memcpy(buffers_[i], bytes.data(), bytes.size());
    } else if (!bytes.empty()) {
      cuda::copy_to_device(device_.index, buffers_[i], bytes.data(), sizes_[i]);
    }
  }
}

OptimizerState::~OptimizerState() {
  for (void* buffer : buffers_) {
    if (device_.kind == DeviceKind::cpu) {
      std::free(buffer);
    } else {
      cuda::release(buffer);
    }
  }
}

void OptimizerState::write_buffer(std::size_t index, const void* host_bytes, std::int64_t bytes) {
  if (index >= buffers_.size() || bytes != sizes_[index]) {
    throw Error(ErrorCode::invalid_argument, "state buffer " + std::to_string(index) + " holds " +
                                                 (index < sizes_.size() ? std::to_string(sizes_[index]) : std::string("no")) +
                                                 " bytes, given " + std::to_string(bytes));
  }
  if (bytes == 0) return;
  if (device_.kind == DeviceKind::cpu) {
    std::memcpy(buffers_[index], host_bytes, static_cast<std::size_t>(bytes));
  } else {
    cuda::copy_to_device(device_.index, buffers_[index], host_bytes, bytes);
  }
}

std::vector<std::uint8_t> OptimizerState::read_buffer(std::size_t index) const {
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(sizes_.at(index)));
  if (bytes.empty()) return bytes;
  if (device_.kind == DeviceKind::cpu) {
    std::memcpy(bytes.data(), buffers_[index], bytes.size());
  } else {
    cuda::copy_to_host(device_.index, bytes.data(), buffers_[index], sizes_[index]);
  }
  return bytes;
}

void* OptimizerState::allocate(std::int64_t bytes) {
  if (device_.kind == DeviceKind::cuda) return cuda::allocate(device_.index, bytes);
  void* pointer = std::malloc(static_cast<std::size_t>(bytes > 0 ? bytes : 1));
  if (!pointer) throw Error(ErrorCode::invalid_argument, "out of host memory for optimizer states");
  return pointer;
}

std::int64_t OptimizerState::bytes() const {
  std::int64_t total = 0;
  for (auto size : sizes_) total += size;
  return total;
}

std::vector<TensorView> OptimizerState::fp32_states() const {
  std::vector<TensorView> views;
  if (path_ != StatePath::fp32) return views;
  for (void* buffer : buffers_) views.push_back(contiguous_view(buffer, DType::f32, device_, {numel_}));
  return views;
}

std::vector<QuantizedState> OptimizerState::quantized_states() const {
  std::vector<QuantizedState> states;
  if (path_ != StatePath::eight_bit) return states;
  for (std::size_t i = 0; i + 1 < buffers_.size(); i += 2) {
    const int k = static_cast<int>(i / 2);
    states.push_back({contiguous_view(buffers_[i], DType::u8, device_, {numel_}),
                      contiguous_view(buffers_[i + 1], DType::f32, device_, {block_count(numel_, options_.blocksize)}),
                      options_.maps.of_state(kind_, k)});
  }
  return states;
}

bool OptimizerState::step(const Hyperparameters& hyper, const TensorView& param, const TensorView& grad,
                          const LaunchConfig& launch) {
  // A parameter on another device is left to the step's own validation, which refuses it as
  // device_mismatch naming each state and both devices (a state left behind by a resume).
  if (param.numel() != numel_) {
    throw Error(ErrorCode::invalid_argument, "this optimizer state holds " + std::to_string(numel_) + " elements on " +
                                                 device_.str() + "; the parameter is " + param.describe());
  }
  if (path_ == StatePath::fp32) return optimizer_step(kind_, hyper, param, grad, fp32_states(), launch).nonfinite_gradient;
  return optimizer8_step(kind_, hyper, param, grad, quantized_states(), options_.blocksize, launch).nonfinite_gradient;
}

}  // namespace bitparity
