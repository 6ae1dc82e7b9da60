#pragma once
// The contiguous fast path of the 32-bit step: each thread moves four consecutive elements with one
// vector load or store per tensor (16 bytes of fp32, 8 of a 16-bit dtype), and runs the same element
// body, conversions and stores (optim_body.hpp) on each lane. P2, P3 and P5 compare it with the
// strided path bit for bit. And the non-finite gradient scan of a contiguous gradient.
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

// The non-finite gradient scan of a contiguous gradient whose first element is 16-byte aligned: each
// thread keeps kScanUnroll 16-byte loads in flight (4 fp32 or 8 16-bit elements each) over a grid that
// fills the device, and tests every element as gradient_nonfinite does. The H100 measured the scan of
// one fp32 gradient, one 16-byte load per thread, at about half of copy speed (0.041 ms at 2^24: the
// step with it 0.210 ms, with the caller's flag 0.169), and 16-bit gradients moved 8 bytes per thread.
inline constexpr int kScanThreads = 256;
inline constexpr int kScanUnroll = 4;

__global__ void __launch_bounds__(kScanThreads) scan_gradient_vectors_kernel(const __grid_constant__ OptimizerParams p,
                                                                             std::int64_t vectors, float* nonfinite) {
  const std::int64_t width = p.grad_dtype == DType::f32 ? 4 : 2;
  const auto* grad = reinterpret_cast<const uint4*>(static_cast<const char*>(p.grad) + p.grad_index.offset * width);
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  bool any = false;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; first < vectors;
       first += kScanUnroll * threads) {
    uint4 loaded[kScanUnroll];
#pragma unroll
    for (int j = 0; j < kScanUnroll; ++j) {
      const std::int64_t v = first + j * threads;
      loaded[j] = v < vectors ? grad[v] : make_uint4(0, 0, 0, 0);  // zeros are finite
    }
#pragma unroll
    for (int j = 0; j < kScanUnroll; ++j) {
      const std::uint32_t words[4] = {loaded[j].x, loaded[j].y, loaded[j].z, loaded[j].w};
      any |= packed_gradient_nonfinite(words, 4, p.grad_dtype);
    }
  }
  if (any) *nonfinite = 1.0f;  // every writer writes 1: the race is benign
}

// The 16-byte vectors the scan above takes: the whole gradient but a tail of fewer than one vector,
// where the gradient is contiguous and aligned and the caller asked for no launch shape of its own
// (those launches take the element scan, so that P2o and P3o compare the two). 0: none.
inline std::int64_t scan_vectors(const OptimizerParams& p, const LaunchConfig& launch) {
  if (launch.threads != 0 || launch.max_grid != 0 || launch.blocks_per_launch != 0 || !p.grad_index.contiguous) return 0;
  const std::int64_t width = p.grad_dtype == DType::f32 ? 4 : 2;
  const auto address = reinterpret_cast<std::uintptr_t>(p.grad) + static_cast<std::uintptr_t>(p.grad_index.offset * width);
  if (address % 16 != 0) return 0;
  return p.numel / (16 / width);
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
