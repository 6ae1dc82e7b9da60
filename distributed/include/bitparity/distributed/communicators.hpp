#pragma once
// The communicators a world can run on, chosen by name (`sharded --communicator`):
//   mpi              Open MPI with exact user-defined reductions (the default; CPU and GPU ranks)
//   mpi-integer-sum  Open MPI reducing only by integer sums over lanes: NCCL's reduction, on any machine
//   nccl             NCCL on one GPU per rank, its unique id broadcast over MPI; every rank names a
//                    distinct GPU. Built with the CUDA toolkit's NCCL; elsewhere it says so.
#include <memory>
#include <string>

#include "bitparity/distributed/communicator.hpp"

namespace bitparity::distributed {

enum class CommunicatorKind { mpi, mpi_integer_sum, nccl };

const char* communicator_name(CommunicatorKind kind);
// Throws Error(invalid_argument) naming the three kinds.
CommunicatorKind parse_communicator_kind(const std::string& name);
bool nccl_built();

std::unique_ptr<Communicator> make_mpi_integer_sum_communicator();
// Collective over the world: every rank calls it with its own GPU. `bootstrap` carries NCCL's unique
// id. Two ranks on one GPU, a missing GPU or an NCCL failure throw on every rank (device_unavailable
// when this machine lacks the GPU or NCCL).
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int gpu);

}  // namespace bitparity::distributed
