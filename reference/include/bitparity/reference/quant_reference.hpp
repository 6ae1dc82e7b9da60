#pragma once
// The exact reference for blockwise quantisation: exact absmax, the admissible codes of every
// element, and the correctly rounded dequantised values. See ERROR_MODEL.md for the bounds.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity::reference {

// Admissible codes are the code values with sorted index in [lowest, highest].
struct AdmissibleRange {
  std::uint8_t lowest = 0;
  std::uint8_t highest = 0;
};

struct QuantReference {
  std::vector<float> absmax;             // exact block maxima of |x| (NaN for non-finite blocks)
  std::vector<std::uint8_t> nonfinite;   // 1 where the block holds NaN or infinity
  std::vector<AdmissibleRange> admissible;  // per element (unused for non-finite blocks)
  std::vector<double> normalized;        // x / absmax rounded to double, for reporting
  std::int64_t escalations = 0;          // elements decided in MPFR because double was too close
};

// The reference's own view of a format: distinct code values in ascending order, the exact
// midpoints between neighbours, and the sorted index of every code.
class FormatReference {
 public:
  explicit FormatReference(QuantFormat format);
  int sorted_count() const { return static_cast<int>(sorted_values_.size()); }
  double sorted_value(int index) const { return sorted_values_[index]; }
  int sorted_index_of_code(std::uint8_t code) const { return code_to_sorted_[code]; }
  double code_value(std::uint8_t code) const { return code_values_[code]; }
  double midpoint(int index) const { return midpoints_[index]; }  // exact, between index and index+1
  int bits() const { return bits_; }
  // The decision thresholds of the format (midpoints and code values, widened by their fp32 error,
  // exact in MPFR and nearest in double): built once with the format, not per call.
  struct DecisionTables;
  const DecisionTables& decision_tables() const { return *tables_; }

 private:
  std::shared_ptr<const DecisionTables> tables_;
  int bits_;
  std::vector<double> code_values_;
  std::vector<double> sorted_values_;
  std::vector<double> midpoints_;
  std::vector<int> code_to_sorted_;
};

// `values` holds the input in logical order, already exactly representable in the input dtype.
// `stochastic` selects the admissible sets of stochastic rounding (the codes bracketing v).
QuantReference reference_quantize(std::span<const float> values, const FormatReference& format,
                                  std::int64_t blocksize, bool stochastic);

// The codes a nearest-rounding kernel may choose when its fp32 normalized value lies anywhere in
// [low, high]: those whose decision region (M_{j-1}, M_j] of exact midpoints meets it.
AdmissibleRange admissible_for_interval(const FormatReference& format, double low, double high);

// How a dequantize rounds code_value(code) * absmax: once to the output dtype (bitparity's contract),
// or, where a library declares that convention, to fp32 first and that fp32 value to the output
// dtype (torch's and bitsandbytes' order; ERROR_MODEL.md).
enum class DequantizeRounding { once, via_f32_product };

// The bits of code_value(code) * absmax in `dtype` rounded as `rounding` says, for every element.
std::vector<std::uint32_t> reference_dequantize(std::span<const std::uint8_t> codes, std::span<const float> absmax,
                                                const FormatReference& format, std::int64_t blocksize,
                                                DType dtype, DequantizeRounding rounding = DequantizeRounding::once);

}  // namespace bitparity::reference
