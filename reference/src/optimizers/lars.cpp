// LARS in the kernels' two passes (ARITHMETIC.md): the norms, then the local lr into SGD momentum.
#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct LarsReference {
  template <class T>
  static void scalars(const ReferenceContext<T>&, Scalars<T>&) {}
  template <class T>
  static Tracked<T> first_pass(const Scalars<T>& s, Element<T>& e) {
    return prepared_gradient(s, e.g);
  }
  template <class T>
  static Tracked<T> trust(const Hyperparameters& h, const Scalars<T>& s, const Tracked<T>& param_norm,
                          const Tracked<T>& direction_norm) {
    // eta ||p|| / (||g|| + wd ||p||) in the host's double arithmetic, rounded once to fp32.
    constexpr const KernelArithmetic& host = kHostDoubleArithmetic;
    const Tracked<T> numerator = mul(exact_input<T>(h.trust_coefficient), param_norm, host);
    const Tracked<T> denominator = add(direction_norm, mul(s.weight_decay, param_norm, host), host);
    return host_rounded_to_fp32(div(numerator, denominator, host));
  }
  template <class T>
  static void second_pass(const Scalars<T>& s, const Tracked<T>& local_lr, const Tracked<T>&, Element<T>& e) {
    const Tracked<T> g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const Tracked<T> scaled = mul(local_lr, g);
    Tracked<T> direction = scaled;
    if (s.momentum.value != T(0)) {
      const Tracked<T> buffer =
          s.first_step ? scaled : add(mul(s.momentum, e.s[0]), mul(s.one_minus_dampening, scaled));
      e.s[0] = buffer;
      direction = s.nesterov ? add(scaled, mul(s.momentum, buffer)) : buffer;
    }
    e.p = sub(e.p, mul(s.lr, direction));
  }
};

}  // namespace

const ReferenceOptimizer lars_reference = norm_based_reference<LarsReference>();

}  // namespace bitparity::reference
