#pragma once
// The contiguous fast path of the 32-bit step: each thread moves four consecutive elements with one
// vector load or store per tensor (16 bytes of fp32, 8 of a 16-bit dtype), and runs the same element
// body, conversions and stores (optim_body.hpp) on each lane. P2, P3 and P5 compare it with the
// strided path bit for bit.
#include <cuda_runtime.h>

#include <cstdint>

#include "bitparity/kernels/optim_body.hpp"

namespace bitparity::cuda {

inline constexpr int kLanes = 4;

__device__ inline void load_lanes(const void* base, DType dtype, std::int64_t at, float out[kLanes]) {
  if (dtype == DType::f32) {
    const float4 v = *reinterpret_cast<const float4*>(static_cast<const float*>(base) + at);
    const float lanes[kLanes] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < kLanes; ++j) out[j] = load_as_float(lanes, DType::f32, j);
  } else {
    const uint2 v = *reinterpret_cast<const uint2*>(static_cast<const std::uint16_t*>(base) + at);
    const std::uint16_t lanes[kLanes] = {static_cast<std::uint16_t>(v.x), static_cast<std::uint16_t>(v.x >> 16),
                                         static_cast<std::uint16_t>(v.y), static_cast<std::uint16_t>(v.y >> 16)};
#pragma unroll
    for (int j = 0; j < kLanes; ++j) out[j] = load_as_float(lanes, dtype, j);
  }
}

__device__ inline void store_parameter_lanes(void* base, DType dtype, std::int64_t at, const float in[kLanes]) {
  if (dtype == DType::f32) {
    float lanes[kLanes];
#pragma unroll
    for (int j = 0; j < kLanes; ++j) store_computed_float(lanes, DType::f32, j, in[j]);
    *reinterpret_cast<float4*>(static_cast<float*>(base) + at) = make_float4(lanes[0], lanes[1], lanes[2], lanes[3]);
  } else {
    std::uint16_t lanes[kLanes];
#pragma unroll
    for (int j = 0; j < kLanes; ++j) store_computed_float(lanes, dtype, j, in[j]);
    *reinterpret_cast<uint2*>(static_cast<std::uint16_t*>(base) + at) =
        make_uint2(lanes[0] | (static_cast<unsigned>(lanes[1]) << 16), lanes[2] | (static_cast<unsigned>(lanes[3]) << 16));
  }
}

// Groups of kLanes elements from the views' offsets; `skip` as in apply_kernel.
template <OptimizerKind K>
__global__ void __launch_bounds__(1024) apply_lanes_kernel(const __grid_constant__ OptimizerParams p, std::int64_t groups, const float* skip) {
  if (skip != nullptr && *skip != 0.0f) return;
  constexpr int states = state_count(K);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    const std::int64_t i = g * kLanes;
    float param[kLanes], grad[kLanes], state[states > 0 ? states : 1][kLanes];
    load_lanes(p.param, p.param_dtype, p.param_index.offset + i, param);
    load_lanes(p.grad, p.grad_dtype, p.grad_index.offset + i, grad);
#pragma unroll
    for (int k = 0; k < states; ++k) load_lanes(p.state[k], DType::f32, p.state_index[k].offset + i, state[k]);
#pragma unroll
    for (int j = 0; j < kLanes; ++j) {
      ElementValues e;
      e.p = param[j];
      e.g = grad[j];
#pragma unroll
      for (int k = 0; k < states; ++k) e.s[k] = state[k][j];
      optimizer_element_of<K>(p.s, e);
      param[j] = e.p;
#pragma unroll
      for (int k = 0; k < states; ++k) state[k][j] = canonical_state(e.s[k]);
    }
    store_parameter_lanes(p.param, p.param_dtype, p.param_index.offset + i, param);
#pragma unroll
    for (int k = 0; k < states; ++k) {
      *reinterpret_cast<float4*>(p.state[k] + p.state_index[k].offset + i) =
          make_float4(state[k][0], state[k][1], state[k][2], state[k][3]);
    }
  }
}

__global__ void __launch_bounds__(1024) scan_gradient_lanes_kernel(const __grid_constant__ OptimizerParams p, std::int64_t groups, float* nonfinite) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    float grad[kLanes];
    load_lanes(p.grad, p.grad_dtype, p.grad_index.offset + g * kLanes, grad);
    bool any = false;
#pragma unroll
    for (int j = 0; j < kLanes; ++j) any = any || nonfinite_gradient_value(grad[j]);
    if (any) *nonfinite = 1.0f;  // every writer writes 1: the race is benign
  }
}

// Whether the fast path may run: every view contiguous, each tensor's first element aligned to its
// vector width, and the caller's launch the default one (other launches take the strided path, so
// P3 compares the two).
inline bool lanes_apply(const OptimizerParams& p, const LaunchConfig& launch) {
  if (launch.threads != 0 || launch.max_grid != 0 || launch.blocks_per_launch != 0 || p.numel < kLanes) return false;
  auto aligned = [](const void* base, DType dtype, const StridedIndex& index) {
    const std::int64_t width = dtype == DType::f32 ? 4 : 2;
    const auto address = reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(index.offset * width);
    return index.contiguous && address % static_cast<std::uintptr_t>(width * kLanes) == 0;
  };
  if (!aligned(p.param, p.param_dtype, p.param_index) || !aligned(p.grad, p.grad_dtype, p.grad_index)) return false;
  for (int k = 0; k < state_count(p.kind); ++k) {
    if (!aligned(p.state[k], DType::f32, p.state_index[k])) return false;
  }
  return true;
}

}  // namespace bitparity::cuda
