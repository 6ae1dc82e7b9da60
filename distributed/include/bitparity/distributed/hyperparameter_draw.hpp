#pragma once
// Random hyperparameters for a multi-rank case, read from the optimizer's descriptor: each one a
// sample of its catalogued values (never a zero that would hide every error), a gradient scale,
// maximize now and then, and update-norm clipping for the 32-bit elementwise optimizers.
#include <random>

#include "bitparity/kernels/optimizer.hpp"

namespace bitparity::distributed {

Hyperparameters draw_hyperparameters(OptimizerKind kind, bool eight_bit, std::mt19937_64& random);

}  // namespace bitparity::distributed
