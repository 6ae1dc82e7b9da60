// RMSprop (smoothing alpha, centered, momentum) in the kernels' operation order (ARITHMETIC.md).
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct RmspropReference {
  template <class T>
  static void scalars(const ReferenceContext<T>& c, Scalars<T>& s) {
    s.alpha = user_value<T>(c.h.smoothing);
    s.one_minus_alpha = host_scalar<T>(T(1) - T(c.h.smoothing), 0.0);
  }
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
    const Tracked<T> g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const Tracked<T> square_avg = moving_average(s.alpha, s.one_minus_alpha, e.s[0], mul(g, g));
    e.s[0] = square_avg;
    Tracked<T> variance = square_avg;
    if (s.centered) {
      const Tracked<T> grad_avg = moving_average(s.alpha, s.one_minus_alpha, e.s[1], g);
      e.s[1] = grad_avg;
      variance = clamped_at_zero(sub(square_avg, mul(grad_avg, grad_avg)));
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
};

}  // namespace

const ReferenceOptimizer rmsprop_reference = elementwise_reference<RmspropReference>();

}  // namespace bitparity::reference
