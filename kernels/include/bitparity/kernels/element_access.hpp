#pragma once
// Reading and writing one element of a float dtype, identical on host and device.
#include <cstdint>
#include <type_traits>

#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/dtype.hpp"

namespace bitparity {

// One dtype's load, fixed at compile time: the CPU launchers pick the dtype once per call, so the
// element loop has no switch; load_as_float is the same load chosen at run time.
template <DType D>
BP_HD float load_as(const void* base, std::int64_t at) {
  if constexpr (D == DType::f16) {
    return f16_to_float(static_cast<const std::uint16_t*>(base)[at]);
  } else if constexpr (D == DType::bf16) {
    return bf16_to_float(static_cast<const std::uint16_t*>(base)[at]);
  } else {
    return static_cast<const float*>(base)[at];
  }
}

BP_HD float load_as_float(const void* base, DType dtype, std::int64_t at) {
  switch (dtype) {
    case DType::f16: return load_as<DType::f16>(base, at);
    case DType::bf16: return load_as<DType::bf16>(base, at);
    default: return load_as<DType::f32>(base, at);
  }
}

// Store a float, rounding once to the destination dtype (NaN payload kept as in convert.hpp).
BP_HD void store_float(void* base, DType dtype, std::int64_t at, float value) {
  switch (dtype) {
    case DType::f16: static_cast<std::uint16_t*>(base)[at] = float_to_f16(value); break;
    case DType::bf16: static_cast<std::uint16_t*>(base)[at] = float_to_bf16(value); break;
    default: static_cast<float*>(base)[at] = value; break;
  }
}

// Store a result an optimizer computed, rounding once to the destination dtype. A NaN is written
// as the dtype's canonical quiet NaN: x86 and CUDA produce different NaN bits (0xFFC00000 and
// 0x7FFFFFFF) and propagate payloads differently, so only a canonical NaN keeps devices bitwise equal.
BP_HD void store_computed_float(void* base, DType dtype, std::int64_t at, float value) {
  if (value != value) {
    switch (dtype) {
      case DType::f16: static_cast<std::uint16_t*>(base)[at] = kCanonicalNanF16; return;
      case DType::bf16: static_cast<std::uint16_t*>(base)[at] = kCanonicalNanBF16; return;
      default: static_cast<float*>(base)[at] = float_from_bits(kCanonicalNanF32); return;
    }
  }
  store_float(base, dtype, at, value);
}

// store_computed_float with the dtype fixed at compile time (the CPU launchers' contiguous loops).
template <DType D>
BP_HD void store_computed_as(void* base, std::int64_t at, float value) {
  if constexpr (D == DType::f16) {
    static_cast<std::uint16_t*>(base)[at] =
        value != value ? kCanonicalNanF16 : round_float_to_narrow<5, 10>(value);
  } else if constexpr (D == DType::bf16) {
    static_cast<std::uint16_t*>(base)[at] =
        value != value ? kCanonicalNanBF16 : round_float_to_narrow<8, 7>(value);
  } else {
    static_cast<float*>(base)[at] = value != value ? float_from_bits(kCanonicalNanF32) : value;
  }
}

// A contiguous run of f16 widened to fp32 (load_as<f16>) and narrowed back (store_computed_as<f16>):
// the body's element loops. A launcher may pass another (the CPU's conversion instructions,
// HalfRunsF16C): it must give the same bits, except that a signalling NaN may widen to a quiet one.
// No result shows that difference: every NaN a kernel stores is canonical, and a block scan counts
// any NaN as non-finite.
struct HalfRunsByElement {
  BP_HD void widen(const std::uint16_t* __restrict in, float* __restrict out, std::int64_t count) const {
    for (std::int64_t i = 0; i < count; ++i) out[i] = f16_to_float(in[i]);
  }
  BP_HD void narrow(const float* __restrict in, std::uint16_t* __restrict out, std::int64_t count) const {
    for (std::int64_t i = 0; i < count; ++i) store_computed_as<DType::f16>(out, i, in[i]);
  }
};

// A contiguous run of dtype D from `base + at` as fp32, into `out` (f16 through `halves`).
template <DType D, class HalfRuns>
BP_HD void widen_run(const void* base, std::int64_t at, float* __restrict out, std::int64_t count,
                     const HalfRuns& halves) {
  if constexpr (D == DType::f16) {
    halves.widen(static_cast<const std::uint16_t*>(base) + at, out, count);
  } else {
    for (std::int64_t i = 0; i < count; ++i) out[i] = load_as<D>(base, at + i);
  }
}

// fp32 values stored as dtype D at `base + at` (store_computed_as; f16 through `halves`).
template <DType D, class HalfRuns>
BP_HD void narrow_run(const float* __restrict in, void* base, std::int64_t at, std::int64_t count,
                      const HalfRuns& halves) {
  if constexpr (D == DType::f16) {
    halves.narrow(in, static_cast<std::uint16_t*>(base) + at, count);
  } else {
    for (std::int64_t i = 0; i < count; ++i) store_computed_as<D>(base, at + i, in[i]);
  }
}

// An fp32 state an optimizer computed: a NaN becomes the canonical quiet NaN (as above).
BP_HD float canonical_state(float value) { return value != value ? float_from_bits(kCanonicalNanF32) : value; }

// Store an exact double, rounding once to the destination dtype D. A NaN is written as the
// dtype's canonical quiet NaN, so that its bits cannot depend on the device's NaN propagation.
template <DType D>
BP_HD void store_rounded_double_as(void* base, std::int64_t at, double exact) {
  if constexpr (D == DType::f16) {
    const bool nan = exact != exact;
    static_cast<std::uint16_t*>(base)[at] = nan ? kCanonicalNanF16 : round_double_to_narrow_by_odd<5, 10>(exact);
  } else if constexpr (D == DType::bf16) {
    const bool nan = exact != exact;
    static_cast<std::uint16_t*>(base)[at] = nan ? kCanonicalNanBF16 : round_double_to_narrow_by_odd<8, 7>(exact);
  } else {
    // Rounded unconditionally, then the NaN replaced: the same bits, and a select a vectorizer can
    // use (a conversion under a branch cannot be speculated while it may raise a flag).
    const float rounded = static_cast<float>(exact);
    static_cast<float*>(base)[at] = rounded != rounded ? float_from_bits(kCanonicalNanF32) : rounded;
  }
}

BP_HD void store_rounded_double(void* base, DType dtype, std::int64_t at, double exact) {
  switch (dtype) {
    case DType::f16: store_rounded_double_as<DType::f16>(base, at, exact); break;
    case DType::bf16: store_rounded_double_as<DType::bf16>(base, at, exact); break;
    default: store_rounded_double_as<DType::f32>(base, at, exact); break;
  }
}

// Calls f(std::integral_constant<DType, dtype>{}) for a float dtype (f32 for any other): a launcher
// dispatches once per call to the typed loads and stores above.
template <class F>
void with_float_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f16: f(std::integral_constant<DType, DType::f16>{}); break;
    case DType::bf16: f(std::integral_constant<DType, DType::bf16>{}); break;
    default: f(std::integral_constant<DType, DType::f32>{}); break;
  }
}

}  // namespace bitparity
