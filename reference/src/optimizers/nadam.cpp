// NAdam in the kernels' operation order (ARITHMETIC.md). The momentum-decay product is computed
// here factor by factor in T (the host uses a truncated loop in double); its bound follows the
// host's evaluation: ERROR_MODEL.md, "NAdam".
#include <cmath>

#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct NadamReference {
  template <class T>
  static void scalars(const ReferenceContext<T>& c, Scalars<T>& s) {
    using std::log;
    using std::pow;
    const Hyperparameters& h = c.h;
    const T one(1), half(0.5), base(0.96), beta1(h.beta1), lr(h.lr);
    const T psi(h.specific[descriptors::Nadam::kMomentumDecay]);
    // prod_{i <= t} mu_i, factor by factor until it is below 2^-1000 (the host's value is then 0 as
    // well, within the 2^-1000 of the bound) or 0.96^(i psi) < 2^-120. MPFR steps the power by
    // products (266 bits absorb their error); double takes pow each time, as the host does.
    T product(1), decay(1);
    const T ratio = pow(base, psi);
    double tail = 0.0;  // relative: the factors left out by the host's cut at 2^-64
    std::int64_t factors = 0;
    for (std::int64_t i = 1; i <= h.step; ++i) {
      if constexpr (std::is_same_v<T, double>) {
        decay = pow(base, T(static_cast<double>(i)) * psi);
      } else {
        decay *= ratio;
      }
      product *= beta1 * (one - half * decay);
      ++factors;
      if (product < T(0x1p-1000)) {
        product = T(0);
        break;
      }
      if (decay < T(0x1p-120)) {
        product *= pow(beta1, T(static_cast<double>(h.step - i)));
        break;
      }
    }
    if (h.specific[descriptors::Nadam::kMomentumDecay] > 0.0f) {
      const double x = std::pow(0.96, static_cast<double>(h.specific[descriptors::Nadam::kMomentumDecay]));
      tail = 0x1p-64 * x / (1.0 - x);
    }
    const auto exponent = [&](double step) {  // |t psi ln 0.96|, the argument of the host's pow
      return std::fabs(step * h.specific[descriptors::Nadam::kMomentumDecay] * std::log(0.96));
    };
    const T one_minus_mu = (one - beta1) + half * beta1 * pow(base, T(c.t) * psi);
    const T mu_next = beta1 - beta1 * half * pow(base, T(c.t + 1.0) * psi);
    const double p = magnitude(product);
    // Relative error of the host's product: pow and a product per factor (0.96^(i psi) >= 2^-64, so
    // |i psi ln 0.96| <= 45), the final beta1 power, the cut tail, and 2^-1000 absolute.
    const double product_relative =
        p > 0 ? 0x1p-53 * (6.0 + std::fabs(std::log(p)) + 50.0 * static_cast<double>(factors)) + std::min(tail, 1.0) : 0.0;
    const double conditioning = p / (1.0 - p);
    const double host_gradient = 0x1p-53 * (8.0 + std::min(exponent(c.t), 800.0)) + conditioning * product_relative +
                                 0x1p-1000 / (1.0 - p);
    const double host_momentum = 0x1p-53 * (8.0 + std::min(exponent(c.t + 1.0), 800.0)) + conditioning * product_relative +
                                 0x1p-1000 / (1.0 - p);
    const T gradient_coefficient = lr * one_minus_mu / (one - product);
    const T momentum_coefficient = lr * mu_next / (one - product * mu_next);
    s.coefficient[descriptors::Nadam::kGradientCoefficient] =
        host_scalar_with_error<T>(gradient_coefficient, evaluation_error(gradient_coefficient, 8.0 + static_cast<double>(factors)), host_gradient);
    s.coefficient[descriptors::Nadam::kMomentumCoefficient] =
        host_scalar_with_error<T>(momentum_coefficient, evaluation_error(momentum_coefficient, 8.0 + static_cast<double>(factors)), host_momentum);
  }
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
    const Tracked<T> g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const Tracked<T> m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    const Tracked<T> v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], mul(g, g));
    const Tracked<T> denom = add(div(square_root(v), s.bias_correction2_sqrt), s.eps);
    const Tracked<T> update = add(mul(s.coefficient[descriptors::Nadam::kGradientCoefficient], div(g, denom)),
                                  mul(s.coefficient[descriptors::Nadam::kMomentumCoefficient], div(m, denom)));
    apply_update(s, e.p, update, e);
    e.s[0] = m;
    e.s[1] = v;
  }
};

}  // namespace

const ReferenceOptimizer nadam_reference = elementwise_reference<NadamReference>();

}  // namespace bitparity::reference
