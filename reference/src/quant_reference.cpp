// Admissible codes, decided in double where that is safe and in MPFR where it is not.
//
// The kernel computes v^ = fl(v) with v = x / absmax, so |v^ - v| <= e(v) = max(2^-24 |v|, 2^-150),
// and e(v) = 0 when v is an fp32 value. It must then take the code nearest to v^, exactly: code j
// when M_{j-1} < v^ <= M_j for the exact midpoints M (a tie goes to the lower code). Code j is
// admissible when that region meets [v - e(v), v + e(v)]: a second code only where the division's
// rounding can cross a midpoint, never for a threshold of the kernel's own. Every comparison is of
// the form  v + s*e(v)  versus  B  with B exact; multiplied by absmax > 0 it becomes a comparison of
// exact products, which MPFR at 266 bits evaluates exactly.
#include "bitparity/reference/quant_reference.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>

#include <boost/multiprecision/mpfr.hpp>

#include "bitparity/kernels/quant_format.hpp"
#include "bitparity/reference/rounding.hpp"

namespace bitparity::reference {

namespace {

using Exact = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<80>>;  // 80 digits: 266 bits
using ExactArray = Eigen::Array<Exact, Eigen::Dynamic, 1>;

constexpr double kRelative = 0x1p-24;   // unit roundoff of fp32
constexpr double kAbsolute = 0x1p-150;  // half the smallest fp32 subnormal

// Exact sign of (v + direction * e(v)) - bound, where v = x / a, a > 0.
// v + e(v) >= B  iff  (x + 2^-24 |x| >= B a) or (x + 2^-150 a >= B a); symmetrically for minus.
int exact_compare(float x, float a, int direction, const Exact& bound) {
  const Exact ex = x, ea = a, scaled_bound = bound * ea;
  const Exact relative = ex + direction * Exact(kRelative) * abs(ex);
  const Exact absolute = ex + direction * Exact(kAbsolute) * ea;
  // direction +1: v + e(v) = max of the two forms; direction -1: min of the two forms.
  const Exact shifted = direction == 0 ? ex : direction > 0 ? std::max(relative, absolute) : std::min(relative, absolute);
  return shifted < scaled_bound ? -1 : (shifted > scaled_bound ? 1 : 0);
}

struct Thresholds {
  std::vector<double> approx;  // double nearest to each exact threshold
  ExactArray exact;
};

// Count thresholds t with t <op> (v + direction*e(v)), deciding in double unless too close.
// strict: count t < w; otherwise count t <= w. Thresholds are ascending. Direction 0 is used only
// when v is an fp32 value: then v is exact in double, and so is every threshold (midpoints and code
// values), so double decides every comparison, ties included.
int count_below(const Thresholds& thresholds, float x, float a, int direction, bool strict, bool& escalated) {
  const double v = static_cast<double>(x) / static_cast<double>(a);
  const bool exact = direction == 0;
  const double error = exact ? 0.0 : std::max(kRelative * std::fabs(v), kAbsolute);
  const double w = v + direction * error;
  // Error of w in double: a few units in the last place of |v| plus the subnormal floor.
  const double slack = exact ? 0.0 : 0x1p-49 * (std::fabs(v) + error) + 0x1p-1060;
  int count = static_cast<int>(std::lower_bound(thresholds.approx.begin(), thresholds.approx.end(), w - slack) -
                               thresholds.approx.begin());
  while (count < static_cast<int>(thresholds.approx.size())) {
    const double t = thresholds.approx[count];
    if (t > w + slack) break;
    // Too close to decide in double (threshold double may be off by an ulp too): decide exactly.
    int sign;  // sign of w - t
    if (exact) {
      sign = (w > t) - (w < t);
    } else {
      escalated = true;
      sign = exact_compare(x, a, direction, thresholds.exact[count]);
    }
    if (sign > 0 || (sign == 0 && !strict)) {
      ++count;
    } else {
      break;
    }
  }
  return count;
}

// Whether x / a (a > 0) is an fp32 value, so that the kernel's division is exact: the fp32
// quotient times a reproduces x exactly (the product of two fp32 values is exact in double).
bool quotient_is_f32(float x, float a) {
  const float quotient = x / a;
  return static_cast<double>(quotient) * static_cast<double>(a) == static_cast<double>(x);
}

// Thresholds p + direction * e(p) with e(p) = max(2^-24 |p|, 2^-150), exact in MPFR.
Thresholds make_thresholds(const std::vector<double>& points, int direction) {
  Thresholds result;
  const ExactArray p = Eigen::Map<const Eigen::ArrayXd>(points.data(), static_cast<Eigen::Index>(points.size())).cast<Exact>();
  const ExactArray relative = p.abs() * Exact(kRelative);
  const ExactArray e = relative.max(Exact(kAbsolute));
  result.exact = p + e * Exact(direction);
  for (Eigen::Index i = 0; i < result.exact.size(); ++i) result.approx.push_back(result.exact[i].convert_to<double>());
  return result;
}

}  // namespace

struct FormatReference::DecisionTables {
  Thresholds midpoints;     // the exact midpoints: nearest rounding
  Thresholds codes_exact;   // the code values themselves: stochastic rounding
  int zero_index = 0;       // sorted index of the code 0
};

FormatReference::FormatReference(QuantFormat format) {
  const CodeTable& table = code_table(format);  // only the code values are taken from the format
  bits_ = table.bits;
  const int codes = 1 << bits_;
  for (int code = 0; code < codes; ++code) code_values_.push_back(table.code_values[code]);
  sorted_values_ = code_values_;
  std::sort(sorted_values_.begin(), sorted_values_.end());
  sorted_values_.erase(std::unique(sorted_values_.begin(), sorted_values_.end()), sorted_values_.end());
  for (std::size_t i = 0; i + 1 < sorted_values_.size(); ++i) {
    midpoints_.push_back((sorted_values_[i] + sorted_values_[i + 1]) / 2.0);  // exact (checked by the kernels' table)
  }
  for (double value : code_values_) {
    code_to_sorted_.push_back(static_cast<int>(std::lower_bound(sorted_values_.begin(), sorted_values_.end(), value) -
                                               sorted_values_.begin()));
  }
  // Decision thresholds: nearest rounding decides at the exact midpoints; stochastic rounding
  // brackets by the code values themselves (exact in fp32).
  auto tables = std::make_shared<DecisionTables>();
  tables->midpoints = make_thresholds(midpoints_, 0);
  tables->codes_exact = make_thresholds(sorted_values_, 0);
  tables->zero_index = static_cast<int>(std::lower_bound(sorted_values_.begin(), sorted_values_.end(), 0.0) - sorted_values_.begin());
  tables_ = std::move(tables);
}

QuantReference reference_quantize(std::span<const float> values, const FormatReference& format,
                                  std::int64_t blocksize, bool stochastic) {
  const auto n = static_cast<std::int64_t>(values.size());
  const std::int64_t blocks = (n + blocksize - 1) / blocksize;
  QuantReference result;
  result.absmax.resize(blocks);
  result.nonfinite.resize(blocks);
  result.admissible.resize(n);
  result.normalized.resize(n);

  const FormatReference::DecisionTables& tables = format.decision_tables();
  const Thresholds &midpoints = tables.midpoints, &codes_exact = tables.codes_exact;
  const int zero_index = tables.zero_index;
  const int last = format.sorted_count() - 1;

  for (std::int64_t block = 0; block < blocks; ++block) {
    const std::int64_t begin = block * blocksize, end = std::min(n, begin + blocksize);
    const Eigen::Map<const Eigen::ArrayXf> x(values.data() + begin, end - begin);
    const bool nonfinite = !x.isFinite().all();
    const float absmax = nonfinite ? std::numeric_limits<float>::quiet_NaN() : x.abs().maxCoeff();  // exact
    result.absmax[block] = absmax;
    result.nonfinite[block] = nonfinite ? 1 : 0;
    if (nonfinite) continue;
    for (std::int64_t i = begin; i < end; ++i) {
      const float xi = values[i];
      AdmissibleRange range;
      if (absmax == 0.0f) {
        range = {static_cast<std::uint8_t>(zero_index), static_cast<std::uint8_t>(zero_index)};
        result.normalized[i] = 0.0;
      } else {
        bool escalated = false;
        result.normalized[i] = static_cast<double>(xi) / static_cast<double>(absmax);
        // The window [v - e(v), v + e(v)] is the single point v when the division is exact.
        const int widen = quotient_is_f32(xi, absmax) ? 0 : 1;
        int lowest, highest;
        if (stochastic) {
          // Lowest: the largest code <= v - e(v); highest: the smallest code >= v + e(v).
          lowest = std::max(0, count_below(codes_exact, xi, absmax, -widen, false, escalated) - 1);
          highest = std::min(last, count_below(codes_exact, xi, absmax, +widen, true, escalated));
        } else {
          // j admissible iff  M_{j-1} < v + e(v)  and  v - e(v) <= M_j.
          highest = count_below(midpoints, xi, absmax, +widen, true, escalated);
          lowest = count_below(midpoints, xi, absmax, -widen, true, escalated);
        }
        range = {static_cast<std::uint8_t>(std::min(lowest, last)), static_cast<std::uint8_t>(std::min(highest, last))};
        if (escalated) ++result.escalations;
      }
      result.admissible[i] = range;
    }
  }
  return result;
}

AdmissibleRange admissible_for_interval(const FormatReference& format, double low, double high) {
  int lowest = 0, highest = 0;
  const int midpoints = format.sorted_count() - 1;
  for (int i = 0; i < midpoints; ++i) {
    const double m = format.midpoint(i);  // exact
    if (m < low) lowest = i + 1;   // every v^ in the interval lies above this midpoint
    if (m < high) highest = i + 1;  // some v^ in the interval may lie above it
  }
  return {static_cast<std::uint8_t>(lowest), static_cast<std::uint8_t>(std::max(lowest, highest))};
}

std::vector<std::uint32_t> reference_dequantize(std::span<const std::uint8_t> codes, std::span<const float> absmax,
                                                const FormatReference& format, std::int64_t blocksize,
                                                DType dtype, DequantizeRounding rounding) {
  // code value * absmax: the product of two fp32 values is exact in binary64, so the only
  // rounding is the correct rounding to the output dtype (or, declared, to fp32 and then to it).
  std::vector<std::uint32_t> bits(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const double exact = format.code_value(codes[i]) * static_cast<double>(absmax[i / blocksize]);
    if (rounding == DequantizeRounding::via_f32_product && dtype != DType::f32) {
      const std::uint32_t f32_bits = correctly_rounded_bits(exact, DType::f32);
      float product;
      std::memcpy(&product, &f32_bits, sizeof product);
      bits[i] = correctly_rounded_bits(static_cast<double>(product), dtype);
    } else {
      bits[i] = correctly_rounded_bits(exact, dtype);
    }
  }
  return bits;
}

}  // namespace bitparity::reference
