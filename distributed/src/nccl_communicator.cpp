// NCCL on one GPU per rank. Buffers of the Communicator interface are host memory: each collective
// stages them through device buffers on this rank's stream and waits for the result. Reductions are
// integer sums over lanes (IntegerSumCommunicator), since NCCL has no user-defined operations.
#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <cstring>
#include <vector>

#include "bitparity/distributed/communicators.hpp"
#include "bitparity/distributed/integer_sum_communicator.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

namespace {

// Called once the rank's GPU is known to exist: a failure is the machine's (exit 5), not bad input.
void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw Error(ErrorCode::cuda_failure, std::string(call) + " failed: " + cudaGetErrorString(status));
}

// What each rank tells the others before NCCL starts, so that every rank refuses the same world.
struct RankGpu {
  char problem[240] = {};          // empty: this rank's GPU is usable
  char host[64] = {};
  std::array<unsigned char, 16> uuid = {};
  int device = -1;
};

RankGpu describe_gpu(int gpu) {
  RankGpu mine;
  mine.device = gpu;
  gethostname(mine.host, sizeof mine.host - 1);
  auto fail = [&](const std::string& why) { std::snprintf(mine.problem, sizeof mine.problem, "%s", why.c_str()); };
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fail("no CUDA device here (NCCL needs one GPU per rank)");
  } else if (gpu < 0 || gpu >= count) {
    fail("cuda:" + std::to_string(gpu) + " does not exist (" + std::to_string(count) + " device(s) here)");
  } else {
    cudaDeviceProp properties{};
    const cudaError_t status = cudaGetDeviceProperties(&properties, gpu);
    if (status != cudaSuccess) fail(std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(status));
    std::memcpy(mine.uuid.data(), properties.uuid.bytes, 16);
  }
  return mine;
}

class NcclCommunicator final : public IntegerSumCommunicator {
 public:
  NcclCommunicator(Communicator& bootstrap, int gpu) : rank_(bootstrap.rank()), size_(bootstrap.size()), gpu_(gpu) {
    refuse_unless_every_rank_has_its_own_gpu(bootstrap, gpu);
    check_cuda(cudaSetDevice(gpu_), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ncclUniqueId id{};
    if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    bootstrap.broadcast(&id, sizeof id, 0);
    check_nccl(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  }
  ~NcclCommunicator() override {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    if (device_buffer_ != nullptr) cudaFree(device_buffer_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_gather(const void* send, std::size_t bytes_per_rank, void* receive) override {
    if (bytes_per_rank == 0) return;  // every rank sends the same count, so every rank skips
    auto* device = static_cast<unsigned char*>(device_bytes(bytes_per_rank * static_cast<std::size_t>(size_)));
    unsigned char* mine = device + bytes_per_rank * static_cast<std::size_t>(rank_);  // in place
    copy_in(mine, send, bytes_per_rank);
    check_nccl(ncclAllGather(mine, device, bytes_per_rank, ncclUint8, comm_, stream_), "ncclAllGather");
    copy_out(receive, device, bytes_per_rank * static_cast<std::size_t>(size_));
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    if (bytes == 0) return;
    void* device = device_bytes(bytes);
    copy_in(device, data, bytes);
    check_nccl(ncclBroadcast(device, device, bytes, ncclUint8, root, comm_, stream_), "ncclBroadcast");
    copy_out(data, device, bytes);
  }

 protected:
  void reduce_scatter_sum(const std::uint64_t* send, std::uint64_t* receive, std::size_t count) override {
    if (count == 0) return;
    const std::size_t total = count * static_cast<std::size_t>(size_);
    auto* device = static_cast<std::uint64_t*>(device_bytes(total * sizeof(std::uint64_t)));
    copy_in(device, send, total * sizeof(std::uint64_t));
    std::uint64_t* mine = device + count * static_cast<std::size_t>(rank_);  // in place
    check_nccl(ncclReduceScatter(device, mine, count, ncclUint64, ncclSum, comm_, stream_), "ncclReduceScatter");
    copy_out(receive, mine, count * sizeof(std::uint64_t));
  }
  void all_reduce_sum_in_place(std::uint64_t* lanes, std::size_t count) override {
    if (count == 0) return;
    void* device = device_bytes(count * sizeof(std::uint64_t));
    copy_in(device, lanes, count * sizeof(std::uint64_t));
    check_nccl(ncclAllReduce(device, device, count, ncclUint64, ncclSum, comm_, stream_), "ncclAllReduce");
    copy_out(lanes, device, count * sizeof(std::uint64_t));
  }

 private:
  void refuse_unless_every_rank_has_its_own_gpu(Communicator& bootstrap, int gpu) {
    const RankGpu mine = describe_gpu(gpu);
    std::vector<RankGpu> all(static_cast<std::size_t>(size_));
    bootstrap.all_gather(&mine, sizeof mine, all.data());
    for (int r = 0; r < size_; ++r) {
      if (all[static_cast<std::size_t>(r)].problem[0] != '\0') {
        throw Error(ErrorCode::device_unavailable, "nccl: rank " + std::to_string(r) + ": " + all[static_cast<std::size_t>(r)].problem);
      }
    }
    for (int a = 0; a < size_; ++a) {
      for (int b = a + 1; b < size_; ++b) {
        const RankGpu &first = all[static_cast<std::size_t>(a)], &second = all[static_cast<std::size_t>(b)];
        if (first.uuid == second.uuid && std::strcmp(first.host, second.host) == 0) {
          throw Error(ErrorCode::invalid_argument,
                      "nccl: ranks " + std::to_string(a) + " and " + std::to_string(b) + " both use cuda:" +
                          std::to_string(first.device) + " on " + first.host +
                          ", and one GPU cannot hold two ranks of an NCCL communicator; give each rank its own GPU "
                          "(--rank-implementation R=cuda:N) or use --communicator mpi");
        }
      }
    }
  }
  void check_nccl(ncclResult_t status, const char* call) {
    if (status == ncclSuccess) return;
    std::string why = ncclGetErrorString(status);
    if (comm_ != nullptr) {
      const char* last = ncclGetLastError(comm_);
      if (last != nullptr && *last != '\0') why += std::string(" (") + last + ")";
    }
    throw Error(ErrorCode::cuda_failure, std::string(call) + " failed on rank " + std::to_string(rank_) + ": " + why);
  }
  void* device_bytes(std::size_t bytes) {
    if (bytes > device_capacity_) {
      if (device_buffer_ != nullptr) check_cuda(cudaFree(device_buffer_), "cudaFree");
      device_buffer_ = nullptr;
      check_cuda(cudaMalloc(&device_buffer_, bytes), "cudaMalloc");
      device_capacity_ = bytes;
    }
    return device_buffer_;
  }
  void copy_in(void* device, const void* host, std::size_t bytes) {
    check_cuda(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
  }
  // Waits for the collective: the host buffer holds the result on return.
  void copy_out(void* host, const void* device, std::size_t bytes) {
    check_cuda(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

  int rank_ = 0, size_ = 1, gpu_ = 0;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  void* device_buffer_ = nullptr;
  std::size_t device_capacity_ = 0;
};

}  // namespace

bool nccl_built() { return true; }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int gpu) {
  return std::make_unique<NcclCommunicator>(bootstrap, gpu);
}

}  // namespace bitparity::distributed
