#pragma once
// A world of one rank without MPI: every collective is a copy. For single-process use of the
// sharded driver and its checkpoints (tests, tools).
#include <cstring>

#include "bitparity/distributed/communicator.hpp"

namespace bitparity::distributed {

class SoloCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_gather(const void* send, std::size_t bytes_per_rank, void* receive) override {
    if (bytes_per_rank > 0) std::memmove(receive, send, bytes_per_rank);
  }
  void reduce_scatter(const ExactFloatSum* send, ExactFloatSum* receive, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) receive[i] = send[i];
  }
  void all_reduce(ExactSquareSum*, std::size_t) override {}
  std::int64_t all_reduce_sum(std::int64_t value) override { return value; }
  bool all_reduce_any(bool value) override { return value; }
  void broadcast(void*, std::size_t, int) override {}
  void barrier() override {}
};

}  // namespace bitparity::distributed
