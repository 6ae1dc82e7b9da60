#pragma once
// A running forward-error bound: every value carries the reference's own value (in T: double to
// screen, MPFR to decide), a bound `ref` on |value - exact| (T's rounding), and a bound `err` on
// |kernel's fp32 result - exact| that follows the kernel's operation order (ERROR_MODEL.md).
// Each kernel operation adds its rounding max(u|r|, eta) <= u|r| + eta on top of the propagated
// input errors, so cancellation widens the bound only where the arithmetic really loses accuracy.
#include <cmath>
#include <limits>

namespace bitparity::reference {

inline constexpr double kUnitF32 = 0x1p-24;      // fp32 unit roundoff
inline constexpr double kUnderflowF32 = 0x1p-150;  // half the smallest fp32 subnormal
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

template <class T>
struct Tracked {
  T value{};
  double ref = 0.0;  // |value - exact|
  double err = 0.0;  // |kernel - exact|
  bool nonnegative = false;  // the kernel's value cannot be negative (squares, sums of them, ...)
};

template <class T>
double magnitude(const T& x) {
  using std::fabs;
  if constexpr (std::is_same_v<T, double>) {
    return std::fabs(x);
  } else {
    return std::fabs(x.template convert_to<double>());
  }
}

// The unit roundoff of T's arithmetic (double: 2^-53; MPFR at 266 bits: negligible but counted).
template <class T>
constexpr double unit_of() {
  if constexpr (std::is_same_v<T, double>) {
    return 0x1p-53;
  } else {
    return 0x1p-260;
  }
}

// The arithmetic a kernel operation rounds in: fp32 for element bodies, double for the host's
// scalars (the trust ratio of LAMB and LARS, computed from norms in double, rounded once to fp32).
struct KernelArithmetic {
  double unit;       // unit roundoff
  double underflow;  // bound on a rounding error in the subnormal range
};
inline constexpr KernelArithmetic kFp32Arithmetic{kUnitF32, kUnderflowF32};
// (The smallest double subnormal, 2^-1074, bounds a double rounding in the subnormal range; half of
// it is not a double.)
inline constexpr KernelArithmetic kHostDoubleArithmetic{0x1p-53, 0x1p-1074};

// Bound on the kernel's rounding of a result whose exact-operation magnitude is at most m.
inline double kernel_rounding(double m, const KernelArithmetic& in = kFp32Arithmetic) {
  return in.unit * m + in.underflow;
}

template <class T>
Tracked<T> exact_input(float x) {
  return {T(x), 0.0, 0.0, !(x < 0.0f)};
}

// A host-computed scalar: `exact` is its mathematical value (with reference error `ref`), the kernel
// sees it rounded once to fp32 after a double computation.
template <class T>
bool representable_in_f32(const T& x) {
  if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(static_cast<float>(x)) == x;
  } else {
    return T(x.template convert_to<float>()) == x;
  }
}

template <class T>
Tracked<T> host_scalar(const T& exact, double ref) {
  // A value that fp32 holds exactly and the reference knows exactly (1 - 0.9f, 1/65536, ...) is
  // what the host computes, with no error.
  if (ref == 0.0 && representable_in_f32(exact)) return {exact, 0.0, 0.0, !(exact < T(0))};
  const double m = magnitude(exact) + ref;
  return {exact, ref, kUnitF32 * m + 0x1p-48 * m + kUnderflowF32, !(exact < T(0))};
}

// A value without a finite bound poisons everything computed from it.
template <class T>
bool unbounded(const Tracked<T>& a) {
  return !(a.err < kInfinity) || !(a.ref < kInfinity);
}

// The same value without a bound: its exact value stays meaningful (exact trajectories use it),
// only the kernel's error is unknown.
template <class T>
Tracked<T> without_bound(Tracked<T> a) {
  a.ref = kInfinity;
  a.err = kInfinity;
  return a;
}

// An exact zero: the kernel holds exactly 0 too, and 0 * x, 0 + x are exact in fp32.
template <class T>
bool exact_zero(const Tracked<T>& a) {
  return a.value == T(0) && a.ref == 0.0 && a.err == 0.0;
}

template <class T>
Tracked<T> add(const Tracked<T>& a, const Tracked<T>& b, const KernelArithmetic& in = kFp32Arithmetic) {
  if (exact_zero(a)) return b;
  if (exact_zero(b)) return a;
  Tracked<T> r;
  r.value = a.value + b.value;
  if (unbounded(a) || unbounded(b)) return without_bound(r);
  const double v = magnitude(r.value);
  r.ref = a.ref + b.ref + unit_of<T>() * v;
  const double propagated = a.err + b.err;
  r.err = propagated + kernel_rounding(v + r.ref + propagated, in);
  r.nonnegative = a.nonnegative && b.nonnegative;  // a rounded sum of non-negatives is non-negative
  return r;
}

template <class T>
Tracked<T> negate(const Tracked<T>& a) {
  return {T(-a.value), a.ref, a.err, false};
}

template <class T>
Tracked<T> sub(const Tracked<T>& a, const Tracked<T>& b) {
  return add(a, negate(b));
}

template <class T>
Tracked<T> mul(const Tracked<T>& a, const Tracked<T>& b, const KernelArithmetic& in = kFp32Arithmetic) {
  if ((exact_zero(a) && !unbounded(b)) || (exact_zero(b) && !unbounded(a))) return {T(0), 0.0, 0.0, true};
  Tracked<T> r;
  r.value = a.value * b.value;
  if (unbounded(a) || unbounded(b)) return without_bound(r);
  const double v = magnitude(r.value);
  const double A = magnitude(a.value) + a.ref, B = magnitude(b.value) + b.ref;  // bounds on |exact|
  r.ref = magnitude(a.value) * b.ref + magnitude(b.value) * a.ref + a.ref * b.ref + unit_of<T>() * v;
  const double propagated = A * b.err + B * a.err + a.err * b.err;
  r.err = propagated + kernel_rounding(v + r.ref + propagated, in);
  r.nonnegative = (a.nonnegative && b.nonnegative) || &a == &b;  // x * x >= 0
  return r;
}

template <class T>
Tracked<T> div(const Tracked<T>& a, const Tracked<T>& b, const KernelArithmetic& in = kFp32Arithmetic) {
  Tracked<T> r;
  r.value = a.value / b.value;
  if (unbounded(a) || unbounded(b)) return without_bound(r);
  const double v = magnitude(r.value);
  const double b_low = magnitude(b.value) - b.ref;  // lower bound on |exact b|
  if (!(b_low > b.err)) return without_bound(r);  // the divisor may vanish
  r.ref = (a.ref + v * b.ref) / b_low + unit_of<T>() * v;
  const double Q = v + r.ref;
  const double propagated = (a.err + Q * b.err) / (b_low - b.err);
  r.err = propagated + kernel_rounding(v + r.ref + propagated, in);
  r.nonnegative = a.nonnegative && b.nonnegative;
  return r;
}

// |sqrt(x) - sqrt(y)| <= min(|x - y| / (sqrt(x) + sqrt(y)), sqrt(|x - y|)), with x >= low >= 0.
inline double sqrt_propagation(double low, double e) {
  if (low <= 0.0) return std::sqrt(e);
  return std::min(e / (std::sqrt(low) + std::sqrt(std::max(low - e, 0.0))), std::sqrt(e));
}

template <class T>
Tracked<T> square_root(const Tracked<T>& a) {
  using std::sqrt;
  // An argument that may be negative in the kernel (cancellation) could produce NaN: no bound holds.
  Tracked<T> r;
  const T argument = a.value < T(0) ? T(0) : a.value;
  const bool may_be_negative = !a.nonnegative && (a.value < T(0) || magnitude(a.value) - a.ref - a.err < 0.0);
  if (unbounded(a) || may_be_negative) {
    r.value = sqrt(argument);
    return without_bound(r);
  }
  const double low = std::max(magnitude(argument) - a.ref, 0.0);
  r.value = sqrt(argument);
  const double v = magnitude(r.value);
  r.ref = sqrt_propagation(low, a.ref) + unit_of<T>() * v;
  const double propagated = sqrt_propagation(low, a.err);
  r.err = propagated + kernel_rounding(v + r.ref + propagated);
  r.nonnegative = true;
  return r;
}

// max(x, 0), the specified clamp of a centred variance: exact on both sides (the exact operation is
// max(exact, 0) too), and max(., 0) is 1-Lipschitz, so neither bound grows. NaN stays NaN.
template <class T>
Tracked<T> clamped_at_zero(const Tracked<T>& a) {
  Tracked<T> r = a;
  if (a.value < T(0)) r.value = T(0);
  r.nonnegative = true;
  return r;
}

// sign(x) in {-1, 0, 1}: exact when |x| exceeds the kernel's error, otherwise off by up to 2.
template <class T>
Tracked<T> sign(const Tracked<T>& a) {
  const T s = a.value > T(0) ? T(1) : (a.value < T(0) ? T(-1) : T(0));
  if (unbounded(a)) return without_bound(Tracked<T>{s, 0.0, 0.0, false});
  const bool certain = magnitude(a.value) - a.ref > a.err || (a.err == 0.0 && a.ref == 0.0);
  return {s, certain ? 0.0 : 2.0, certain ? 0.0 : 2.0, false};
}

// The final store of a parameter: one more rounding, to the parameter's dtype.
template <class T>
Tracked<T> round_to_storage(const Tracked<T>& a, double unit, double underflow) {
  Tracked<T> r = a;
  r.err = a.err + unit * (magnitude(a.value) + a.ref + a.err) + underflow;
  return r;
}

// A scalar the host computed in double, rounded once to fp32 for the kernel.
template <class T>
Tracked<T> host_rounded_to_fp32(const Tracked<T>& a) {
  return round_to_storage(a, kUnitF32, kUnderflowF32);
}

}  // namespace bitparity::reference
