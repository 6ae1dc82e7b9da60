#pragma once
// The seed-000 class across ranks (field bug 1). A tensor is cut with torch.chunk along one of its
// dimensions, each rank holds one chunk, a real all_gather exchanges the chunks, and the gathered
// buffer is used through a non-contiguous view: the chunks moved back into place (that dimension
// split in two), or torch.chunk pieces of that view along any of its dimensions. Every entry point,
// on every rank, must give the bits of the same logical tensor made contiguous (or refuse the view
// with an error), and every rank the same bits.
#include <cstdint>
#include <string>
#include <vector>

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

// One case, the same on every rank: drawn from a seed, or read from a saved rank case
// (gathered_case.hpp), so that it replays without the generator.
struct GatheredCase {
  GatheredTarget target;
  std::vector<std::int64_t> sizes;  // the logical tensor
  int dim = 0;                      // chunked along it, one chunk per rank: sizes[dim] is a multiple of the world
  int piece_dim = -1;               // >= 0: used in torch.chunk pieces along this dim of the gathered view (sizes.size() + 1 dims)
  std::int64_t pieces = 1;
  std::int64_t blocksize = 64;
  Hyperparameters hyper;          // the optimizer families (its step is set at each step)
  DType convert_to = DType::f32;  // convert
  // The tensor of each step (one; two for the optimizer families), in logical order and in
  // target.dtype, and the optimizers' initial parameter: a piece of n elements starts from its first n.
  std::vector<std::vector<float>> tensors;
  std::vector<float> initial;
  std::int64_t numel() const;
  int steps() const { return static_cast<int>(tensors.size()); }
  std::string describe() const;
};

bool is_optimizer_family(fixtures::OperationFamily family);

// The case of `seed` on `world` ranks, every value drawn.
GatheredCase draw_gathered_case(const GatheredTarget& target, std::uint64_t seed, int world);
// Throws Error (invalid_argument) unless `world` ranks can hold the case: one chunk of sizes[dim] each.
void check_gathered_world(const GatheredCase& gathered_case, int world);
GatheredTally run_gathered_layout(const GatheredCase& gathered_case, Communicator& communicator,
                                  fixtures::Implementation& implementation);

}  // namespace bitparity::distributed
