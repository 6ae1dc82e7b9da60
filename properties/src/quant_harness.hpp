#pragma once
// Shared steps of the quantisation properties: run an implementation on host tensors, compare
// outputs bitwise, and check outputs against the reference.
#include <cstdint>
#include <string>
#include <vector>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/property.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/reference/quant_reference.hpp"

namespace bitparity::properties {

struct QuantOutput {
  std::vector<std::uint8_t> codes;  // raw bytes (4-bit: two codes per byte)
  std::vector<float> absmax;
  std::vector<std::uint8_t> flags;
  std::vector<std::int64_t> reported;
};

QuantOutput run_quantize(fixtures::Implementation& iut, const TensorView& input, const FormatEntry& format,
                         std::int64_t blocksize, const StochasticRounding& rounding, const LaunchConfig& launch);

// Dequantise into a tensor of `layout` whose storage starts as `fill_byte` everywhere; returns it.
fixtures::HostTensor run_dequantize(fixtures::Implementation& iut, const QuantOutput& quantized,
                                    const FormatEntry& format, std::int64_t blocksize, DType dtype,
                                    const Layout& layout, const LaunchConfig& launch);

std::uint8_t code_at(const std::vector<std::uint8_t>& codes, std::int64_t i, int bits);

// Bitwise equality of two quantisations; on a difference, a violation naming the first one.
void expect_same_quantization(PropertyStats& stats, const QuantOutput& expected, const QuantOutput& actual,
                              const std::string& what, int bits, std::int64_t numel);
void expect_same_bits(PropertyStats& stats, const std::vector<std::uint32_t>& expected,
                      const std::vector<std::uint32_t>& actual, DType dtype, const std::string& what);
// Storage elements outside the view still hold the fill pattern: nothing was written there.
void expect_untouched_outside_view(PropertyStats& stats, const fixtures::HostTensor& tensor, std::uint8_t fill_byte,
                                   const std::string& what);

const reference::FormatReference& format_reference(QuantFormat format);

// How the implementation's dequantize must round: once, or as the convention it declares says.
reference::DequantizeRounding declared_dequantize_rounding(const fixtures::Implementation& iut);
// The check's name in a violation: "dequantize vs correctly rounded code*absmax", or, declared,
// "dequantize vs code*absmax rounded as declared (to fp32, then to bf16)".
std::string dequantize_check_name(reference::DequantizeRounding rounding, DType out_dtype);

// The float dtypes both implementations of the target read or write in `family` (an external
// library may take only some).
std::vector<DType> output_dtypes(const PropertyTarget& t, fixtures::OperationFamily family);

// P7/P9 core: absmax exact, flags and report as the reference says, codes admissible, non-finite
// blocks hold the zero code; observes the error/bound ratio of every code.
void check_against_reference(PropertyStats& stats, const FormatEntry& format, std::int64_t blocksize,
                             const std::vector<float>& values, const QuantOutput& out, bool stochastic);

}  // namespace bitparity::properties
