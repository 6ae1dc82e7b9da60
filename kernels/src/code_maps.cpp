// The built-in code maps, each described once: its values and where they come from. The dynamic
// and linear maps follow bitsandbytes' construction step by step in fp32 (torch.linspace in fp32,
// midpoints of boundaries in fp32, scaling by the decade in fp32), so that the values are the fp32
// values that construction yields on each kind of torch CPU kernel.
#include <algorithm>
#include <array>
#include <cmath>

#include "bitparity/kernels/code_map.hpp"

namespace bitparity {

namespace {

constexpr std::array<float, 16> kNf4Values = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f,
    -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f, 0.16093020141124725f,
    0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
    0.7229568362236023f, 1.0f};

// bitsandbytes' FP4 (sign bit 8; magnitudes by the low three bits).
constexpr std::array<float, 8> kFp4Magnitudes = {0.0f, 5.208333333e-03f, 0.66666667f, 1.0f,
                                                 0.33333333f, 0.5f, 0.16666667f, 0.25f};

// Code 8 is the sign bit on a zero magnitude: -0.0 when the sign is applied as a sign, +0.0 in
// the tables most bitsandbytes paths store.
std::vector<float> fp4_values(bool negative_zero) {
  std::vector<float> values(16);
  for (int code = 0; code < 16; ++code) values[code] = (code & 8 ? -1.0f : 1.0f) * kFp4Magnitudes[code & 7];
  if (!negative_zero) values[8] = 0.0f;
  return values;
}

constexpr const char* kUnfused = "; torch.linspace unfused (torch's default CPU kernel, ATEN_CPU_CAPABILITY=default)";
constexpr const char* kFused =
    "; torch.linspace fused, start + step*i in one rounding (torch's AVX2/AVX512 CPU kernels): the map "
    "bitsandbytes builds and stores on x86";

}  // namespace

std::vector<float> linspace_f32(float start, float end, int steps, bool fused) {
  std::vector<float> out(steps);
  const float step = (end - start) / static_cast<float>(steps - 1);
  const int halfway = steps / 2;
  // Forward from start for the first half, backward from end for the rest.
  for (int i = 0; i < steps; ++i) {
    const auto from_start = static_cast<float>(i), from_end = static_cast<float>(steps - i - 1);
    if (fused) {
      out[i] = i < halfway ? std::fmaf(step, from_start, start) : std::fmaf(-step, from_end, end);
    } else {
      out[i] = i < halfway ? start + step * from_start : end - step * from_end;
    }
  }
  return out;
}

std::vector<float> dynamic_map_values(bool is_signed, bool fused_linspace) {
  constexpr int kMaxExponentBits = 7, kNonSignBits = 7;
  std::vector<float> data;
  for (int i = 0; i < kMaxExponentBits; ++i) {
    const int fraction_items = is_signed ? (1 << (i + kNonSignBits - kMaxExponentBits)) + 1
                                         : (1 << (i + kNonSignBits - kMaxExponentBits + 1)) + 1;
    const std::vector<float> boundaries = linspace_f32(0.1f, 1.0f, fraction_items, fused_linspace);
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

std::vector<float> linear_map_values(bool fused_linspace) {
  const std::vector<float> values = linspace_f32(-1.0f, 1.0f, 255, fused_linspace);
  std::vector<float> data(values.begin(), values.begin() + 127);
  data.push_back(0.0f);  // the gap of one code is filled with zero in the middle
  data.insert(data.end(), values.begin() + 127, values.end());
  return data;
}

bool CodeMap::has_positive_code() const {
  return std::any_of(values.begin(), values.end(), [](float v) { return v > 0.0f; });
}

bool CodeMap::has_negative_code() const {
  return std::any_of(values.begin(), values.end(), [](float v) { return v < 0.0f; });
}

const std::vector<CodeMap>& builtin_code_maps() {
  static const std::vector<CodeMap> maps = {
      {"dynamic8-signed", 8, dynamic_map_values(true, false),
       std::string("bitsandbytes create_dynamic_map(signed=True)") + kUnfused},
      {"dynamic8-unsigned", 8, dynamic_map_values(false, false),
       std::string("bitsandbytes create_dynamic_map(signed=False)") + kUnfused},
      {"linear8", 8, linear_map_values(false), std::string("bitsandbytes create_linear_map(signed=True)") + kUnfused},
      {"nf4", 4, {kNf4Values.begin(), kNf4Values.end()}, "4-bit NormalFloat, bitsandbytes' table bit for bit"},
      {"fp4", 4, fp4_values(true),
       "4-bit float (1 sign, 2 exponent, 1 mantissa), bitsandbytes' values; code 8 is -0.0"},
      {"dynamic8-signed-fused", 8, dynamic_map_values(true, true),
       std::string("bitsandbytes create_dynamic_map(signed=True)") + kFused},
      {"dynamic8-unsigned-fused", 8, dynamic_map_values(false, true),
       std::string("bitsandbytes create_dynamic_map(signed=False)") + kFused},
      {"linear8-fused", 8, linear_map_values(true), std::string("bitsandbytes create_linear_map(signed=True)") + kFused},
      {"fp4-positive-zero", 4, fp4_values(false),
       "4-bit float, bitsandbytes' values with code 8 = +0.0, as most bitsandbytes paths store it"},
  };
  return maps;
}

}  // namespace bitparity
