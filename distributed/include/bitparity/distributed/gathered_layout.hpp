#pragma once
// The seed-000 class across ranks (field bug 1). A tensor is cut with torch.chunk along one of its
// dimensions, each rank holds one chunk, a real all_gather exchanges the chunks, and the gathered
// buffer is used through a non-contiguous view: the chunks moved back into place (that dimension
// split in two), or torch.chunk pieces of that view along any of its dimensions. Every entry point,
// on every rank, must give the bits of the same logical tensor made contiguous (or refuse the view
// with an error), and every rank the same bits.
#include <cstdint>
#include <string>

#include "bitparity/distributed/communicator.hpp"
#include "bitparity/fixtures/implementation.hpp"

namespace bitparity::distributed {

struct GatheredTarget {
  fixtures::OperationFamily family = fixtures::OperationFamily::optimizer_step;
  OptimizerKind kind = OptimizerKind::adam;           // for the optimizer families
  QuantFormat format = QuantFormat::dynamic8_signed;  // for quantize and dequantize
  DType dtype = DType::f32;                           // of the gathered tensor
};

struct GatheredTally {
  std::int64_t wrong = 0;              // elements unlike the contiguous case (summed over ranks)
  std::int64_t disagreeing_ranks = 0;  // ranks whose results differ from rank 0's
  std::int64_t refused = 0;            // views refused with an error (summed over ranks)
  std::int64_t checked = 0;            // elements compared (summed over ranks)
  std::string first_wrong;             // this rank's first finding and its case
};

// One drawn case (the same on every rank for the same seed and world size).
GatheredTally run_gathered_layout(const GatheredTarget& target, std::uint64_t seed, Communicator& communicator,
                                  fixtures::Implementation& implementation);

}  // namespace bitparity::distributed
