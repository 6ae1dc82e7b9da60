// Adam and AdamW in the kernels' operation order (ARITHMETIC.md): AdamW differs only in where the
// weight decay goes, so both share one step here.
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

template <class T>
void adam_step(const Scalars<T>& s, bool decoupled, Element<T>& e) {
  Tracked<T> g = prepared_gradient(s, e.g);
  Tracked<T> p = e.p;
  if (decoupled) {
    p = mul(p, s.decay);
  } else {
    g = with_l2_decay(s, g, p);
  }
  const Tracked<T> m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
  const Tracked<T> v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], mul(g, g));
  const Tracked<T> denom = add(div(square_root(v), s.bias_correction2_sqrt), s.eps);
  apply_update(s, p, mul(s.step_size, div(m, denom)), e);
  e.s[0] = m;
  e.s[1] = v;
}

template <bool Decoupled>
struct AdamReference {
  template <class T>
  static void scalars(const ReferenceContext<T>& c, Scalars<T>& s) {
    const T step_size = T(c.h.lr) / (T(1) - c.beta1_power);
    s.step_size = host_scalar<T>(step_size, evaluation_error(step_size, c.condition1));
  }
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
    adam_step(s, Decoupled, e);
  }
};

}  // namespace

const ReferenceOptimizer adam_reference = elementwise_reference<AdamReference<false>>();
const ReferenceOptimizer adamw_reference = elementwise_reference<AdamReference<true>>();

}  // namespace bitparity::reference
