#pragma once
// A communicator whose collectives reduce only by integer sums over uint64 lanes (NCCL's ncclSum on
// ncclUint64, or MPI_SUM). The exact reductions of Communicator are built on it through the integer
// lanes (integer_lanes.hpp), so they stay exact and order-free without user-defined operations.
#include <vector>

#include "bitparity/distributed/communicator.hpp"

namespace bitparity::distributed {

class IntegerSumCommunicator : public Communicator {
 public:
  void reduce_scatter(const ExactFloatSum* send, ExactFloatSum* receive, std::size_t count) final;
  void all_reduce(ExactSquareSum* values, std::size_t count) final;
  std::int64_t all_reduce_sum(std::int64_t value) final;
  bool all_reduce_any(bool value) final;
  void barrier() final;

 protected:
  // `send` holds size() * count lanes; rank r receives the sum of every rank's r-th slice of `count`.
  virtual void reduce_scatter_sum(const std::uint64_t* send, std::uint64_t* receive, std::size_t count) = 0;
  virtual void all_reduce_sum_in_place(std::uint64_t* lanes, std::size_t count) = 0;

 private:
  std::vector<std::uint64_t> send_lanes_, receive_lanes_;
};

}  // namespace bitparity::distributed
