// Built without the CUDA toolkit's NCCL: the nccl communicator says so.
#include "bitparity/distributed/communicators.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

bool nccl_built() { return false; }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator&, int) {
  throw Error(ErrorCode::device_unavailable,
              "this bitparity was built without NCCL (it needs nvcc and the CUDA toolkit's libnccl); use --communicator mpi");
}

}  // namespace bitparity::distributed
