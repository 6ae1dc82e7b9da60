// LAMB in the kernels' two passes (ARITHMETIC.md): moments and direction, then the trust ratio.
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct LambReference {
  template <class T>
  static void scalars(const ReferenceContext<T>& c, Scalars<T>& s) {
    const T inverse = T(1) / (T(1) - c.beta1_power);
    s.inverse_bias_correction1 = host_scalar<T>(inverse, evaluation_error(inverse, c.condition1));
  }
  // The new moments and the direction u = m_hat / (sqrt(v_hat) + eps) + wd * p.
  template <class T>
  static Tracked<T> first_pass(const Scalars<T>& s, Element<T>& e) {
    const Tracked<T> g = prepared_gradient(s, e.g);
    e.s[0] = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    e.s[1] = moving_average(s.beta2, s.one_minus_beta2, e.s[1], mul(g, g));
    const Tracked<T> denom = add(div(square_root(e.s[1]), s.bias_correction2_sqrt), s.eps);
    const Tracked<T> ratio = div(mul(e.s[0], s.inverse_bias_correction1), denom);
    return s.weight_decay.value != T(0) ? add(ratio, mul(s.weight_decay, e.p)) : ratio;
  }
  // ||p|| / ||u|| in the host's double arithmetic, from the norms' own bounds (exact sums rounded once).
  template <class T>
  static Tracked<T> trust(const Hyperparameters& h, const Scalars<T>&, const Tracked<T>& param_norm,
                          const Tracked<T>& direction_norm) {
    Tracked<T> trust = div(param_norm, direction_norm, kHostDoubleArithmetic);
    if (h.max_trust_ratio > 0.0f && trust.value > T(h.max_trust_ratio)) trust.value = T(h.max_trust_ratio);  // min is 1-Lipschitz
    return trust;
  }
  // The kernel's factor fl32(lr * trust), its product taken in double and rounded once.
  template <class T>
  static void second_pass(const Scalars<T>& s, const Tracked<T>& trust, const Tracked<T>& direction, Element<T>& e) {
    const Tracked<T> factor = host_rounded_to_fp32(mul(s.lr, trust, kHostDoubleArithmetic));
    e.p = sub(e.p, mul(factor, direction));
  }
};

}  // namespace

const ReferenceOptimizer lamb_reference = norm_based_reference<LambReference>();

}  // namespace bitparity::reference
