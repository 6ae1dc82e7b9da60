#pragma once
// The exact reference of the 32-bit optimizers: from the kernel's own fp32 inputs and the
// hyperparameters (as fp32, the kernel's values), the exact new parameter and states of every
// element with a bound on the kernel's error derived from its operation order (ERROR_MODEL.md).
#include <cstdint>
#include <string>
#include <vector>

#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/optimizer.hpp"

namespace bitparity::reference {

struct OptimInput {
  float p = 0, g = 0;  // parameter and gradient widened exactly to fp32
  float s[3] = {0, 0, 0};
};

struct OptimOutput {
  float p = 0;  // the kernel's stored parameter, widened exactly to fp32
  float s[3] = {0, 0, 0};
};

// Exact new values of one element and bounds on the kernel's error (parameter after its storage
// rounding, then the states), from the double evaluation with its own error added to the bound.
struct ElementBounds {
  double value[4] = {0, 0, 0, 0};
  double bound[4] = {0, 0, 0, 0};  // +inf where no finite bound exists
};

// Verdict on one element: ratio |kernel - exact| / bound for every output, worst first.
struct ElementVerdict {
  bool ok = true;
  bool ill_conditioned = false;  // a divisor or sqrt argument may vanish: no finite bound exists
  bool escalated = false;        // decided in MPFR
  bool undecided = false;        // double could not decide (then MPFR does)
  double worst_ratio = 0.0;
  std::string detail;            // on a violation: output, kernel value, exact value, bound
};

class OptimReference {
 public:
  OptimReference(OptimizerKind kind, const Hyperparameters& hyper, DType param_dtype);
  // Every element of one step (LAMB and LARS couple the elements through their norms).
  std::vector<ElementVerdict> check_all(const std::vector<OptimInput>& inputs, const std::vector<OptimOutput>& kernel) const;
  // Values and bounds of every element (for checks that are not a direct comparison, such as the
  // requantized states of the 8-bit optimizers).
  std::vector<ElementBounds> bounds_all(const std::vector<OptimInput>& inputs) const;
  // One element of an elementwise optimizer.
  ElementVerdict check(const OptimInput& in, const OptimOutput& kernel) const;

 private:
  OptimizerKind kind_;
  Hyperparameters hyper_;
  DType param_dtype_;
};

// Multi-step exact trajectory of a whole tensor with the reference's own state (never re-synced).
class ExactTrajectory {
 public:
  ExactTrajectory(OptimizerKind kind, const std::vector<OptimInput>& start);
  // One exact step with `hyper` (its step field says which) and the given gradients.
  void step(const Hyperparameters& hyper, const std::vector<float>& gradients);
  double parameter(std::size_t i) const;
  double state(std::size_t i, int k) const;
  // The exact parameter correctly rounded to `dtype` (bits), straight from the MPFR value.
  std::uint32_t parameter_bits(std::size_t i, DType dtype) const;
  ~ExactTrajectory();
  ExactTrajectory(ExactTrajectory&&) noexcept;
  ExactTrajectory& operator=(ExactTrajectory&&) noexcept;

 private:
  struct State;
  OptimizerKind kind_;
  State* state_;
};

}  // namespace bitparity::reference
