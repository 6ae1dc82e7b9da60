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
  s.weight_decay = user_value<T>(h.weight_decay);
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
};

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
  e.p = sub(p, mul(s.step_size, div(m, denom)));
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
  e.p = sub(e.p, mul(s.lr, direction));
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
    e.p = sub(e.p, mul(s.lr, buffer));
  } else {
    e.p = sub(e.p, mul(s.lr, div(g, denom)));
  }
}

template <class T>
void adagrad(const Scalars<T>& s, Element<T>& e) {
  Tracked<T> g = prepared_gradient(s, e.g);
  if (s.weight_decay.value != T(0)) g = add(g, mul(s.weight_decay, e.p));
  const Tracked<T> sum = add(e.s[0], mul(g, g));
  e.s[0] = sum;
  const Tracked<T> denom = add(square_root(sum), s.eps);
  e.p = sub(e.p, mul(s.step_size, div(g, denom)));
}

template <class T>
void lion(const Scalars<T>& s, Element<T>& e) {
  const Tracked<T> g = prepared_gradient(s, e.g);
  const Tracked<T> p = mul(e.p, s.decay);
  const Tracked<T> interpolation = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  e.p = sub(p, mul(s.lr, sign(interpolation)));
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
  e.p = sub(p, mul(s.lr, div(numerator, denom)));
  e.s[0] = fast;
  e.s[1] = slow;
  e.s[2] = nu;
}

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

template <class T>
Decision judge(OptimizerKind kind, const Hyperparameters& hyper, DType dtype, const OptimInput& in,
               const OptimOutput& kernel, ElementVerdict& verdict) {
  Element<T> e = element_of<T>(in);
  step(kind, exact_scalars<T>(kind, hyper), e);
  const StorageRounding storage = storage_rounding(dtype);
  const Tracked<T> p = round_to_storage(e.p, storage.unit, storage.underflow);
  const int states = optimizer_info(kind).states;
  const char* names[] = {"state0", "state1", "state2"};
  Decision overall = Decision::pass;
  verdict.worst_ratio = 0.0;
  verdict.ill_conditioned = !(p.err < kInfinity);
  for (int k = -1; k < states; ++k) {
    const Tracked<T>& expected = k < 0 ? p : e.s[k];
    const float value = k < 0 ? kernel.p : kernel.s[k];
    double ratio = 0.0;
    const Decision d = decide(expected, value, k < 0 ? storage.largest : static_cast<double>(FLT_MAX), ratio);
    verdict.ill_conditioned = verdict.ill_conditioned || !(expected.err < kInfinity);
    verdict.worst_ratio = std::max(verdict.worst_ratio, ratio);
    if (d == Decision::fail && overall != Decision::fail) {
      std::ostringstream text;
      char line[256];
      std::snprintf(line, sizeof line, "%s: kernel %a, exact %a, bound %.3g (%.3g of it)", k < 0 ? "parameter" : names[k],
                    static_cast<double>(value), magnitude(expected.value) * (expected.value < T(0) ? -1.0 : 1.0),
                    expected.err, ratio);
      verdict.detail = line;
    }
    if (d == Decision::fail) overall = Decision::fail;
    if (d == Decision::undecided && overall == Decision::pass) overall = Decision::undecided;
  }
  return overall;
}

}  // namespace

OptimReference::OptimReference(OptimizerKind kind, const Hyperparameters& hyper, DType param_dtype)
    : kind_(kind), hyper_(hyper), param_dtype_(param_dtype) {}

ElementVerdict OptimReference::check(const OptimInput& in, const OptimOutput& kernel) const {
  ElementVerdict verdict;
  Decision d = judge<double>(kind_, hyper_, param_dtype_, in, kernel, verdict);
  if (d == Decision::undecided) {
    verdict.escalated = true;
    d = judge<Exact>(kind_, hyper_, param_dtype_, in, kernel, verdict);
  }
  verdict.ok = d != Decision::fail;  // still undecided in MPFR: within 2^-250 of the bound, a pass
  return verdict;
}

void OptimReference::exact_step(const OptimInput& in, double& p, double s[3]) const {
  Element<Exact> e = element_of<Exact>(in);
  step(kind_, exact_scalars<Exact>(kind_, hyper_), e);
  p = e.p.value.convert_to<double>();
  for (int k = 0; k < 3; ++k) s[k] = e.s[k].value.convert_to<double>();
}

struct ExactTrajectory::State {
  Element<Exact> element;
};

ExactTrajectory::ExactTrajectory(OptimizerKind kind, const OptimInput& start)
    : kind_(kind), state_(new State{element_of<Exact>(start)}) {}

ExactTrajectory::~ExactTrajectory() { delete state_; }
ExactTrajectory::ExactTrajectory(ExactTrajectory&& other) noexcept : kind_(other.kind_), state_(other.state_) {
  other.state_ = nullptr;
}
ExactTrajectory& ExactTrajectory::operator=(ExactTrajectory&& other) noexcept {
  std::swap(kind_, other.kind_);
  std::swap(state_, other.state_);
  return *this;
}

void ExactTrajectory::step(const Hyperparameters& hyper, float gradient) {
  state_->element.g = exact_input<Exact>(gradient);
  bitparity::reference::step(kind_, exact_scalars<Exact>(kind_, hyper), state_->element);
}

double ExactTrajectory::parameter() const { return state_->element.p.value.convert_to<double>(); }

std::uint32_t ExactTrajectory::parameter_bits(DType dtype) const {
  return correctly_rounded_bits(state_->element.p.value.backend().data(), dtype);
}

}  // namespace bitparity::reference
