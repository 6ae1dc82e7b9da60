// The optimizers in the kernels' operation order (kernels/ARITHMETIC.md), on Tracked values: the
// same template runs in double (screening) and in MPFR (deciding), and carries the exact state of
// the multi-step trajectories.
#include "bitparity/reference/optim_reference.hpp"

#include <boost/multiprecision/mpfr.hpp>
#include <cfloat>
#include <cstdio>
#include <sstream>

#include "bitparity/reference/rounding.hpp"
#include "bitparity/reference/tracked.hpp"

namespace bitparity::reference {

namespace {

using Exact = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<80>>;

template <class T>
struct Scalars {
  Tracked<T> lr, beta1, one_minus_beta1, beta2, one_minus_beta2, beta3, one_minus_beta3, alpha, one_minus_alpha;
  Tracked<T> eps, weight_decay, decay, step_size, inverse_bias_correction1, bias_correction2_sqrt;
  Tracked<T> momentum, one_minus_dampening, inverse_grad_scale;
  Tracked<T> update_scale;  // max_unorm clipping factor, when clip_update
  bool clip_update = false;
  bool unscale = false, maximize = false, nesterov = false, centered = false, first_step = false;
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

template <class T>
T power(const T& base, double exponent) {
  using std::pow;
  return pow(base, T(exponent));
}

template <class T>
Scalars<T> exact_scalars(OptimizerKind kind, const Hyperparameters& h) {
  using std::log;
  using std::pow;
  using std::sqrt;
  Scalars<T> s;
  const T one(1);
  const double t = static_cast<double>(h.step);
  s.lr = user_value<T>(h.lr);
  s.beta1 = user_value<T>(h.beta1);
  s.beta2 = user_value<T>(h.beta2);
  s.eps = user_value<T>(h.eps);
  s.weight_decay = user_value<T>((kind == OptimizerKind::lamb || kind == OptimizerKind::lars) && h.exclude_from_weight_decay
                                     ? 0.0f
                                     : h.weight_decay);
  s.momentum = user_value<T>(h.momentum);
  s.one_minus_beta1 = host_scalar<T>(one - T(h.beta1), 0.0);
  s.one_minus_beta2 = host_scalar<T>(one - T(h.beta2), 0.0);
  const T decay = one - T(h.lr) * T(h.weight_decay);
  s.decay = host_scalar<T>(decay, evaluation_error(decay, 2.0));
  s.one_minus_dampening = host_scalar<T>(one - T(h.dampening), 0.0);
  s.unscale = h.grad_scale != 1.0f;
  s.inverse_grad_scale = host_scalar<T>(one / T(h.grad_scale), evaluation_error(one / T(h.grad_scale), 1.0));
  s.maximize = h.maximize;
  s.nesterov = h.nesterov;
  s.centered = h.centered;
  s.first_step = h.step == 1;
  const T b1t = power(T(h.beta1), t), b2t = power(T(h.beta2), t);
  const double c1 = 1.0 + magnitude(b1t) / std::max(magnitude(T(one - b1t)), 1e-300);
  const double c2 = 1.0 + magnitude(b2t) / std::max(magnitude(T(one - b2t)), 1e-300);
  const T bc2_sqrt = sqrt(T(one - b2t));
  s.bias_correction2_sqrt = host_scalar<T>(bc2_sqrt, evaluation_error(bc2_sqrt, c2));
  switch (kind) {
    case OptimizerKind::adam:
    case OptimizerKind::adamw: {
      const T step_size = T(h.lr) / (one - b1t);
      s.step_size = host_scalar<T>(step_size, evaluation_error(step_size, c1));
      break;
    }
    case OptimizerKind::adagrad: {
      const T step_size = T(h.lr) / (one + T(t - 1.0) * T(h.lr_decay));
      s.step_size = host_scalar<T>(step_size, evaluation_error(step_size, 2.0));
      break;
    }
    case OptimizerKind::rmsprop:
      s.alpha = user_value<T>(h.smoothing);
      s.one_minus_alpha = host_scalar<T>(one - T(h.smoothing), 0.0);
      break;
    case OptimizerKind::lamb: {
      const T inverse = one / (one - b1t);
      s.inverse_bias_correction1 = host_scalar<T>(inverse, evaluation_error(inverse, c1));
      break;
    }
    case OptimizerKind::ademamix: {
      const T inverse = one / (one - b1t);
      s.inverse_bias_correction1 = host_scalar<T>(inverse, evaluation_error(inverse, c1));
      if (h.alpha_warmup > 0) {
        T alpha = T(t) * T(h.ademamix_alpha) / T(static_cast<double>(h.alpha_warmup));
        if (alpha > T(h.ademamix_alpha)) alpha = T(h.ademamix_alpha);
        s.alpha = host_scalar<T>(alpha, evaluation_error(alpha, 2.0));
      } else {
        s.alpha = user_value<T>(h.ademamix_alpha);
      }
      if (h.beta3_warmup > 0 && h.step < h.beta3_warmup) {
        const auto half_life = [&](const T& beta) { return T(log(T(0.5)) / log(beta) - one); };
        const T fraction = T(t) / T(static_cast<double>(h.beta3_warmup));
        const T mixed = (one - fraction) * half_life(T(h.beta1)) + fraction * half_life(T(h.beta3));
        T beta3 = pow(T(0.5), one / (mixed + one));
        if (beta3 > T(h.beta3)) beta3 = T(h.beta3);
        s.beta3 = host_scalar<T>(beta3, evaluation_error(beta3, 64.0));
        // The kernel's 1 - beta3 is computed from the fp32 beta3 and rounded again.
        const T complement = one - beta3;
        const double m = magnitude(complement) + s.beta3.err;
        s.one_minus_beta3 = {complement, s.beta3.ref, s.beta3.err + kUnitF32 * m + kUnderflowF32, true};
      } else {
        s.beta3 = user_value<T>(h.beta3);
        s.one_minus_beta3 = host_scalar<T>(one - T(h.beta3), 0.0);
      }
      break;
    }
    default: break;
  }
  return s;
}

template <class T>
struct Element {
  Tracked<T> p, g, s[3];
  Tracked<T> update;  // the unclipped amount subtracted from the parameter
};

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
Tracked<T> moving_average(const Tracked<T>& beta, const Tracked<T>& one_minus_beta, const Tracked<T>& state,
                          const Tracked<T>& x) {
  return add(mul(beta, state), mul(one_minus_beta, x));
}

template <class T>
void adam(const Scalars<T>& s, bool decoupled, Element<T>& e) {
  Tracked<T> g = prepared_gradient(s, e.g);
  Tracked<T> p = e.p;
  if (decoupled) {
    p = mul(p, s.decay);
  } else if (s.weight_decay.value != T(0)) {
    g = add(g, mul(s.weight_decay, p));
  }
  const Tracked<T> m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  const Tracked<T> v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], mul(g, g));
  const Tracked<T> denom = add(div(square_root(v), s.bias_correction2_sqrt), s.eps);
  apply_update(s, p, mul(s.step_size, div(m, denom)), e);
  e.s[0] = m;
  e.s[1] = v;
}

template <class T>
void sgd(const Scalars<T>& s, Element<T>& e) {
  Tracked<T> g = prepared_gradient(s, e.g);
  if (s.weight_decay.value != T(0)) g = add(g, mul(s.weight_decay, e.p));
  Tracked<T> direction = g;
  if (s.momentum.value != T(0)) {
    const Tracked<T> buffer = s.first_step ? g : add(mul(s.momentum, e.s[0]), mul(s.one_minus_dampening, g));
    e.s[0] = buffer;
    direction = s.nesterov ? add(g, mul(s.momentum, buffer)) : buffer;
  }
  apply_update(s, e.p, mul(s.lr, direction), e);
}

template <class T>
void rmsprop(const Scalars<T>& s, Element<T>& e) {
  Tracked<T> g = prepared_gradient(s, e.g);
  if (s.weight_decay.value != T(0)) g = add(g, mul(s.weight_decay, e.p));
  const Tracked<T> square_avg = moving_average(s.alpha, s.one_minus_alpha, e.s[0], mul(g, g));
  e.s[0] = square_avg;
  Tracked<T> variance = square_avg;
  if (s.centered) {
    const Tracked<T> grad_avg = moving_average(s.alpha, s.one_minus_alpha, e.s[1], g);
    e.s[1] = grad_avg;
    variance = sub(square_avg, mul(grad_avg, grad_avg));
  }
  const Tracked<T> denom = add(square_root(variance), s.eps);
  if (s.momentum.value > T(0)) {
    const Tracked<T> buffer = add(mul(s.momentum, e.s[2]), div(g, denom));
    e.s[2] = buffer;
    apply_update(s, e.p, mul(s.lr, buffer), e);
  } else {
    apply_update(s, e.p, mul(s.lr, div(g, denom)), e);
  }
}

template <class T>
void adagrad(const Scalars<T>& s, Element<T>& e) {
  Tracked<T> g = prepared_gradient(s, e.g);
  if (s.weight_decay.value != T(0)) g = add(g, mul(s.weight_decay, e.p));
  const Tracked<T> sum = add(e.s[0], mul(g, g));
  e.s[0] = sum;
  const Tracked<T> denom = add(square_root(sum), s.eps);
  apply_update(s, e.p, mul(s.step_size, div(g, denom)), e);
}

template <class T>
void lion(const Scalars<T>& s, Element<T>& e) {
  const Tracked<T> g = prepared_gradient(s, e.g);
  const Tracked<T> p = mul(e.p, s.decay);
  const Tracked<T> interpolation = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  apply_update(s, p, mul(s.lr, sign(interpolation)), e);
  e.s[0] = moving_average(s.beta2, s.one_minus_beta2, e.s[0], g);
}

template <class T>
void ademamix(const Scalars<T>& s, Element<T>& e) {
  const Tracked<T> g = prepared_gradient(s, e.g);
  const Tracked<T> p = mul(e.p, s.decay);
  const Tracked<T> fast = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  const Tracked<T> slow = moving_average(s.beta3, s.one_minus_beta3, e.s[1], g);
  const Tracked<T> nu = moving_average(s.beta2, s.one_minus_beta2, e.s[2], mul(g, g));
  const Tracked<T> numerator = add(mul(fast, s.inverse_bias_correction1), mul(s.alpha, slow));
  const Tracked<T> denom = add(div(square_root(nu), s.bias_correction2_sqrt), s.eps);
  apply_update(s, p, mul(s.lr, div(numerator, denom)), e);
  e.s[0] = fast;
  e.s[1] = slow;
  e.s[2] = nu;
}

// LAMB first pass: the new moments and the direction u = m_hat / (sqrt(v_hat) + eps) + wd * p.
template <class T>
Tracked<T> lamb_first_pass(const Scalars<T>& s, Element<T>& e) {
  const Tracked<T> g = prepared_gradient(s, e.g);
  e.s[0] = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  e.s[1] = moving_average(s.beta2, s.one_minus_beta2, e.s[1], mul(g, g));
  const Tracked<T> denom = add(div(square_root(e.s[1]), s.bias_correction2_sqrt), s.eps);
  const Tracked<T> ratio = div(mul(e.s[0], s.inverse_bias_correction1), denom);
  return s.weight_decay.value != T(0) ? add(ratio, mul(s.weight_decay, e.p)) : ratio;
}

template <class T>
void lars_second_pass(const Scalars<T>& s, const Tracked<T>& local_lr, Element<T>& e) {
  Tracked<T> g = prepared_gradient(s, e.g);
  if (s.weight_decay.value != T(0)) g = add(g, mul(s.weight_decay, e.p));
  const Tracked<T> scaled = mul(local_lr, g);
  Tracked<T> direction = scaled;
  if (s.momentum.value != T(0)) {
    const Tracked<T> buffer = s.first_step ? scaled : add(mul(s.momentum, e.s[0]), mul(s.one_minus_dampening, scaled));
    e.s[0] = buffer;
    direction = s.nesterov ? add(scaled, mul(s.momentum, buffer)) : buffer;
  }
  e.p = sub(e.p, mul(s.lr, direction));
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

// The tensor-level steps: elementwise optimizers element by element, LAMB and LARS in two passes
// around the trust ratio, exactly as the kernels do.
template <class T>
void step_all(OptimizerKind kind, const Hyperparameters& h, const Scalars<T>& s, std::vector<Element<T>>& elements);

template <class T>
void step(OptimizerKind kind, const Scalars<T>& s, Element<T>& e) {
  switch (kind) {
    case OptimizerKind::adam: adam(s, false, e); break;
    case OptimizerKind::adamw: adam(s, true, e); break;
    case OptimizerKind::sgd: sgd(s, e); break;
    case OptimizerKind::rmsprop: rmsprop(s, e); break;
    case OptimizerKind::adagrad: adagrad(s, e); break;
    case OptimizerKind::lion: lion(s, e); break;
    case OptimizerKind::ademamix: ademamix(s, e); break;
    default: break;  // LAMB and LARS need the whole tensor: step_all
  }
}

// max_unorm: a trial step gives the unclipped updates; the clipping decision compares their norm
// with max_unorm * ||p||. When the two may be equal within their errors the kernel could decide
// either way: the elements are then ill-conditioned.
template <class T>
Scalars<T> with_update_clipping(OptimizerKind kind, const Hyperparameters& h, Scalars<T> s,
                                const std::vector<Element<T>>& elements) {
  std::vector<Tracked<T>> params, updates;
  for (Element<T> trial : elements) {
    params.push_back(trial.p);
    step(kind, s, trial);
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

template <class T>
void step_all(OptimizerKind kind, const Hyperparameters& h, const Scalars<T>& s, std::vector<Element<T>>& elements) {
  if (kind != OptimizerKind::lamb && kind != OptimizerKind::lars) {
    const Scalars<T> clipped = h.max_unorm > 0.0f ? with_update_clipping(kind, h, s, elements) : s;
    for (auto& e : elements) step(kind, clipped, e);
    return;
  }
  std::vector<Tracked<T>> params, directions;
  for (auto& e : elements) {
    params.push_back(e.p);
    directions.push_back(kind == OptimizerKind::lamb ? lamb_first_pass(s, e) : prepared_gradient(s, e.g));
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
    if (kind == OptimizerKind::lamb) {
      trust = div(param_norm, direction_norm);
      if (h.max_trust_ratio > 0.0f && trust.value > T(h.max_trust_ratio)) trust.value = T(h.max_trust_ratio);  // min is 1-Lipschitz
    } else {
      trust = div(mul(exact_input<T>(h.trust_coefficient), param_norm),
                  add(direction_norm, mul(s.weight_decay, param_norm)));
    }
    if (may_degenerate) trust = without_bound(trust);
  }
  for (std::size_t i = 0; i < elements.size(); ++i) {
    Element<T>& e = elements[i];
    if (kind == OptimizerKind::lamb) {
      e.p = sub(e.p, mul(mul(s.lr, trust), directions[i]));
    } else {
      lars_second_pass(s, trust, e);
    }
  }
}

struct StorageRounding {
  double unit, underflow, largest;
};

StorageRounding storage_rounding(DType dtype) {
  switch (dtype) {
    case DType::f16: return {0x1p-11, 0x1p-25, 65504.0};
    case DType::bf16: return {0x1p-8, 0x1p-134, 0x1.fep127};
    default: return {kUnitF32, kUnderflowF32, static_cast<double>(FLT_MAX)};
  }
}

enum class Decision { pass, fail, undecided };

// One output: pass when |kernel - value| <= err - ref, fail when > err + ref.
template <class T>
Decision decide(const Tracked<T>& expected, float kernel, double largest, double& ratio) {
  if (!(expected.err < kInfinity)) return Decision::pass;  // ill-conditioned: no finite bound exists
  if (std::isinf(kernel)) {
    // Overflow is the correct rounding only when the exact value may reach the largest finite.
    const bool may_overflow = magnitude(expected.value) + expected.ref + expected.err >= largest;
    ratio = may_overflow ? 0.0 : kInfinity;
    return may_overflow && (kernel > 0) == (expected.value > T(0)) ? Decision::pass : Decision::fail;
  }
  if (std::isnan(kernel)) {
    ratio = kInfinity;
    return Decision::fail;
  }
  const double difference = magnitude(T(T(kernel) - expected.value));
  const double bound = expected.err * (1.0 + 0x1p-40);
  ratio = bound > 0 ? difference / bound : (difference > 0 ? kInfinity : 0.0);
  if (difference <= bound - expected.ref) return Decision::pass;
  if (difference > bound + expected.ref) return Decision::fail;
  return Decision::undecided;
}

template <class T>
Element<T> element_of(const OptimInput& in) {
  Element<T> e;
  e.p = exact_input<T>(in.p);
  e.g = exact_input<T>(in.g);
  for (int k = 0; k < 3; ++k) e.s[k] = exact_input<T>(in.s[k]);
  return e;
}

// Judge every element of one step; returns the worst decision.
template <class T>
Decision judge_all(OptimizerKind kind, const Hyperparameters& hyper, DType dtype, const std::vector<OptimInput>& inputs,
                   const std::vector<OptimOutput>& kernel, std::vector<ElementVerdict>& verdicts) {
  std::vector<Element<T>> elements;
  elements.reserve(inputs.size());
  for (const auto& in : inputs) elements.push_back(element_of<T>(in));
  step_all(kind, hyper, exact_scalars<T>(kind, hyper), elements);
  const StorageRounding storage = storage_rounding(dtype);
  const int states = optimizer_info(kind).states;
  const char* names[] = {"state0", "state1", "state2"};
  Decision overall = Decision::pass;
  for (std::size_t i = 0; i < elements.size(); ++i) {
    ElementVerdict& verdict = verdicts[i];
    const Tracked<T> p = round_to_storage(elements[i].p, storage.unit, storage.underflow);
    Decision element_decision = Decision::pass;
    verdict.worst_ratio = 0.0;
    verdict.ill_conditioned = false;
    for (int k = -1; k < states; ++k) {
      const Tracked<T>& expected = k < 0 ? p : elements[i].s[k];
      const float value = k < 0 ? kernel[i].p : kernel[i].s[k];
      double ratio = 0.0;
      const Decision d = decide(expected, value, k < 0 ? storage.largest : static_cast<double>(FLT_MAX), ratio);
      verdict.ill_conditioned = verdict.ill_conditioned || !(expected.err < kInfinity);
      verdict.worst_ratio = std::max(verdict.worst_ratio, ratio);
      if (d == Decision::fail && element_decision != Decision::fail) {
        char line[256];
        std::snprintf(line, sizeof line, "%s: kernel %a, exact %a, bound %.3g (%.3g of it)", k < 0 ? "parameter" : names[k],
                      static_cast<double>(value), magnitude(expected.value) * (expected.value < T(0) ? -1.0 : 1.0),
                      expected.err, ratio);
        verdict.detail = line;
      }
      if (d == Decision::fail) element_decision = Decision::fail;
      if (d == Decision::undecided && element_decision == Decision::pass) element_decision = Decision::undecided;
    }
    verdict.ok = element_decision != Decision::fail;
    verdict.undecided = element_decision == Decision::undecided;
    if (element_decision == Decision::fail) overall = Decision::fail;
    if (element_decision == Decision::undecided && overall == Decision::pass) overall = Decision::undecided;
  }
  return overall;
}

}  // namespace

OptimReference::OptimReference(OptimizerKind kind, const Hyperparameters& hyper, DType param_dtype)
    : kind_(kind), hyper_(hyper), param_dtype_(param_dtype) {}

std::vector<ElementVerdict> OptimReference::check_all(const std::vector<OptimInput>& inputs,
                                                     const std::vector<OptimOutput>& kernel) const {
  std::vector<ElementVerdict> verdicts(inputs.size());
  judge_all<double>(kind_, hyper_, param_dtype_, inputs, kernel, verdicts);
  std::vector<std::size_t> undecided;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].undecided) undecided.push_back(i);
  }
  if (undecided.empty()) return verdicts;
  // Elements within the double evaluation's own error of their bound are decided in MPFR: only
  // those for elementwise optimizers, the whole tensor for LAMB and LARS (the norms couple them).
  if (norm_based(kind_)) {
    judge_all<Exact>(kind_, hyper_, param_dtype_, inputs, kernel, verdicts);
    for (auto& verdict : verdicts) verdict.escalated = true;
  } else {
    std::vector<OptimInput> some_inputs;
    std::vector<OptimOutput> some_outputs;
    for (std::size_t i : undecided) {
      some_inputs.push_back(inputs[i]);
      some_outputs.push_back(kernel[i]);
    }
    std::vector<ElementVerdict> decided(undecided.size());
    judge_all<Exact>(kind_, hyper_, param_dtype_, some_inputs, some_outputs, decided);
    for (std::size_t j = 0; j < undecided.size(); ++j) {
      verdicts[undecided[j]] = decided[j];
      verdicts[undecided[j]].escalated = true;
    }
  }
  return verdicts;  // an element still undecided in MPFR is within 2^-250 of its bound: a pass
}

std::vector<ElementBounds> OptimReference::bounds_all(const std::vector<OptimInput>& inputs) const {
  std::vector<Element<double>> elements;
  for (const auto& in : inputs) elements.push_back(element_of<double>(in));
  step_all(kind_, hyper_, exact_scalars<double>(kind_, hyper_), elements);
  const StorageRounding storage = storage_rounding(param_dtype_);
  std::vector<ElementBounds> bounds(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const Tracked<double> p = round_to_storage(elements[i].p, storage.unit, storage.underflow);
    const Tracked<double>* outputs[4] = {&p, &elements[i].s[0], &elements[i].s[1], &elements[i].s[2]};
    for (int k = 0; k < 4; ++k) {
      bounds[i].value[k] = outputs[k]->value;
      bounds[i].bound[k] = (outputs[k]->err + outputs[k]->ref) * (1.0 + 0x1p-40);
    }
  }
  return bounds;
}

ElementVerdict OptimReference::check(const OptimInput& in, const OptimOutput& kernel) const {
  return check_all({in}, {kernel}).front();
}



struct ExactTrajectory::State {
  std::vector<Element<Exact>> elements;
};

ExactTrajectory::ExactTrajectory(OptimizerKind kind, const std::vector<OptimInput>& start)
    : kind_(kind), state_(new State) {
  for (const auto& in : start) state_->elements.push_back(element_of<Exact>(in));
}

ExactTrajectory::~ExactTrajectory() { delete state_; }
ExactTrajectory::ExactTrajectory(ExactTrajectory&& other) noexcept : kind_(other.kind_), state_(other.state_) {
  other.state_ = nullptr;
}
ExactTrajectory& ExactTrajectory::operator=(ExactTrajectory&& other) noexcept {
  std::swap(kind_, other.kind_);
  std::swap(state_, other.state_);
  return *this;
}

void ExactTrajectory::step(const Hyperparameters& hyper, const std::vector<float>& gradients) {
  for (std::size_t i = 0; i < gradients.size(); ++i) {
    Element<Exact>& e = state_->elements[i];
    e.g = exact_input<Exact>(gradients[i]);
    // The trajectory's values are exact; the kernel-error bookkeeping restarts every step.
    for (Tracked<Exact>* t : {&e.p, &e.s[0], &e.s[1], &e.s[2]}) {
      t->ref = 0;
      t->err = 0;
      t->nonnegative = !(t->value < Exact(0));
    }
  }
  step_all(kind_, hyper, exact_scalars<Exact>(kind_, hyper), state_->elements);
}

double ExactTrajectory::parameter(std::size_t i) const { return state_->elements[i].p.value.convert_to<double>(); }

double ExactTrajectory::state(std::size_t i, int k) const {
  return state_->elements[i].s[k].value.convert_to<double>();
}

std::uint32_t ExactTrajectory::parameter_bits(std::size_t i, DType dtype) const {
  return correctly_rounded_bits(state_->elements[i].p.value.backend().data(), dtype);
}

}  // namespace bitparity::reference
