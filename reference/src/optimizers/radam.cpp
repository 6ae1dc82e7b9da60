// RAdam in the kernels' operation order (ARITHMETIC.md). Which form the step takes (rho_t > 5) is
// decided here in T; a step whose rho_t is within the host's error of 5 could take either form and
// is ill-conditioned. The bounds follow the host's double evaluation: ERROR_MODEL.md, "RAdam".
#include <cmath>

#include "../optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {

struct RadamReference {
  template <class T>
  static void scalars(const ReferenceContext<T>& c, Scalars<T>& s) {
    using std::sqrt;
    const Hyperparameters& h = c.h;
    const double u = 0x1p-53;
    const T one(1), two(2), beta2(h.beta2), lr(h.lr);
    const T step_size = lr / (one - c.beta1_power);
    s.step_size = host_scalar<T>(step_size, evaluation_error(step_size, c.condition1));
    const T rho_inf = two / (one - beta2) - one;
    const T second = two * T(c.t) * c.beta2_power / (one - c.beta2_power);
    const T rho_t = rho_inf - second;
    // The host's absolute error on rho_t: pow (2 + t |ln beta2|) u relative, 1 - beta2^t, the
    // products and quotients, and the final subtraction.
    const double p2 = magnitude(c.beta2_power), log_beta2 = h.beta2 > 0.0f ? std::fabs(std::log(double{h.beta2})) : 0.0;
    const double power_relative = (2.0 + c.t * log_beta2) * u;
    const double bias2_relative = p2 * power_relative / std::max(1.0 - p2, 1e-300) + u;
    const double second_error = magnitude(second) * (power_relative + bias2_relative + 4.0 * u);
    const double rho_error = 3.0 * u * magnitude(rho_inf) + second_error + u * magnitude(rho_t);
    const double own = evaluation_error(rho_t, 4.0 * (magnitude(rho_inf) + magnitude(second)) / std::max(magnitude(rho_t), 1e-300));
    s.variant = rho_t > T(5);
    if (magnitude(T(rho_t - T(5))) <= rho_error + own) {
      // The host may take either form: no finite bound on this step.
      s.step_size = without_bound(s.step_size);
      s.coefficient[descriptors::Radam::kRectifiedStep] = without_bound(exact_input<T>(0.0f));
      return;
    }
    if (!s.variant) return;
    const T four(4);
    const T rect = sqrt((rho_t - four) * (rho_t - two) * rho_inf / ((rho_inf - four) * (rho_inf - two) * rho_t));
    const T coefficient = lr * rect * sqrt(T(one - c.beta2_power)) / (one - c.beta1_power);
    // d ln rect / d rho_t <= 1 / (rho_t - 4); the bias corrections as Adam's (condition factors).
    const double host = rho_error / magnitude(T(rho_t - four)) +
                        4.0 * u * magnitude(rho_inf) / magnitude(T(rho_inf - four)) +
                        (c.condition1 + c.condition2) * 4.0 * u + bias2_relative + 8.0 * u;
    const double conditioning = 8.0 + (magnitude(rho_inf) + magnitude(second)) / magnitude(T(rho_t - four)) +
                                c.condition1 + c.condition2;
    s.coefficient[descriptors::Radam::kRectifiedStep] =
        host_scalar_with_error<T>(coefficient, evaluation_error(coefficient, conditioning), host);
  }
  template <class T>
  static void element(const Scalars<T>& s, Element<T>& e) {
    const Tracked<T> g = with_l2_decay(s, prepared_gradient(s, e.g), e.p);
    const Tracked<T> m = moving_average(s.beta1, s.one_minus_beta1, e.s[0], g);
    const Tracked<T> v = moving_average(s.beta2, s.one_minus_beta2, e.s[1], mul(g, g));
    if (s.variant) {
      const Tracked<T> denom = add(square_root(v), s.eps);
      apply_update(s, e.p, mul(s.coefficient[descriptors::Radam::kRectifiedStep], div(m, denom)), e);
    } else {
      apply_update(s, e.p, mul(s.step_size, m), e);
    }
    e.s[0] = m;
    e.s[1] = v;
  }
};

}  // namespace

const ReferenceOptimizer radam_reference = elementwise_reference<RadamReference>();

}  // namespace bitparity::reference
