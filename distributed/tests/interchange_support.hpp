#pragma once
// The optimizer whose checkpoint the safetensors interchange fixtures hold
// (fixtures/interchange/safetensors): written by bitparity, then rewritten by the reference
// implementation. The fixtures' source program and the interchange test build it alike.
#include "bitparity/distributed/rank_parity.hpp"
#include "bitparity/distributed/sharded_optimizer.hpp"

namespace bitparity::distributed {

inline constexpr int kInterchangeSteps = 2;

// adam with 8-bit states on bitsandbytes' x86 maps (so the checkpoint carries maps of its own), one
// rank, bf16 parameters.
inline ShardedConfig interchange_config() {
  ShardedConfig config = draw_sharded_config(OptimizerKind::adam, true, DType::bf16, ShardLayout::zero12, 7, 1);
  config.regroup_step = 0;
  config.maps.signed_states = QuantFormat::dynamic8_signed_fused;
  config.maps.nonnegative_states = QuantFormat::dynamic8_unsigned_fused;
  return config;
}

}  // namespace bitparity::distributed
