// Adam with amsgrad in the kernels' operation order (ARITHMETIC.md).
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

// max is 1-Lipschitz in each argument: the kernel's maximum errs by at most the larger input error.
template <class T>
Tracked<T> maximum(const Tracked<T>& a, const Tracked<T>& b) {
  Tracked<T> r = a.value > b.value ? a : b;
  r.ref = std::max(a.ref, b.ref);
  r.err = std::max(a.err, b.err);
  r.nonnegative = a.nonnegative || b.nonnegative;
  return r;
}

struct AmsgradReference {
  template <class T>
  static void scalars(const ReferenceContext<T>& c, Scalars<T>& s) {
    const T step_size = T(c.h.lr) / (T(1) - c.beta1_power);
    s.step_size = host_scalar<T>(step_size, evaluation_error(step_size, c.condition1));
  }
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
    const Tracked<T> g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const Tracked<T> m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    const Tracked<T> v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], mul(g, g));
    const Tracked<T> v_max = maximum(v, e.s[2]);
    const Tracked<T> denom = add(div(square_root(v_max), s.bias_correction2_sqrt), s.eps);
    apply_update(s, e.p, mul(s.step_size, div(m, denom)), e);
    e.s[0] = m;
    e.s[1] = v;
    e.s[2] = v_max;
  }
};

}  // namespace

const ReferenceOptimizer amsgrad_reference = elementwise_reference<AmsgradReference>();

}  // namespace bitparity::reference
