// Adagrad with lr decay in the kernels' operation order (ARITHMETIC.md).
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct AdagradReference {
  template <class T>
  static void scalars(const ReferenceContext<T>& c, Scalars<T>& s) {
    const T step_size = T(c.h.lr) / (T(1) + T(c.t - 1.0) * T(c.h.lr_decay));
    s.step_size = host_scalar<T>(step_size, evaluation_error(step_size, 2.0));
  }
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
    const Tracked<T> g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const Tracked<T> sum = add(e.s[0], mul(g, g));
    e.s[0] = sum;
    const Tracked<T> denom = add(square_root(sum), s.eps);
    apply_update(s, e.p, mul(s.step_size, div(g, denom)), e);
  }
};

}  // namespace

const ReferenceOptimizer adagrad_reference = elementwise_reference<AdagradReference>();

}  // namespace bitparity::reference
