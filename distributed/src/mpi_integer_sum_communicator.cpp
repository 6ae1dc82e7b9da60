// MPI reducing only with MPI_SUM over uint64 lanes: the reduction NCCL offers, checked on any machine.
#include <mpi.h>

#include <climits>

#include "bitparity/distributed/communicators.hpp"
#include "bitparity/distributed/integer_sum_communicator.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

namespace {

int checked(std::size_t count, const char* what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw Error(ErrorCode::invalid_argument, std::string(what) + ": more than 2^31-1 items in one collective");
  }
  return static_cast<int>(count);
}

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) throw Error(ErrorCode::invalid_argument, std::string(call) + " failed");
}

class MpiIntegerSumCommunicator final : public IntegerSumCommunicator {
 public:
  MpiIntegerSumCommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_gather(const void* send, std::size_t bytes_per_rank, void* receive) override {
    const int count = checked(bytes_per_rank, "all_gather");
    check(MPI_Allgather(send, count, MPI_BYTE, receive, count, MPI_BYTE, MPI_COMM_WORLD), "MPI_Allgather");
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    check(MPI_Bcast(data, checked(bytes, "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
  }

 protected:
  void reduce_scatter_sum(const std::uint64_t* send, std::uint64_t* receive, std::size_t count) override {
    check(MPI_Reduce_scatter_block(send, receive, checked(count, "reduce_scatter"), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Reduce_scatter_block");
  }
  void all_reduce_sum_in_place(std::uint64_t* lanes, std::size_t count) override {
    check(MPI_Allreduce(MPI_IN_PLACE, lanes, checked(count, "all_reduce"), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_integer_sum_communicator() { return std::make_unique<MpiIntegerSumCommunicator>(); }

}  // namespace bitparity::distributed
