// AdEMAMix in the kernels' operation order (ARITHMETIC.md), with its alpha and beta3 warm-ups.
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct AdemamixReference {
  template <class T>
  static void scalars(const ReferenceContext<T>& c, Scalars<T>& s) {
    using std::log;
    using std::pow;
    const Hyperparameters& h = c.h;
    const T one(1);
    const T inverse = one / (one - c.beta1_power);
    s.inverse_bias_correction1 = host_scalar<T>(inverse, evaluation_error(inverse, c.condition1));
    if (h.alpha_warmup > 0) {
      T alpha = T(c.t) * T(h.ademamix_alpha) / T(static_cast<double>(h.alpha_warmup));
      if (alpha > T(h.ademamix_alpha)) alpha = T(h.ademamix_alpha);
      s.alpha = host_scalar<T>(alpha, evaluation_error(alpha, 2.0));
    } else {
      s.alpha = user_value<T>(h.ademamix_alpha);
    }
    if (h.beta3_warmup > 0 && h.step < h.beta3_warmup) {
      const auto half_life = [&](const T& beta) { return T(log(T(0.5)) / log(beta) - one); };
      const T fraction = T(c.t) / T(static_cast<double>(h.beta3_warmup));
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
  }
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
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
};

}  // namespace

const ReferenceOptimizer ademamix_reference = elementwise_reference<AdemamixReference>();

}  // namespace bitparity::reference
