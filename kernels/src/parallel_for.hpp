#pragma once
// [begin, end) in contiguous parts claimed by worker threads as they go (the pool's, worker_pool.hpp).
// Each index is processed by exactly one thread and no reduction crosses threads, so the partition
// cannot change a result. A body's exception reaches the caller once every part has finished.
#include <algorithm>
#include <cstdint>
#include <thread>

#include "worker_pool.hpp"

namespace bitparity::detail {

// Parts per thread, where the work allows: a thread that the host slows (a VM's other tenants) or
// that starts late (a worker waking) leaves the others less to wait for than with one part each.
inline constexpr std::int64_t kPartsPerThread = 8;

template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, int threads, std::int64_t min_per_part, Body body) {
  const std::int64_t count = end - begin;
  if (count <= 0) return;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::int64_t most_parts = std::max<std::int64_t>(1, count / std::max<std::int64_t>(1, min_per_part));
  threads = static_cast<int>(std::min<std::int64_t>(threads, most_parts));
  if (threads <= 1) {
    for (std::int64_t i = begin; i < end; ++i) body(i);
    return;
  }
  const int parts = static_cast<int>(std::min<std::int64_t>(most_parts, threads * kPartsPerThread));
  run_tasks(parts, threads, [&](int t) {
    const std::int64_t lo = begin + count * t / parts, hi = begin + count * (t + 1) / parts;
    for (std::int64_t i = lo; i < hi; ++i) body(i);
  });
}

// Run `launch(first, last)` over [0, total) in pieces of `per_launch` (0 = one piece).
template <class Launch>
void split_launches(std::int64_t total, std::int64_t per_launch, Launch launch) {
  if (per_launch <= 0) per_launch = total;
  for (std::int64_t first = 0; first < total; first += per_launch) launch(first, std::min(total, first + per_launch));
}

}  // namespace bitparity::detail
