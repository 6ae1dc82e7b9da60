#pragma once
// [begin, end) in contiguous parts that the calling thread and the pool's workers (worker_pool.hpp)
// claim one at a time as they finish the last. Each index is processed by exactly one thread and no
// reduction crosses threads, so the partition cannot change a result. A body's exception reaches the
// caller once every part has finished.
#include <algorithm>
#include <cstdint>
#include <thread>

#include "worker_pool.hpp"

namespace bitparity::detail {

// Parts per thread, where the work allows: a thread that the host slows (a VM's other tenants) or
// that starts late (a worker waking) leaves the others less to wait for than with one part each.
inline constexpr std::int64_t kPartsPerThread = 8;
// More threads than this are taken as this many: the pool keeps every thread a call asks for.
inline constexpr int kMostThreads = 1 << 12;

// The first index of part t of `count` indices in `parts` parts (t = parts gives count): the first
// count % parts parts take one index more. No product of count and parts, which could overflow.
inline std::int64_t part_begin(std::int64_t count, std::int64_t parts, std::int64_t t) {
  return (count / parts) * t + std::min(t, count % parts);
}

// Runs body(lo, hi) once for each part [lo, hi) of [begin, end) on at most `threads` threads (0: one
// per core), the parts at least `min_per_part` indices long (fewer parts, down to one, where there
// are too few): for bodies that carry work from one index to the next.
template <class Body>
void parallel_for_parts(std::int64_t begin, std::int64_t end, int threads, std::int64_t min_per_part, Body body) {
  const std::int64_t count = end - begin;
  if (count <= 0) return;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, kMostThreads);
  const std::int64_t most_parts = std::max<std::int64_t>(1, count / std::max<std::int64_t>(1, min_per_part));
  threads = static_cast<int>(std::min<std::int64_t>(threads, most_parts));
  if (threads <= 1) {
    body(begin, end);
    return;
  }
  const auto parts = static_cast<int>(std::min<std::int64_t>(most_parts, threads * kPartsPerThread));
  run_tasks(parts, threads,
            [&](int t) { body(begin + part_begin(count, parts, t), begin + part_begin(count, parts, t + 1)); });
}

// Runs body(i) once for every i in [begin, end), as parallel_for_parts divides it.
template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, int threads, std::int64_t min_per_part, Body body) {
  parallel_for_parts(begin, end, threads, min_per_part, [&](std::int64_t lo, std::int64_t hi) {
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
