#include "bitparity/distributed/hyperparameter_draw.hpp"

#include <array>

namespace bitparity::distributed {

Hyperparameters draw_hyperparameters(OptimizerKind kind, bool eight_bit, std::mt19937_64& random) {
  const OptimizerInfo& info = optimizer_info(kind);
  Hyperparameters h = typical_hyperparameters(kind);
  for (const auto& spec : info.hyperparameters) {
    double value = spec.samples[random() % static_cast<std::size_t>(spec.sample_count)];
    if (spec.blind_at_zero && value == 0.0) value = spec.typical;  // lr 0 would hide every error
    spec.set(h, value);
  }
  h.grad_scale = std::array<float, 4>{1.0f, 1.0f, 0.125f, 65536.0f}[random() % 4];
  h.maximize = random() % 5 == 0;
  if (!eight_bit && !info.norm_based) h.max_unorm = std::array<float, 4>{0.0f, 0.0f, 1.0f, 0.01f}[random() % 4];
  info.make_consistent(h);
  return h;
}

}  // namespace bitparity::distributed
