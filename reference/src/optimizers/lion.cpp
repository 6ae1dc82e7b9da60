// Lion in the kernels' operation order (ARITHMETIC.md).
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct LionReference {
  template <class T>
  static void scalars(const ReferenceContext<T>&, Scalars<T>&) {}
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
    const Tracked<T> g = prepared_gradient(s, e.g);
    const Tracked<T> p = mul(e.p, s.decay);
    const Tracked<T> interpolation = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    apply_update(s, p, mul(s.lr, sign(interpolation)), e);
    e.s[0] = moving_average(s.beta2, s.one_minus_beta2, e.s[0], g);
  }
};

}  // namespace

const ReferenceOptimizer lion_reference = elementwise_reference<LionReference>();

}  // namespace bitparity::reference
