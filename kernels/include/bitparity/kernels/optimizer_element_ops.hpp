#pragma once
// The pieces every optimizer's element body is built from, for host and device. Every operation
// is one fp32 operation in the order of ARITHMETIC.md; no fma, no contraction.
#include <cmath>

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

// beta * state + (1 - beta) * x, as two products and one sum.
BP_HD float moving_average(float beta, float one_minus_beta, float state, float x) {
  return beta * state + one_minus_beta * x;
}

// L2 weight decay folded into the gradient (torch's non-decoupled form).
BP_HD float with_l2_decay(const StepScalars& s, float g, float p) {
  return s.weight_decay != 0.0f ? g + s.weight_decay * p : g;
}

BP_HD float sign_of(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }

// The LAMB/LARS trust factor times x, rounded once: x is first scaled by 2^trust_exponent (exact, as
// it only scales up), so a factor past FLT_MAX (a subnormal gradient norm) does not overflow.
BP_HD float times_trust(const StepScalars& s, float x) {
  if (s.trust_exponent != 0) x = ldexpf(x, s.trust_exponent);
  return s.trust_scaled_lr * x;
}

}  // namespace bitparity
