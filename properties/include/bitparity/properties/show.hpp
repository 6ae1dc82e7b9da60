#pragma once
// Counterexamples print every float as hexfloat and bits: decimal with 6 digits hides the bug.
#include <cstdint>
#include <string>

#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/optimizer_list.hpp"
#include "bitparity/kernels/optimizer_types.hpp"

namespace bitparity::properties {

std::string show_float(float value);                       // "0x1.8p+0 [0x3fc00000]"
std::string show_bits(std::uint32_t bits, DType dtype);    // value of the bits in dtype, plus the bits
std::string show_double(double value);                     // "0x1.5555555555555p-2"
// Every hyperparameter the optimizer reads, with the ones every optimizer reads: "adam{step=1 lr=...}".
std::string describe_hyperparameters(OptimizerKind kind, const Hyperparameters& h);

}  // namespace bitparity::properties
