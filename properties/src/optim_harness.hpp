#pragma once
// Shared steps of the optimizer properties: a drawn case (hyperparameters, values, layouts), one
// step of an implementation on copies of it, and bitwise comparison of the results.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/properties/property.hpp"
#include "bitparity/reference/optim_reference.hpp"

namespace bitparity::properties {

// Everything one optimizer step reads, in logical order, and the layouts to lay it out with.
struct OptimCase {
  OptimizerKind kind = OptimizerKind::adam;
  Hyperparameters hyper;
  DType param_dtype = DType::f32, grad_dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::vector<reference::OptimInput> values;  // exactly representable in their dtypes
  Layout param_layout, grad_layout;
  std::vector<Layout> state_layouts;
};

struct OptimResult {
  std::vector<std::uint32_t> param_bits;
  std::vector<std::vector<std::uint32_t>> state_bits;
  std::vector<fixtures::HostTensor> tensors;  // param, grad, states after the step (whole storage)
  bool nonfinite_reported = false;
};

// The value of a stored element's bits in its dtype, widened exactly to fp32.
float value_of_bits(std::uint32_t bits, DType dtype);

// The accuracy properties' domain, refused in a saved case (CaseFileError naming the element): NaN
// or Inf (the non-finite properties' case), a negative state that holds squares, and a centred
// average whose square exceeds its square average (no sequence of gradients leaves either).
void require_step_domain(const OptimCase& c, const char* property);
// The non-finite-gradient properties refuse a non-empty saved case whose gradient holds no NaN or Inf.
void require_nonfinite_gradient(const OptimCase& c, const char* property);

Hyperparameters draw_hyperparameters(OptimizerKind kind, PropertyStats& stats);
// Values that reach the hard regions: tiny second moments (eps dominates), zero and huge
// gradients, cancellation in the moment updates, subnormals; NaN/Inf in the gradient if asked.
std::vector<reference::OptimInput> synthesize_optim_values(OptimizerKind kind, const Hyperparameters& hyper,
                                                           std::uint64_t seed, std::int64_t n, DType param_dtype,
                                                           DType grad_dtype, bool nonfinite);
// max_numel grows with the target's size_scale. A min_numel above 1 draws the count log-uniformly
// in [min_numel, max_numel] (unscaled): long tensors, where a norm's summation order shows.
// launch_sized: instead a count from which the launch takes every path it has (draw_launch_sized_numel).
OptimCase draw_optim_case(const PropertyTarget& t, PropertyStats& stats, bool strided, bool nonfinite,
                          std::int64_t max_numel, std::int64_t min_numel = 1, bool launch_sized = false);
// The case as data (case_tape.hpp): hyperparameters, dtypes, shape, every value and layout.
// Puts NaN (with payloads, both signs) and infinities into about one parameter or state in eight,
// with finite gradients, so that a step computes NaNs (inf/inf, inf - inf) and carries input NaNs:
// the comparisons of whole results then see how each path stores them.
void plant_nonfinite_inputs(OptimCase& c, PropertyStats& stats);
nlohmann::json encode_input(const OptimCase& c);
void decode_input(const nlohmann::json& j, OptimCase& c);  // an fp32 case: one column per state
// state_columns_given false: an 8-bit case's base, whose states are codes and absmax ('states' is []).
void decode_optim_case(const nlohmann::json& j, OptimCase& c, bool state_columns_given);
// Lay the case out (storage outside the views filled with `fill_byte`) and run one step.
OptimResult run_optim(fixtures::Implementation& iut, const OptimCase& c, const LaunchConfig& launch,
                      bool contiguous = false, std::uint8_t fill_byte = 0x3C);
void expect_same_step(PropertyStats& stats, const OptimCase& c, const OptimResult& expected, const OptimResult& actual,
                      const std::string& what);

}  // namespace bitparity::properties
