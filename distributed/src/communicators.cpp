#include "bitparity/distributed/communicators.hpp"

#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

const char* communicator_name(CommunicatorKind kind) {
  switch (kind) {
    case CommunicatorKind::mpi: return "mpi";
    case CommunicatorKind::mpi_integer_sum: return "mpi-integer-sum";
    case CommunicatorKind::nccl: return "nccl";
  }
  return "?";
}

CommunicatorKind parse_communicator_kind(const std::string& name) {
  for (CommunicatorKind kind : {CommunicatorKind::mpi, CommunicatorKind::mpi_integer_sum, CommunicatorKind::nccl}) {
    if (name == communicator_name(kind)) return kind;
  }
  throw Error(ErrorCode::invalid_argument, "unknown communicator '" + name + "'; use mpi, mpi-integer-sum or nccl");
}

}  // namespace bitparity::distributed
