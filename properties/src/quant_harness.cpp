#include "quant_harness.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/properties/show.hpp"

namespace bitparity::properties {

QuantOutput run_quantize(fixtures::Implementation& iut, const TensorView& input, const FormatEntry& format,
                         std::int64_t blocksize, const StochasticRounding& rounding, const LaunchConfig& launch) {
  const std::int64_t n = input.numel();
  const std::int64_t blocks = block_count(n, blocksize);
  // Outputs start as a sentinel so that an element the implementation never writes is visible.
  fixtures::HostTensor codes = fixtures::HostTensor::buffer(format.bits == 4 ? DType::packed4 : DType::u8, n, 0xA5);
  fixtures::HostTensor absmax = fixtures::HostTensor::buffer(DType::f32, blocks, 0xA5);
  fixtures::HostTensor flags = fixtures::HostTensor::buffer(DType::u8, blocks, 0xA5);
  const QuantizeReport report =
      iut.quantize(input, format.format, blocksize, {codes.view(), absmax.view(), flags.view()}, rounding, launch);
  QuantOutput out;
  out.codes = codes.bytes();
  out.absmax.resize(blocks);
  if (blocks > 0) std::memcpy(out.absmax.data(), absmax.bytes().data(), blocks * sizeof(float));
  out.flags = flags.bytes();
  out.reported = report.nonfinite_blocks;
  return out;
}

fixtures::HostTensor run_dequantize(fixtures::Implementation& iut, const QuantOutput& quantized,
                                    const FormatEntry& format, std::int64_t blocksize, DType dtype,
                                    const Layout& layout, const LaunchConfig& launch) {
  fixtures::HostTensor out = make_tensor(dtype, layout, 0x5A);
  const std::int64_t n = out.view().numel();
  fixtures::HostTensor codes = fixtures::HostTensor::buffer(format.bits == 4 ? DType::packed4 : DType::u8, n);
  codes.bytes() = quantized.codes;
  fixtures::HostTensor absmax = fixtures::HostTensor::buffer(DType::f32, static_cast<std::int64_t>(quantized.absmax.size()));
  if (!quantized.absmax.empty()) std::memcpy(absmax.bytes().data(), quantized.absmax.data(), quantized.absmax.size() * 4);
  iut.dequantize(codes.view(), absmax.view(), format.format, blocksize, out.view(), launch);
  return out;
}

std::vector<DType> output_dtypes(const PropertyTarget& t, fixtures::OperationFamily family) {
  std::vector<DType> dtypes;
  for (const DType dtype : float_dtypes()) {
    bool taken = true;
    for (const fixtures::Implementation* iut : {t.iut, t.baseline}) {
      taken = taken && (iut == nullptr || iut->declines(family, t.format->format, dtype).empty());
    }
    if (taken) dtypes.push_back(dtype);
  }
  return dtypes;
}

std::uint8_t code_at(const std::vector<std::uint8_t>& codes, std::int64_t i, int bits) {
  if (bits == 4) return (i % 2 == 0) ? static_cast<std::uint8_t>(codes[i / 2] >> 4) : static_cast<std::uint8_t>(codes[i / 2] & 0x0F);
  return codes[i];
}

void expect_same_quantization(PropertyStats& stats, const QuantOutput& expected, const QuantOutput& actual,
                              const std::string& what, int bits, std::int64_t numel) {
  std::int64_t differing = 0;
  std::ostringstream first;
  for (std::int64_t i = 0; i < numel; ++i) {
    const int a = code_at(expected.codes, i, bits), b = code_at(actual.codes, i, bits);
    if (a != b && differing++ == 0) first << "code of element " << i << ": expected " << a << ", got " << b;
  }
  for (std::size_t b = 0; b < expected.absmax.size(); ++b) {
    if (float_bits(expected.absmax[b]) != float_bits(actual.absmax[b]) && differing++ == 0) {
      first << "absmax of block " << b << ": expected " << show_float(expected.absmax[b]) << ", got "
            << show_float(actual.absmax[b]);
    }
    if (expected.flags[b] != actual.flags[b] && differing++ == 0) first << "non-finite flag of block " << b;
  }
  if (expected.reported != actual.reported && differing++ == 0) first << "the reported non-finite blocks differ";
  if (differing > 0) report_violation(stats, differing, what + ": " + std::to_string(differing) + " differences; first: " + first.str());
}

void expect_same_bits(PropertyStats& stats, const std::vector<std::uint32_t>& expected,
                      const std::vector<std::uint32_t>& actual, DType dtype, const std::string& what) {
  std::int64_t differing = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i] && differing++ == 0) {
      first << "element " << i << ": expected " << show_bits(expected[i], dtype) << ", got " << show_bits(actual[i], dtype);
    }
  }
  if (differing > 0) report_violation(stats, differing, what + ": " + std::to_string(differing) + " elements differ; first: " + first.str());
}

void expect_untouched_outside_view(PropertyStats& stats, const fixtures::HostTensor& tensor, std::uint8_t fill_byte,
                                   const std::string& what) {
  const TensorView view = tensor.view();
  std::vector<bool> inside(static_cast<std::size_t>(view.storage_elements), false);
  for (std::int64_t i = 0; i < view.numel(); ++i) inside[view.index.storage(i)] = true;
  const std::int64_t width = dtype_storage_bytes(view.dtype, 1);
  for (std::int64_t e = 0; e < view.storage_elements; ++e) {
    if (inside[e]) continue;
    for (std::int64_t byte = 0; byte < width; ++byte) {
      if (tensor.bytes()[e * width + byte] != fill_byte) {
        report_violation(stats, 1, what + ": storage element " + std::to_string(e) +
                                       " lies outside the output view but was written (" + view.describe() + ")");
      }
    }
  }
}

// The error a correct kernel may make on the normalised value v: half the gap between the codes
// that bracket v (the whole gap under stochastic rounding), or the distance to the end code when v
// lies beyond the map, plus the division's rounding window of ERROR_MODEL.md (e(v)).
double quantization_error_bound(const reference::FormatReference& format, double v, bool stochastic) {
  const int last = format.sorted_count() - 1;
  // The first code value >= v (the last one if none): a binary search, once per element.
  int low = 0, high = last;
  while (low < high) {
    const int middle = (low + high) / 2;
    if (format.sorted_value(middle) < v) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  const int above = low;
  const double window = 0x1p-24 * std::fabs(v) + 0x1p-150;
  if (format.sorted_value(above) < v || above == 0) return std::fabs(format.sorted_value(above) - v) + window;
  const double gap = format.sorted_value(above) - format.sorted_value(above - 1);
  return (stochastic ? gap : gap / 2) + window;
}

reference::DequantizeRounding declared_dequantize_rounding(const fixtures::Implementation& iut) {
  return iut.follows(fixtures::Convention::dequantize_rounds_f32_product) ? reference::DequantizeRounding::via_f32_product
                                                                           : reference::DequantizeRounding::once;
}

std::string dequantize_check_name(reference::DequantizeRounding rounding, DType out_dtype) {
  if (rounding == reference::DequantizeRounding::via_f32_product && out_dtype != DType::f32) {
    return std::string("dequantize vs code*absmax rounded as declared (to fp32, then to ") + dtype_name(out_dtype) + ")";
  }
  return "dequantize vs correctly rounded code*absmax";
}

const reference::FormatReference& format_reference(QuantFormat format) {
  static std::mutex mutex;
  static std::map<QuantFormat, reference::FormatReference> cache;
  std::lock_guard lock(mutex);
  auto found = cache.find(format);
  if (found == cache.end()) found = cache.emplace(format, reference::FormatReference(format)).first;
  return found->second;
}

void check_against_reference(PropertyStats& stats, const FormatEntry& format, std::int64_t blocksize,
                             const std::vector<float>& values, const QuantOutput& out, bool stochastic) {
  const ReferenceTimer timer(stats);
  const reference::FormatReference& ref_format = format_reference(format.format);
  const reference::QuantReference ref = reference_quantize(values, ref_format, blocksize, stochastic);
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  std::vector<std::int64_t> flagged;
  std::int64_t bad = 0;
  std::ostringstream first;
  for (std::size_t b = 0; b < ref.absmax.size(); ++b) {
    if (ref.nonfinite[b]) flagged.push_back(static_cast<std::int64_t>(b));
    if (out.flags[b] != ref.nonfinite[b] && bad++ == 0) {
      first << "block " << b << " non-finite flag " << int(out.flags[b]) << ", reference " << int(ref.nonfinite[b]);
    }
    const bool absmax_ok = ref.nonfinite[b] ? std::isnan(out.absmax[b]) : float_bits(out.absmax[b]) == float_bits(ref.absmax[b]);
    if (!absmax_ok && bad++ == 0) {
      first << "block " << b << " absmax " << show_float(out.absmax[b]) << ", exact " << show_float(ref.absmax[b]);
    }
  }
  if (out.reported != flagged && bad++ == 0) {
    first << "reported " << out.reported.size() << " non-finite blocks, the input has " << flagged.size();
  }
  const CodeTable& table = code_table(format.format);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t block = i / blocksize;
    const std::uint8_t code = code_at(out.codes, i, format.bits);
    if (ref.nonfinite[block]) {
      if (code != table.zero_code && bad++ == 0) first << "element " << i << " in a non-finite block has code " << int(code);
      continue;
    }
    const int index = ref_format.sorted_index_of_code(code);
    const auto [lowest, highest] = ref.admissible[i];
    const double v = ref.normalized[i];
    const double error = std::fabs(ref_format.code_value(code) - v);
    const double bound = quantization_error_bound(ref_format, v, stochastic);
    stats.observe_ratio(bound > 0 ? error / bound : (error > 0 ? INFINITY : 0.0));
    if ((index < lowest || index > highest) && bad++ == 0) {
      first << "element " << i << " x=" << show_float(values[i]) << " absmax=" << show_float(ref.absmax[block])
            << " v=" << show_double(v) << ": code " << int(code) << " (value " << show_double(ref_format.code_value(code))
            << ") is not admissible; admissible values " << show_double(ref_format.sorted_value(lowest)) << " .. "
            << show_double(ref_format.sorted_value(highest));
    }
  }
  if (bad > 0) report_violation(stats, bad, std::to_string(bad) + " violations of the reference; first: " + first.str());
}

}  // namespace bitparity::properties
