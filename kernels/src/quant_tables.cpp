// The code maps of every format, built once. The dynamic and linear maps follow bitsandbytes'
// construction step by step in fp32 (torch.linspace in fp32, midpoints of boundaries in fp32,
// scaling by the decade in fp32), so that the values are the fp32 values that construction yields.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quant_body.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity {

namespace {

// torch.linspace on the CPU in fp32: forward from start for the first half, backward from end.
std::vector<float> linspace_f32(float start, float end, int steps) {
  std::vector<float> out(steps);
  const float step = (end - start) / static_cast<float>(steps - 1);
  const int halfway = steps / 2;
  for (int i = 0; i < steps; ++i) {
    out[i] = i < halfway ? start + step * static_cast<float>(i) : end - step * static_cast<float>(steps - i - 1);
  }
  return out;
}

constexpr std::array<float, 16> kNf4Values = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f,
    -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f, 0.16093020141124725f,
    0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
    0.7229568362236023f, 1.0f};

// bitsandbytes' FP4 (sign bit 8; magnitudes by the low three bits).
constexpr std::array<float, 8> kFp4Magnitudes = {0.0f, 5.208333333e-03f, 0.66666667f, 1.0f,
                                                 0.33333333f, 0.5f, 0.16666667f, 0.25f};

constexpr QuantFormatInfo kFormats[] = {
    {QuantFormat::dynamic8_signed, "dynamic8-signed", 8, "signed dynamic 8-bit map (create_dynamic_map(signed=True))"},
    {QuantFormat::dynamic8_unsigned, "dynamic8-unsigned", 8,
     "unsigned dynamic 8-bit map (create_dynamic_map(signed=False))"},
    {QuantFormat::linear8, "linear8", 8, "signed linear 8-bit map (create_linear_map(signed=True))"},
    {QuantFormat::nf4, "nf4", 4, "4-bit NormalFloat"},
    {QuantFormat::fp4, "fp4", 4, "4-bit float (1 sign, 2 exponent, 1 mantissa, bitsandbytes values)"},
};

std::vector<float> code_values_of(QuantFormat format) {
  switch (format) {
    case QuantFormat::dynamic8_signed: return dynamic_map_values(true);
    case QuantFormat::dynamic8_unsigned: return dynamic_map_values(false);
    case QuantFormat::linear8: return linear_map_values();
    case QuantFormat::nf4: return {kNf4Values.begin(), kNf4Values.end()};
    case QuantFormat::fp4: {
      std::vector<float> values(16);
      for (int code = 0; code < 16; ++code) values[code] = (code & 8 ? -1.0f : 1.0f) * kFp4Magnitudes[code & 7];
      return values;
    }
  }
  return {};
}

// The count of midpoints below v is monotonic in v, so over a bucket of bit patterns it lies between
// its values at the bucket's two ends (for negative patterns the larger bits are the smaller values).
// A bucket holding NaN patterns (exponent field 255) starts at 0, the count of a NaN; the search
// handles +inf, which shares such a bucket, on its own.
void index_buckets(CodeTable& table, std::string_view name) {
  for (std::uint32_t bucket = 0; bucket < 4096; ++bucket) {
    const bool holds_nan = ((bucket >> 3) & 0xFFu) == 0xFFu;
    if (holds_nan) {
      table.bucket_low[bucket] = 0;
      continue;
    }
    const float first = float_from_bits(bucket << 20), last = float_from_bits((bucket << 20) | 0xFFFFFu);
    const int a = nearest_sorted_index_by_search(table, first), b = nearest_sorted_index_by_search(table, last);
    const int low = std::min(a, b), high = std::max(a, b);
    if (high - low >= kBucketWindow) {
      throw Error(ErrorCode::invalid_argument, "code map " + std::string(name) + ": bucket " + std::to_string(bucket) +
                                                   " spans " + std::to_string(high - low) +
                                                   " midpoints, more than the search window of " +
                                                   std::to_string(kBucketWindow - 1));
    }
    table.bucket_low[bucket] = static_cast<std::uint8_t>(low);
  }
}

CodeTable build_table(QuantFormat format) {
  const std::vector<float> values = code_values_of(format);
  CodeTable table;
  table.bits = quant_format_info(format).bits;
  std::vector<int> order(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) order[i] = static_cast<int>(i);
  // Ascending by value; among equal values (duplicate zeros, -0 and +0) the lowest code is emitted.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return values[a] < values[b]; });
  bool zero_found = false;
  for (std::size_t code = 0; code < values.size(); ++code) {
    table.code_values[code] = values[code];
    if (!zero_found && float_bits(values[code]) == 0u) {
      table.zero_code = static_cast<std::uint8_t>(code);
      zero_found = true;
    }
  }
  for (int code : order) {
    if (table.sorted_count > 0 && values[code] == table.sorted_values[table.sorted_count - 1]) continue;
    table.sorted_values[table.sorted_count] = values[code];
    table.sorted_codes[table.sorted_count] = static_cast<std::uint8_t>(code);
    ++table.sorted_count;
  }
  for (int i = 0; i + 1 < table.sorted_count; ++i) {
    const double a = table.sorted_values[i], b = table.sorted_values[i + 1];
    const double midpoint = (a + b) / 2.0;  // exact: neighbours are within 2^29 of each other
    if ((a + b) - a != b) throw Error(ErrorCode::invalid_argument, "code map midpoint is not exact in double");
    table.midpoints[i] = static_cast<float>(midpoint);
  }
  for (int i = table.sorted_count; i < 256; ++i) table.sorted_values[i] = std::numeric_limits<float>::infinity();
  for (int i = table.sorted_count - 1; i < 256 + kBucketWindow; ++i) table.midpoints[i] = std::numeric_limits<float>::infinity();
  // Counts run up to sorted_count - 1 (v beyond the last code is handled before the search), and
  // the steps first_step, first_step/2, ..., 1 reach 2*first_step - 1.
  table.first_step = 1;
  while (2 * table.first_step < table.sorted_count) table.first_step *= 2;
  if (!zero_found) throw Error(ErrorCode::invalid_argument, "code map has no +0 code");
  index_buckets(table, quant_format_info(format).name);
  return table;
}

}  // namespace

std::vector<float> dynamic_map_values(bool is_signed) {
  constexpr int kMaxExponentBits = 7, kNonSignBits = 7;
  std::vector<float> data;
  for (int i = 0; i < kMaxExponentBits; ++i) {
    const int fraction_items = is_signed ? (1 << (i + kNonSignBits - kMaxExponentBits)) + 1
                                         : (1 << (i + kNonSignBits - kMaxExponentBits + 1)) + 1;
    const std::vector<float> boundaries = linspace_f32(0.1f, 1.0f, fraction_items);
    // Python's 10 ** -(6 - i) is a double, converted to fp32 by the tensor product.
    const float decade = static_cast<float>(std::pow(10.0, -(kMaxExponentBits - 1) + i));
    for (int k = 0; k + 1 < fraction_items; ++k) {
      const float mean = (boundaries[k] + boundaries[k + 1]) / 2.0f;
      data.push_back(decade * mean);
      if (is_signed) data.push_back(-decade * mean);
    }
  }
  data.push_back(0.0f);
  data.push_back(1.0f);
  data.resize(256, 0.0f);
  std::sort(data.begin(), data.end());
  return data;
}

std::vector<float> linear_map_values() {
  const std::vector<float> values = linspace_f32(-1.0f, 1.0f, 255);
  std::vector<float> data(values.begin(), values.begin() + 127);
  data.push_back(0.0f);  // the gap of one code is filled with zero in the middle
  data.insert(data.end(), values.begin() + 127, values.end());
  return data;
}

std::span<const QuantFormatInfo> quant_formats() { return kFormats; }

const QuantFormatInfo& quant_format_info(QuantFormat format) {
  for (const auto& info : kFormats) {
    if (info.format == format) return info;
  }
  throw Error(ErrorCode::invalid_argument, "unknown quantization format");
}

QuantFormat parse_quant_format(std::string_view name) {
  std::string choices;
  for (const auto& info : kFormats) {
    if (info.name == name) return info.format;
    choices += (choices.empty() ? "" : ", ") + std::string(info.name);
  }
  throw Error(ErrorCode::invalid_argument, "unknown format '" + std::string(name) + "'; expected one of " + choices);
}

const CodeTable& code_table(QuantFormat format) {
  static std::once_flag once;
  static std::array<CodeTable, std::size(kFormats)> tables;
  std::call_once(once, [] {
    for (const auto& info : kFormats) tables[static_cast<int>(info.format)] = build_table(info.format);
  });
  return tables[static_cast<int>(format)];
}

std::vector<std::int64_t> supported_block_sizes(QuantFormat format) {
  std::vector<std::int64_t> sizes;
  if (quant_format_info(format).bits == 4) sizes.push_back(32);
  for (std::int64_t size = 64; size <= 4096; size *= 2) sizes.push_back(size);
  return sizes;
}

void validate_block_size(QuantFormat format, std::int64_t blocksize) {
  const auto sizes = supported_block_sizes(format);
  if (std::find(sizes.begin(), sizes.end(), blocksize) != sizes.end()) return;
  std::string choices;
  for (auto size : sizes) choices += (choices.empty() ? "" : ", ") + std::to_string(size);
  throw Error(ErrorCode::invalid_argument, "block size " + std::to_string(blocksize) + " is not supported for " +
                                               std::string(quant_format_info(format).name) + "; use one of " +
                                               choices);
}

}  // namespace bitparity
