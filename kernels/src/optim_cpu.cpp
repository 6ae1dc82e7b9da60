// The CPU launcher of the optimizers: the kernel body over worker threads, chunks of elements.
#include <atomic>

#include "bitparity/kernels/optim_launch.hpp"
#include "parallel_for.hpp"

namespace bitparity::cpu {

bool optimizer_step(const OptimizerParams& params, const LaunchConfig& launch) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t chunks = (params.numel + kChunk - 1) / kChunk;
  std::atomic<bool> nonfinite{false};
  detail::parallel_for(0, chunks, launch.threads, 4, [&](std::int64_t chunk) {
    const std::int64_t end = std::min(params.numel, (chunk + 1) * kChunk);
    for (std::int64_t i = chunk * kChunk; i < end; ++i) {
      if (gradient_nonfinite(params, i)) {
        nonfinite.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  if (nonfinite.load()) return true;
  const std::int64_t per_launch = launch.blocks_per_launch > 0 ? launch.blocks_per_launch * kOptimizerElementsPerLaunchBlock : params.numel;
  detail::split_launches(params.numel, per_launch, [&](std::int64_t first, std::int64_t last) {
    const std::int64_t launch_chunks = (last - first + kChunk - 1) / kChunk;
    detail::parallel_for(0, launch_chunks, launch.threads, 4, [&](std::int64_t chunk) {
      const std::int64_t begin = first + chunk * kChunk, end = std::min(last, begin + kChunk);
      with_optimizer_kind(params.kind, [&](auto kind) {
        for (std::int64_t i = begin; i < end; ++i) optimizer_step_element_of<decltype(kind)::value>(params, i);
      });
    });
  });
  return false;
}

}  // namespace bitparity::cpu
