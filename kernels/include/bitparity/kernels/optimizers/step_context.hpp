#pragma once
// What a descriptor's host_scalars reads: the hyperparameters and the step's bias corrections,
// computed once in double by the common part of the host scalars.
#include "bitparity/kernels/optimizer_types.hpp"

namespace bitparity::descriptors {

struct StepContext {
  const Hyperparameters& h;
  double t;                 // the step as a double
  double bias_correction1;  // 1 - beta1^t
  double bias_correction2;  // 1 - beta2^t
};

}  // namespace bitparity::descriptors
