// The CPU launcher of the optimizers: the kernel body over worker threads, chunks of elements.
#include <atomic>
#include <mutex>

#include "bitparity/kernels/optim_launch.hpp"
#include "parallel_for.hpp"

namespace bitparity::cpu {

namespace {
constexpr std::int64_t kChunk = 4096;

template <class Body>
void over_chunks(std::int64_t first, std::int64_t last, const LaunchConfig& launch, Body body) {
  const std::int64_t chunks = (last - first + kChunk - 1) / kChunk;
  detail::parallel_for(0, chunks, launch.threads, 4, [&](std::int64_t chunk) {
    const std::int64_t begin = first + chunk * kChunk;
    body(begin, std::min(last, begin + kChunk));
  });
}

std::int64_t per_launch(const OptimizerParams& params, const LaunchConfig& launch) {
  return launch.blocks_per_launch > 0 ? launch.blocks_per_launch * kOptimizerElementsPerLaunchBlock : params.numel;
}
}  // namespace

bool gradient_has_nonfinite(const OptimizerParams& params, const LaunchConfig& launch) {
  std::atomic<bool> nonfinite{false};
  over_chunks(0, params.numel, launch, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      if (gradient_nonfinite(params, i)) {
        nonfinite.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  return nonfinite.load();
}

NormSums norm_pass(const OptimizerParams& params, const LaunchConfig& launch) {
  NormSums total;
  std::mutex merge;
  detail::split_launches(params.numel, per_launch(params, launch), [&](std::int64_t first, std::int64_t last) {
    over_chunks(first, last, launch, [&](std::int64_t begin, std::int64_t end) {
      NormSums partial;  // exact, so merging the chunks in any order gives the same sums
      with_optimizer_kind(params.kind, [&](auto kind) {
        for (std::int64_t i = begin; i < end; ++i) {
          norm_terms_element_of<decltype(kind)::value>(params, i, partial.param, partial.direction);
        }
      });
      const std::lock_guard lock(merge);
      total.param.merge(partial.param);
      total.direction.merge(partial.direction);
    });
  });
  return total;
}

void apply_pass(const OptimizerParams& params, const LaunchConfig& launch) {
  detail::split_launches(params.numel, per_launch(params, launch), [&](std::int64_t first, std::int64_t last) {
    over_chunks(first, last, launch, [&](std::int64_t begin, std::int64_t end) {
      with_optimizer_kind(params.kind, [&](auto kind) {
        for (std::int64_t i = begin; i < end; ++i) optimizer_step_element_of<decltype(kind)::value>(params, i);
      });
    });
  });
}

}  // namespace bitparity::cpu
