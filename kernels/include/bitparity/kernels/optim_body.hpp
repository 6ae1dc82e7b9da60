#pragma once
// The arithmetic of the 32-bit optimizers, written once for host and device. Every operation is
// one fp32 operation in the order of ARITHMETIC.md; no fma, no contraction.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "bitparity/kernels/element_access.hpp"
#include "bitparity/kernels/exact_sum.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/kernels/strided_index.hpp"

namespace bitparity {

struct OptimizerParams {
  OptimizerKind kind = OptimizerKind::adam;
  StepScalars s;
  void* param = nullptr;
  DType param_dtype = DType::f32;
  StridedIndex param_index;
  const void* grad = nullptr;
  DType grad_dtype = DType::f32;
  StridedIndex grad_index;
  float* state[3] = {nullptr, nullptr, nullptr};
  StridedIndex state_index[3];
  std::int64_t numel = 0;
};

// The values of one element: parameter and gradient widened to fp32, and up to three states.
struct ElementValues {
  float p = 0, g = 0;
  float s[3] = {0, 0, 0};
  float update = 0;  // the amount subtracted from the parameter (before max_unorm clipping)
};

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

// beta * state + (1 - beta) * x, as two products and one sum.
BP_HD float moving_average(float beta, float one_minus_beta, float state, float x) {
  return beta * state + one_minus_beta * x;
}

BP_HD void adam_element(const StepScalars& s, bool decoupled, ElementValues& e) {
  float g = prepared_gradient(s, e.g);
  float p = e.p;
  if (decoupled) {
    p = p * s.decay;
  } else if (s.weight_decay != 0.0f) {
    g = g + s.weight_decay * p;
  }
  const float m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  const float v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], g * g);
  const float denom = sqrtf(v) / s.bias_correction2_sqrt + s.eps;
  apply_update(s, p, s.step_size * (m / denom), e);
  e.s[0] = m;
  e.s[1] = v;
}

BP_HD void sgd_element(const StepScalars& s, ElementValues& e) {
  float g = prepared_gradient(s, e.g);
  if (s.weight_decay != 0.0f) g = g + s.weight_decay * e.p;
  float direction = g;
  if (s.momentum != 0.0f) {
    // The first step starts the buffer at the gradient (no dampening), as torch.optim.SGD does.
    const float buffer = s.first_step ? g : s.momentum * e.s[0] + s.one_minus_dampening * g;
    e.s[0] = buffer;
    direction = s.nesterov ? g + s.momentum * buffer : buffer;
  }
  apply_update(s, e.p, s.lr * direction, e);
}

BP_HD void rmsprop_element(const StepScalars& s, ElementValues& e) {
  float g = prepared_gradient(s, e.g);
  if (s.weight_decay != 0.0f) g = g + s.weight_decay * e.p;
  const float square_avg = moving_average(s.alpha, s.one_minus_alpha, e.s[0], g * g);
  e.s[0] = square_avg;
  float variance = square_avg;
  if (s.centered) {
    const float grad_avg = moving_average(s.alpha, s.one_minus_alpha, e.s[1], g);
    e.s[1] = grad_avg;
    variance = square_avg - grad_avg * grad_avg;
  }
  const float denom = sqrtf(variance) + s.eps;
  if (s.momentum > 0.0f) {
    const float buffer = s.momentum * e.s[2] + g / denom;
    e.s[2] = buffer;
    apply_update(s, e.p, s.lr * buffer, e);
  } else {
    apply_update(s, e.p, s.lr * (g / denom), e);
  }
}

BP_HD void adagrad_element(const StepScalars& s, ElementValues& e) {
  float g = prepared_gradient(s, e.g);
  if (s.weight_decay != 0.0f) g = g + s.weight_decay * e.p;
  const float sum = e.s[0] + g * g;
  e.s[0] = sum;
  const float denom = sqrtf(sum) + s.eps;
  apply_update(s, e.p, s.step_size * (g / denom), e);
}

BP_HD float sign_of(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }

BP_HD void lion_element(const StepScalars& s, ElementValues& e) {
  const float g = prepared_gradient(s, e.g);
  const float p = e.p * s.decay;
  const float interpolation = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  apply_update(s, p, s.lr * sign_of(interpolation), e);
  e.s[0] = moving_average(s.beta2, s.one_minus_beta2, e.s[0], g);
}

BP_HD void ademamix_element(const StepScalars& s, ElementValues& e) {
  const float g = prepared_gradient(s, e.g);
  const float p = e.p * s.decay;
  const float fast = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  const float slow = moving_average(s.beta3, s.one_minus_beta3, e.s[1], g);
  const float nu = moving_average(s.beta2, s.one_minus_beta2, e.s[2], g * g);
  const float numerator = fast * s.inverse_bias_correction1 + s.alpha * slow;
  const float denom = sqrtf(nu) / s.bias_correction2_sqrt + s.eps;
  apply_update(s, p, s.lr * (numerator / denom), e);
  e.s[0] = fast;
  e.s[1] = slow;
  e.s[2] = nu;
}

// LAMB, first pass: the Adam moments (stored), then the direction is lamb_direction.
BP_HD void lamb_moments(const StepScalars& s, ElementValues& e) {
  const float g = prepared_gradient(s, e.g);
  e.s[0] = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  e.s[1] = moving_average(s.beta2, s.one_minus_beta2, e.s[1], g * g);
}

// LAMB direction from the new moments: m_hat / (sqrt(v_hat) + eps) + wd * p.
BP_HD float lamb_direction(const StepScalars& s, const ElementValues& e) {
  const float denom = sqrtf(e.s[1]) / s.bias_correction2_sqrt + s.eps;
  const float ratio = (e.s[0] * s.inverse_bias_correction1) / denom;
  return s.weight_decay != 0.0f ? ratio + s.weight_decay * e.p : ratio;
}

// The LAMB/LARS trust factor times x, rounded once: x is first scaled by 2^trust_exponent (exact, as
// it only scales up), so a factor past FLT_MAX (a subnormal gradient norm) does not overflow.
BP_HD float times_trust(const StepScalars& s, float x) {
  if (s.trust_exponent != 0) x = ldexpf(x, s.trust_exponent);
  return s.trust_scaled_lr * x;
}

// LAMB, second pass (moments already new): p - (lr * trust) * direction.
BP_HD void lamb_apply(const StepScalars& s, ElementValues& e) { e.p = e.p - times_trust(s, lamb_direction(s, e)); }

// LARS, second pass: the gradient with weight decay, scaled by the local lr, into SGD momentum.
BP_HD void lars_apply(const StepScalars& s, ElementValues& e) {
  float g = prepared_gradient(s, e.g);
  if (s.weight_decay != 0.0f) g = g + s.weight_decay * e.p;
  const float scaled = times_trust(s, g);
  float direction = scaled;
  if (s.momentum != 0.0f) {
    const float buffer = s.first_step ? scaled : s.momentum * e.s[0] + s.one_minus_dampening * scaled;
    e.s[0] = buffer;
    direction = s.nesterov ? scaled + s.momentum * buffer : buffer;
  }
  e.p = e.p - s.lr * direction;
}

template <OptimizerKind K>
BP_HD void optimizer_element_of(const StepScalars& s, ElementValues& e) {
  if constexpr (K == OptimizerKind::adam) adam_element(s, false, e);
  if constexpr (K == OptimizerKind::adamw) adam_element(s, true, e);
  if constexpr (K == OptimizerKind::sgd) sgd_element(s, e);
  if constexpr (K == OptimizerKind::rmsprop) rmsprop_element(s, e);
  if constexpr (K == OptimizerKind::adagrad) adagrad_element(s, e);
  if constexpr (K == OptimizerKind::lion) lion_element(s, e);
  if constexpr (K == OptimizerKind::ademamix) ademamix_element(s, e);
  if constexpr (K == OptimizerKind::lamb) lamb_apply(s, e);  // the second pass
  if constexpr (K == OptimizerKind::lars) lars_apply(s, e);  // the second pass
}

BP_HD constexpr bool norm_based_kind(OptimizerKind kind) {
  return kind == OptimizerKind::lamb || kind == OptimizerKind::lars;
}

// First pass of the norm-based optimizers: the squares to accumulate (LAMB also writes its moments).
struct NormTerms {
  float param = 0, direction = 0;
};

// LAMB: the parameter and its direction (writes the moments); LARS: the parameter and the prepared
// gradient; the other optimizers (max_unorm): the parameter and the unclipped update of a trial
// step whose results are discarded.
template <OptimizerKind K>
BP_HD NormTerms norm_terms_of(const StepScalars& s, ElementValues& e) {
  if constexpr (K == OptimizerKind::lamb) {
    lamb_moments(s, e);
    return {e.p, lamb_direction(s, e)};
  } else if constexpr (K == OptimizerKind::lars) {
    return {e.p, prepared_gradient(s, e.g)};
  } else {
    ElementValues trial = e;
    StepScalars unclipped = s;
    unclipped.clip_update = false;
    optimizer_element_of<K>(unclipped, trial);
    return {e.p, trial.update};
  }
}

// Calls f(std::integral_constant<OptimizerKind, kind>{}): the launchers pick the element body once
// per launch, not once per element.
template <class F>
BP_HD void with_optimizer_kind(OptimizerKind kind, F&& f) {
  switch (kind) {
    case OptimizerKind::adam: f(std::integral_constant<OptimizerKind, OptimizerKind::adam>{}); break;
    case OptimizerKind::adamw: f(std::integral_constant<OptimizerKind, OptimizerKind::adamw>{}); break;
    case OptimizerKind::sgd: f(std::integral_constant<OptimizerKind, OptimizerKind::sgd>{}); break;
    case OptimizerKind::rmsprop: f(std::integral_constant<OptimizerKind, OptimizerKind::rmsprop>{}); break;
    case OptimizerKind::adagrad: f(std::integral_constant<OptimizerKind, OptimizerKind::adagrad>{}); break;
    case OptimizerKind::lion: f(std::integral_constant<OptimizerKind, OptimizerKind::lion>{}); break;
    case OptimizerKind::ademamix: f(std::integral_constant<OptimizerKind, OptimizerKind::ademamix>{}); break;
    case OptimizerKind::lamb: f(std::integral_constant<OptimizerKind, OptimizerKind::lamb>{}); break;
    case OptimizerKind::lars: f(std::integral_constant<OptimizerKind, OptimizerKind::lars>{}); break;
  }
}

BP_HD void optimizer_element(OptimizerKind kind, const StepScalars& s, ElementValues& e) {
  with_optimizer_kind(kind, [&](auto k) { optimizer_element_of<decltype(k)::value>(s, e); });
}

BP_HD constexpr int state_count(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::adam:
    case OptimizerKind::adamw:
    case OptimizerKind::lamb: return 2;
    case OptimizerKind::rmsprop: return 3;
    case OptimizerKind::ademamix: return 3;
    default: return 1;
  }
}

BP_HD ElementValues load_element(const OptimizerParams& p, std::int64_t i, int states) {
  ElementValues e;
  e.p = load_as_float(p.param, p.param_dtype, p.param_index.storage(i));
  e.g = load_as_float(p.grad, p.grad_dtype, p.grad_index.storage(i));
  for (int k = 0; k < states; ++k) e.s[k] = p.state[k][p.state_index[k].storage(i)];
  return e;
}

BP_HD ElementValues load_element(const OptimizerParams& p, std::int64_t i) {
  return load_element(p, i, state_count(p.kind));
}

BP_HD void store_element(const OptimizerParams& p, std::int64_t i, const ElementValues& e, int states) {
  store_float(p.param, p.param_dtype, p.param_index.storage(i), e.p);
  for (int k = 0; k < states; ++k) p.state[k][p.state_index[k].storage(i)] = e.s[k];
}

BP_HD void store_element(const OptimizerParams& p, std::int64_t i, const ElementValues& e) {
  store_element(p, i, e, state_count(p.kind));
}

// The first pass of element i of LAMB/LARS: accumulates the squares (LAMB stores its moments).
template <OptimizerKind K>
BP_HD void norm_terms_element_of(const OptimizerParams& p, std::int64_t i, ExactSquareSum& param_sum,
                                 ExactSquareSum& direction_sum) {
  constexpr int states = state_count(K);
  ElementValues e = load_element(p, i, states);
  const NormTerms terms = norm_terms_of<K>(p.s, e);
  param_sum.add_square(terms.param);
  direction_sum.add_square(terms.direction);
  if constexpr (K == OptimizerKind::lamb) {
    for (int k = 0; k < states; ++k) p.state[k][p.state_index[k].storage(i)] = e.s[k];
  }
}

// The whole step of element i (the launchers' unit of work), for an optimizer known at compile time.
template <OptimizerKind K>
BP_HD void optimizer_step_element_of(const OptimizerParams& p, std::int64_t i) {
  constexpr int states = state_count(K);
  ElementValues e = load_element(p, i, states);
  optimizer_element_of<K>(p.s, e);
  store_element(p, i, e, states);
}

// True when the gradient element is NaN or infinite (checked before any element is changed).
BP_HD bool gradient_nonfinite(const OptimizerParams& p, std::int64_t i) {
  const float g = load_as_float(p.grad, p.grad_dtype, p.grad_index.storage(i));
  return !(fabsf(g) <= 3.402823466e38f);
}

}  // namespace bitparity
