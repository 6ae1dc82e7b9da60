#pragma once
// The collectives the sharded driver needs, behind one interface so that a world can mix CPU ranks
// (MPI) and GPU ranks (NCCL). Every reduction is exact and order-free: gradients merge as
// ExactFloatSum accumulators, norms as ExactSquareSum, counts as integers. Buffers are host memory.
#include <cstddef>
#include <cstdint>

#include "bitparity/kernels/exact_float_sum.hpp"
#include "bitparity/kernels/exact_sum.hpp"

namespace bitparity::distributed {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // `receive` holds size() * bytes_per_rank bytes: rank r's `send` lands at r * bytes_per_rank.
  virtual void all_gather(const void* send, std::size_t bytes_per_rank, void* receive) = 0;
  // `send` holds size() * count accumulators; rank r receives the merge of every rank's r-th slice.
  virtual void reduce_scatter(const ExactFloatSum* send, ExactFloatSum* receive, std::size_t count) = 0;
  virtual void all_reduce(ExactSquareSum* values, std::size_t count) = 0;
  virtual std::int64_t all_reduce_sum(std::int64_t value) = 0;
  virtual bool all_reduce_any(bool value) = 0;
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  virtual void barrier() = 0;
};

}  // namespace bitparity::distributed
