#include "bitparity/distributed/integer_sum_communicator.hpp"

#include "bitparity/distributed/integer_lanes.hpp"

namespace bitparity::distributed {

void IntegerSumCommunicator::reduce_scatter(const ExactFloatSum* send, ExactFloatSum* receive, std::size_t count) {
  send_lanes_.resize(static_cast<std::size_t>(size()) * count * kFloatSumLanes);
  receive_lanes_.resize(count * kFloatSumLanes);
  encode_lanes(send, static_cast<std::size_t>(size()) * count, send_lanes_.data());
  reduce_scatter_sum(send_lanes_.data(), receive_lanes_.data(), count * kFloatSumLanes);
  decode_lanes(receive_lanes_.data(), count, receive);
}

void IntegerSumCommunicator::all_reduce(ExactSquareSum* values, std::size_t count) {
  send_lanes_.resize(count * kSquareSumLanes);
  encode_lanes(values, count, send_lanes_.data());
  all_reduce_sum_in_place(send_lanes_.data(), send_lanes_.size());
  decode_lanes(send_lanes_.data(), count, values);
}

std::int64_t IntegerSumCommunicator::all_reduce_sum(std::int64_t value) {
  // Two's complement: the sum modulo 2^64 is the signed sum whenever that fits.
  std::uint64_t lane = static_cast<std::uint64_t>(value);
  all_reduce_sum_in_place(&lane, 1);
  return static_cast<std::int64_t>(lane);
}

bool IntegerSumCommunicator::all_reduce_any(bool value) {
  std::uint64_t lane = value ? 1 : 0;
  all_reduce_sum_in_place(&lane, 1);
  return lane != 0;
}

void IntegerSumCommunicator::barrier() {
  std::uint64_t lane = 0;
  all_reduce_sum_in_place(&lane, 1);
}

}  // namespace bitparity::distributed
