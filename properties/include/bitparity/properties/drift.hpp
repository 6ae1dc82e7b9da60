#pragma once
// Multi-step drift: N steps of an implementation against the exact trajectory that the reference
// carries in MPFR from the same start and the same gradients, never re-synchronised.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bitparity/fixtures/implementation.hpp"

namespace bitparity::properties {

struct DriftStep {
  std::int64_t step = 0;
  double max_abs_error = 0.0;    // |parameter - exact|
  double max_rel_error = 0.0;    // |parameter - exact| / |exact| (elements with exact != 0)
  double median_abs_error = 0.0; // the median element's |parameter - exact|
  double median_rel_error = 0.0; // the median of the relative errors (elements with exact != 0)
  double max_ulps = 0.0;         // distance to the correctly rounded exact value, in the dtype's ulps
  std::array<std::int64_t, 6> ulp_histogram{};  // 0, 1, 2-3, 4-15, 16-255, >= 256 ulps
  std::int64_t nonfinite = 0;    // elements whose parameter is NaN or infinite
  double max_state_error = 0.0;  // 8-bit: max |dequantized state - exact 32-bit state| / max |exact state|
  std::uint64_t parameter_hash = 0;  // FNV-1a of the parameter's bits: two devices agree bitwise iff equal
};

struct DriftReport {
  std::string implementation, optimizer;
  bool eight_bit = false;
  std::int64_t blocksize = 0;
  std::vector<std::string> state_maps;  // 8-bit: the map of each state, by name
  DType dtype = DType::f32;
  std::int64_t elements = 0;
  std::string hyperparameters;  // every hyperparameter of the run, at step 1
  std::vector<DriftStep> steps;
};

struct DriftOptions {
  std::int64_t elements = 128;
  std::int64_t steps = 200;
  std::uint64_t seed = 1;
  bool eight_bit = false;        // 8-bit blockwise states against the exact 32-bit trajectory
  std::int64_t blocksize = 256;
  StateMaps maps{};              // 8-bit states: the maps instead of the optimizer's own
  // Hyperparameters set by name over the typical values; each applies to the optimizers that read it.
  std::vector<std::pair<std::string, double>> settings;
  std::function<bool(std::int64_t step)> on_step;  // after each step; false stops the run there
};

// The hyperparameters of a drift run: the descriptor's typical values (lr 1e-3 for the adaptive
// ones ...), then each setting the optimizer reads. Throws Error for a value outside its range.
Hyperparameters drift_hyperparameters(OptimizerKind kind, const std::vector<std::pair<std::string, double>>& settings = {});
DriftReport run_drift(fixtures::Implementation& iut, OptimizerKind kind, DType dtype, const DriftOptions& options);

}  // namespace bitparity::properties
