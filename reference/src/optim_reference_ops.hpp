#pragma once
// What every optimizer's reference is written in: Tracked values (tracked.hpp) of the kernel's
// scalars and element, the helpers mirroring the kernels' element ops, and the two ways a
// reference steps a tensor (element by element, or LAMB/LARS around a trust ratio). The same
// templates run in double (screening) and in MPFR (deciding, and the exact trajectories).
#include <boost/multiprecision/mpfr.hpp>
#include <vector>

#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/reference/tracked.hpp"

namespace bitparity::reference {

using Exact = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<80>>;

template <class T>
struct Scalars {
  Tracked<T> lr, beta1, one_minus_beta1, beta2, one_minus_beta2, beta3, one_minus_beta3, alpha, one_minus_alpha;
  Tracked<T> eps, weight_decay, decay, step_size, inverse_bias_correction1, bias_correction2_sqrt;
  Tracked<T> momentum, one_minus_dampening, inverse_grad_scale;
  Tracked<T> update_scale;  // max_unorm clipping factor, when clip_update
  Tracked<T> coefficient[4];  // an optimizer's own scalars (StepScalars::coefficient)
  bool variant = false;       // StepScalars::variant
  bool clip_update = false;
  bool unscale = false, maximize = false, nesterov = false, centered = false, first_step = false;
};

// What an optimizer's own scalars are computed from: the exact beta powers and the cancellation
// factors of 1 - beta^t (for the error of the host's double evaluation).
template <class T>
struct ReferenceContext {
  const Hyperparameters& h;
  double t;
  T beta1_power, beta2_power;  // beta1^t, beta2^t
  double condition1, condition2;  // 1 + beta^t / (1 - beta^t)
};

template <class T>
struct Element {
  Tracked<T> p, g, s[3];
  Tracked<T> update;  // the unclipped amount subtracted from the parameter
};

template <class T>
Tracked<T> user_value(float x) {
  return exact_input<T>(x);
}

// Error of T's evaluation of an expression with cancellation factor `condition`.
template <class T>
double evaluation_error(const T& value, double condition) {
  return (std::is_same_v<T, double> ? 0x1p-48 : 0x1p-250) * condition * magnitude(value);
}

// A host scalar whose double evaluation on the kernel's host errs by up to `host_relative` (relative,
// derived by the optimizer's reference from its formula), then rounded once to fp32.
template <class T>
Tracked<T> host_scalar_with_error(const T& exact, double ref, double host_relative) {
  const double m = magnitude(exact) + ref;
  return {exact, ref, kUnitF32 * m + (0x1p-48 + host_relative) * m + kUnderflowF32, !(exact < T(0))};
}

template <class T>
T power(const T& base, double exponent) {
  using std::pow;
  return pow(base, T(exponent));
}

template <class T>
void apply_update(const Scalars<T>& s, const Tracked<T>& p, const Tracked<T>& update, Element<T>& e) {
  e.update = update;
  e.p = sub(p, s.clip_update ? mul(s.update_scale, update) : update);
}

template <class T>
Tracked<T> prepared_gradient(const Scalars<T>& s, Tracked<T> g) {
  if (s.unscale) g = mul(g, s.inverse_grad_scale);
  if (s.maximize) g = negate(g);
  return g;
}

template <class T>
Tracked<T> with_l2_decay(const Scalars<T>& s, const Tracked<T>& g, const Tracked<T>& p) {
  return s.weight_decay.value != T(0) ? add(g, mul(s.weight_decay, p)) : g;
}

template <class T>
Tracked<T> moving_average(const Tracked<T>& beta, const Tracked<T>& one_minus_beta, const Tracked<T>& state,
                          const Tracked<T>& x) {
  return add(mul(beta, state), mul(one_minus_beta, x));
}

// The norm of values whose kernel counterparts are within err_i of them: the kernel sums its own
// squares exactly, rounds the sum to double and takes a double sqrt, so
// |kernel norm - exact norm| <= sqrt(sum err_i^2) + 2^-51 norm (triangle inequality in l2).
template <class T>
Tracked<T> norm_of(const std::vector<Tracked<T>>& values) {
  using std::sqrt;
  T sum(0);
  double err_squares = 0, ref_squares = 0;
  bool bounded = true;
  for (const auto& v : values) {
    bounded = bounded && !unbounded(v);
    sum += v.value * v.value;
    err_squares += v.err * v.err;
    ref_squares += v.ref * v.ref;
  }
  const T norm = sqrt(sum);
  const double n = magnitude(norm);
  const double ref = sqrt(ref_squares) + unit_of<T>() * 4 * (n + 1e-300);
  const Tracked<T> result{norm, ref, sqrt(err_squares) + 0x1p-51 * (n + sqrt(ref_squares)), true};
  return bounded ? result : without_bound(result);
}

// How a reference steps a whole tensor, in double and in MPFR.
struct ReferenceOptimizer {
  void (*scalars_double)(const ReferenceContext<double>&, Scalars<double>&);
  void (*scalars_exact)(const ReferenceContext<Exact>&, Scalars<Exact>&);
  void (*step_double)(const Hyperparameters&, const Scalars<double>&, std::vector<Element<double>>&);
  void (*step_exact)(const Hyperparameters&, const Scalars<Exact>&, std::vector<Element<Exact>>&);
};

// max_unorm: a trial step gives the unclipped updates; the clipping decision compares their norm
// with max_unorm * ||p||. When the two may be equal within their errors the kernel could decide
// either way: the elements are then ill-conditioned.
template <class R, class T>
Scalars<T> with_update_clipping(const Hyperparameters& h, Scalars<T> s, const std::vector<Element<T>>& elements) {
  std::vector<Tracked<T>> params, updates;
  for (Element<T> trial : elements) {
    params.push_back(trial.p);
    R::element(s, trial);
    updates.push_back(trial.update);
  }
  const Tracked<T> limit = mul(exact_input<T>(h.max_unorm), norm_of(params));
  const Tracked<T> update_norm = norm_of(updates);
  const double slack = limit.err + limit.ref + update_norm.err + update_norm.ref;
  const double margin = magnitude(T(update_norm.value - limit.value));
  const bool above = update_norm.value > limit.value && magnitude(limit.value) > 0.0;
  s.clip_update = above;
  if (above) s.update_scale = div(limit, update_norm);
  if (margin <= slack && magnitude(limit.value) > 0.0) {
    s.clip_update = true;  // undecidable: mark every element unbounded through the scale
    s.update_scale = without_bound(above ? s.update_scale : exact_input<T>(1.0f));
  }
  return s;
}

// An elementwise optimizer R (R::scalars, R::element): clipping decided over the tensor, then
// every element on its own.
template <class R, class T>
void step_elementwise(const Hyperparameters& h, const Scalars<T>& s, std::vector<Element<T>>& elements) {
  const Scalars<T> clipped = h.max_unorm > 0.0f ? with_update_clipping<R>(h, s, elements) : s;
  for (auto& e : elements) R::element(clipped, e);
}

// A norm-based optimizer R (LAMB, LARS): R::first_pass gives each element's direction (and may
// update its states), the trust factor comes from the two norms (R::trust), R::second_pass applies it.
template <class R, class T>
void step_norm_based(const Hyperparameters& h, const Scalars<T>& s, std::vector<Element<T>>& elements) {
  std::vector<Tracked<T>> params, directions;
  for (auto& e : elements) {
    params.push_back(e.p);
    directions.push_back(R::first_pass(s, e));
  }
  const Tracked<T> param_norm = norm_of(params), direction_norm = norm_of(directions);
  // The kernel's parameter norm is exact up to rounding, so it is 0 exactly when the exact one is.
  // Its direction norm is 0 exactly when every direction element is an exact zero (err 0); it may be
  // 0 or not (either branch of ||u|| > 0) when the exact norm is within its error of 0.
  const bool param_zero = magnitude(param_norm.value) == 0.0;
  const bool direction_zero = magnitude(direction_norm.value) == 0.0 && direction_norm.err == 0.0;
  const bool may_degenerate =
      !direction_zero && magnitude(direction_norm.value) - direction_norm.ref - direction_norm.err <= 0.0;
  Tracked<T> trust = exact_input<T>(1.0f);
  if (!h.exclude_from_adaptation && !param_zero && !direction_zero) {
    trust = R::trust(h, s, param_norm, direction_norm);
    if (may_degenerate) trust = without_bound(trust);
  }
  for (std::size_t i = 0; i < elements.size(); ++i) R::second_pass(s, trust, directions[i], elements[i]);
}

template <class R>
constexpr ReferenceOptimizer elementwise_reference() {
  return {&R::template scalars<double>, &R::template scalars<Exact>, &step_elementwise<R, double>,
          &step_elementwise<R, Exact>};
}

template <class R>
constexpr ReferenceOptimizer norm_based_reference() {
  return {&R::template scalars<double>, &R::template scalars<Exact>, &step_norm_based<R, double>,
          &step_norm_based<R, Exact>};
}

// The reference of every optimizer: each defines <id>_reference in reference/src/optimizers/.
#define BITPARITY_DECLARE_REFERENCE(id, descriptor) extern const ReferenceOptimizer id##_reference;
BITPARITY_OPTIMIZERS(BITPARITY_DECLARE_REFERENCE)
#undef BITPARITY_DECLARE_REFERENCE

const ReferenceOptimizer& reference_optimizer(OptimizerKind kind);

}  // namespace bitparity::reference
