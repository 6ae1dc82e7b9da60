#pragma once
// The values of a training run as pure functions of (seed, parameter id, element), and of (seed,
// step, microbatch, parameter id, element) for gradients, so that any rank can produce any piece
// and check any other rank's results without receiving them.
#include <cstdint>
#include <vector>

#include "bitparity/kernels/dtype.hpp"

namespace bitparity::distributed {

// Initial parameter values, rounded to `dtype`: varied signs and exponents, zeros now and then.
std::vector<float> initial_parameter(std::uint64_t seed, std::uint64_t parameter_id, std::int64_t numel, DType dtype);
// One microbatch's gradient of one parameter at `step`, rounded to `dtype`. Some steps plant one
// infinity (every rank then skips the step, as GradScaler does).
std::vector<float> microbatch_gradient(std::uint64_t seed, std::int64_t step, int microbatch, std::uint64_t parameter_id,
                                       std::int64_t numel, DType dtype);

}  // namespace bitparity::distributed
