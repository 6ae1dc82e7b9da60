#pragma once
// 8-bit blockwise optimizers: the 32-bit optimizer's step on dequantized states, each state kept as
// one byte per element (signed dynamic map for momenta, unsigned for second moments) and one fp32
// absmax per block of `blocksize` logical elements.
#include <cstdint>
#include <optional>
#include <vector>

#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {

struct QuantizedState {
  TensorView codes;   // contiguous u8 buffer, one code per logical element of the parameter
  TensorView absmax;  // contiguous f32 buffer, one per block
  // The 8-bit map the codes index; empty: the optimizer's own map for the state (state8_format).
  // A checkpoint's qmap1/qmap2, or the maps bitsandbytes builds on x86 (the fused variants).
  std::optional<QuantFormat> map{};
};

// Which map stores state k of an optimizer by default (throws for optimizers without an 8-bit variant).
QuantFormat state8_format(OptimizerKind kind, int state);
// The map of state k: `chosen` when given, else the default. Throws Error when `chosen` cannot hold
// the state: a map that is not 8-bit, or one with no negative values for a state that has them.
QuantFormat state8_map(OptimizerKind kind, int state, const std::optional<QuantFormat>& chosen);
bool has_8bit_variant(OptimizerKind kind);

// The 8-bit maps an optimizer's states take instead of its own (`--map`, a checkpoint's
// qmap1/qmap2): one with negative values for the states that can be negative, one without for the
// non-negative states (second moments). Empty: the optimizer's own map.
struct StateMaps {
  std::optional<QuantFormat> signed_states, nonnegative_states;
  // The map chosen for state k of `kind`, or empty: the optimizer's own.
  std::optional<QuantFormat> of_state(OptimizerKind kind, int state) const;
  bool any() const { return signed_states.has_value() || nonnegative_states.has_value(); }
  bool operator==(const StateMaps&) const = default;
};

struct Step8Report {
  bool nonfinite_gradient = false;        // nothing changed
  std::int64_t nonfinite_state_blocks = 0; // blocks whose new state overflowed (absmax NaN, zero codes)
};

Step8Report optimizer8_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                            const TensorView& grad, const std::vector<QuantizedState>& states, std::int64_t blocksize,
                            const LaunchConfig& launch = {});

// Optimizer-state bytes per parameter element: 8-bit (codes plus absmax) and 32-bit.
double state_bytes_per_element_8bit(OptimizerKind kind, std::int64_t blocksize);
double state_bytes_per_element_32bit(OptimizerKind kind);

}  // namespace bitparity
