#pragma once
// The CUDA 8-bit step's warp kernel (optim8_warp_cuda.cu): contiguous parameters and gradients of one
// dtype under the default launch; optim8_cuda.cu takes every other call.
#include <cuda_runtime.h>

#include <cstdint>

#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/optim8_body.hpp"

namespace bitparity::cuda {

// Where the caller asked for no launch shape of its own (those launches take the general kernel, so
// that P3q compares the two).
bool warp_step_applies(const Optimizer8Params& p, const LaunchConfig& launch);

// Queues the step of every quant block on `stream`; `counter` (device memory) counts the blocks with
// a non-finite new state; nonzero `*skip` (device memory, the gradient scan's flag) skips the step.
void launch_warp_step(int device, const Optimizer8Params& p, const CodeTable* tables, std::int64_t blocks, int* counter,
                      const float* skip, cudaStream_t stream);

}  // namespace bitparity::cuda
