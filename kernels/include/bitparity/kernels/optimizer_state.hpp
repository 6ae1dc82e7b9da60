#pragma once
// The state of one parameter tensor for an optimizer step, owned, on the parameter's device: 8-bit
// blockwise for tensors of at least min_8bit_size elements, fp32 below it (as bitsandbytes does
// for small tensors). path() says which one a tensor took; bytes() its optimizer-state memory.
#include <cstdint>
#include <string>
#include <vector>

#include "bitparity/kernels/optimizer8.hpp"

namespace bitparity {

struct StateOptions {
  bool eight_bit = true;
  std::int64_t blocksize = 256;
  std::int64_t min_8bit_size = 4096;  // smaller tensors keep fp32 states; 0 = always 8-bit
  StateMaps maps{};                   // 8-bit states: the maps instead of the optimizer's own
};

enum class StatePath { fp32, eight_bit };
const char* state_path_name(StatePath path);

// The plan of a tensor's states without allocating them: the path it takes and the bytes of each
// buffer (fp32: one per state; 8-bit: codes then absmax per state). Validates the block size and
// the maps.
struct StatePlan {
  StatePath path = StatePath::fp32;
  std::vector<std::int64_t> buffer_bytes;
  std::int64_t bytes() const;
};
StatePlan plan_state(OptimizerKind kind, std::int64_t numel, const StateOptions& options);

class OptimizerState {
 public:
  // Zero-initialized states (codes of +0 with absmax 0, or fp32 zeros) for `numel` elements.
  OptimizerState(OptimizerKind kind, std::int64_t numel, Device device, const StateOptions& options = {});
  ~OptimizerState();
  OptimizerState(const OptimizerState&) = delete;
  OptimizerState& operator=(const OptimizerState&) = delete;

  StatePath path() const { return path_; }
  Device device() const { return device_; }
  // The raw buffers in plan order (fp32: one per state; 8-bit: codes then absmax per state), for
  // checkpoints: copied from or to host bytes, wherever the state lives.
  std::size_t buffer_count() const { return buffers_.size(); }
  std::int64_t buffer_bytes(std::size_t index) const { return sizes_.at(index); }
  void write_buffer(std::size_t index, const void* host_bytes, std::int64_t bytes);  // bytes must match
  std::vector<std::uint8_t> read_buffer(std::size_t index) const;
  std::int64_t bytes() const;  // optimizer-state bytes of this tensor
  // One step on this parameter with this state (dispatches to optimizer_step or optimizer8_step).
  bool step(const Hyperparameters& hyper, const TensorView& param, const TensorView& grad,
            const LaunchConfig& launch = {});
  std::vector<TensorView> fp32_states() const;
  std::vector<QuantizedState> quantized_states() const;

 private:
  void* allocate(std::int64_t bytes);

  OptimizerKind kind_;
  std::int64_t numel_;
  Device device_;
  StateOptions options_;
  StatePath path_;
  std::vector<void*> buffers_;
  std::vector<std::int64_t> sizes_;
};

}  // namespace bitparity
