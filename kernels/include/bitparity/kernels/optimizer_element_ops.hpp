#pragma once
// The pieces every optimizer's element body is built from, for host and device. Every operation
// is one fp32 operation in the order of ARITHMETIC.md; no fma, no contraction.
#include <cmath>
#include <cstdint>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/hd.hpp"
#include "bitparity/kernels/optimizer_types.hpp"

namespace bitparity {

// The update as applied: scaled by the max_unorm clipping factor when this step clips.
BP_HD float clipped_update(const StepScalars& s, float update) { return s.clip_update ? s.update_scale * update : update; }

BP_HD void apply_update(const StepScalars& s, float p, float update, ElementValues& e) {
  e.update = update;
  e.p = p - clipped_update(s, update);
}

// Gradient preprocessing shared by every optimizer: unscale, then negate for maximize.
BP_HD float prepared_gradient(const StepScalars& s, float g) {
  if (s.unscale) g = g * s.inverse_grad_scale;
  if (s.maximize) g = -g;
  return g;
}

// max(x, 0) with NaN kept: a centred variance that rounds (or, from independently quantized 8-bit
// states, really is) below zero is zero, not the NaN of a negative square root (ARITHMETIC.md).
BP_HD float clamped_at_zero(float x) { return x < 0.0f ? 0.0f : x; }

// flag ? a : b, by bits. GCC 12 threads a select on a loop-invariant flag ahead of a square root
// into two square roots and a select it cannot vectorize (RMSprop's centred variance); this form
// leaves the loop vectorizable.
BP_HD float selected_by_flag(bool flag, float a, float b) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(flag);
  return float_from_bits((float_bits(a) & mask) | (float_bits(b) & ~mask));
}

// beta * state + (1 - beta) * x, as two products and one sum.
BP_HD float moving_average(float beta, float one_minus_beta, float state, float x) {
  return beta * state + one_minus_beta * x;
}

// L2 weight decay folded into the gradient (torch's non-decoupled form).
BP_HD float with_l2_decay(const StepScalars& s, float g, float p) {
  return s.weight_decay != 0.0f ? g + s.weight_decay * p : g;
}

BP_HD float sign_of(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }

// 2^k as an fp32, for 0 <= k <= 127.
BP_HD float power_of_two(int k) { return float_from_bits(static_cast<std::uint32_t>(127 + k) << 23); }

// ldexpf(x, k) for k >= 0, as three products by powers of two, which the CPU loops vectorize (a libm
// call stops them). Scaling up is exact until it overflows, and an overflow at any product is the
// overflow of the whole; past 2^280 every non-zero fp32 overflows, so k is capped there.
BP_HD float scaled_up_by_power_of_two(float x, int k) {
  const int capped = k < 280 ? k : 280;
  const int first = capped < 127 ? capped : 127, rest = capped - first;
  const int second = rest < 127 ? rest : 127, third = rest - second;
  return x * power_of_two(first) * power_of_two(second) * power_of_two(third);
}

// The LAMB/LARS trust factor times x, rounded once: x is first scaled by 2^trust_exponent (exact, as
// it only scales up), so a factor past FLT_MAX (a subnormal gradient norm) does not overflow.
BP_HD float times_trust(const StepScalars& s, float x) {
  return s.trust_scaled_lr * scaled_up_by_power_of_two(x, s.trust_exponent);
}

}  // namespace bitparity
