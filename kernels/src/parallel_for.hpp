#pragma once
// Static partition of [begin, end) over worker threads (the pool's, worker_pool.hpp). Each index is
// processed by exactly one thread and no reduction crosses threads, so the partition cannot change a
// result. A body's exception reaches the caller once every part has finished.
#include <algorithm>
#include <cstdint>
#include <thread>

#include "worker_pool.hpp"

namespace bitparity::detail {

template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, int threads, std::int64_t min_per_thread, Body body) {
  const std::int64_t count = end - begin;
  if (count <= 0) return;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(1, count / std::max<std::int64_t>(1, min_per_thread))));
  if (threads <= 1) {
    for (std::int64_t i = begin; i < end; ++i) body(i);
    return;
  }
  run_tasks(threads, [&](int t) {
    const std::int64_t lo = begin + count * t / threads, hi = begin + count * (t + 1) / threads;
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
