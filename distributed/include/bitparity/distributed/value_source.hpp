#pragma once
// The values of a training run as pure functions of (seed, parameter id, element), and of (seed,
// step, microbatch, parameter id, element) for gradients, so that any rank can produce any piece
// and check any other rank's results without receiving them.
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "bitparity/kernels/dtype.hpp"

namespace bitparity::distributed {

// Initial parameter values, rounded to `dtype`: varied signs and exponents, zeros now and then.
std::vector<float> initial_parameter(std::uint64_t seed, std::uint64_t parameter_id, std::int64_t numel, DType dtype);
// One microbatch's gradient of one parameter at `step`, rounded to `dtype`. Some steps plant one
// infinity (every rank then skips the step, as GradScaler does).
std::vector<float> microbatch_gradient(std::uint64_t seed, std::int64_t step, int microbatch, std::uint64_t parameter_id,
                                       std::int64_t numel, DType dtype);

// The values of a saved case (a shrunk rank case): read back instead of drawn, so the case replays
// without the generator. Every value is already in its dtype.
struct RecordedValues {
  std::map<std::uint64_t, std::vector<float>> initial;  // by parameter id
  std::map<std::tuple<std::int64_t, int, std::uint64_t>, std::vector<float>> gradients;  // by (step, microbatch, id)
};

// The recorded values where there are some (`recorded` not null), else the generator's; a value the
// recording lacks, or one of another length, throws Error naming it.
std::vector<float> initial_parameter(const RecordedValues* recorded, std::uint64_t seed, std::uint64_t parameter_id,
                                     std::int64_t numel, DType dtype);
std::vector<float> microbatch_gradient(const RecordedValues* recorded, std::uint64_t seed, std::int64_t step, int microbatch,
                                       std::uint64_t parameter_id, std::int64_t numel, DType dtype);

}  // namespace bitparity::distributed
