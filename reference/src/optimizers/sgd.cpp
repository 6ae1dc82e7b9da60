// SGD with momentum, dampening and Nesterov, in the kernels' operation order (ARITHMETIC.md).
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct SgdReference {
  template <class T>
  static void scalars(const ReferenceContext<T>&, Scalars<T>&) {}
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
    const Tracked<T> g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    Tracked<T> direction = g;
    if (s.momentum.value != T(0)) {
      const Tracked<T> buffer = s.first_step ? g : add(mul(s.momentum, e.s[0]), mul(s.one_minus_dampening, g));
      e.s[0] = buffer;
      direction = s.nesterov ? add(g, mul(s.momentum, buffer)) : buffer;
    }
    apply_update(s, e.p, mul(s.lr, direction), e);
  }
};

}  // namespace

const ReferenceOptimizer sgd_reference = elementwise_reference<SgdReference>();

}  // namespace bitparity::reference
