// The judge of the 32-bit optimizers: every optimizer's reference (optimizers/, in the kernels'
// operation order of kernels/ARITHMETIC.md) on Tracked values, screened in double and decided in
// MPFR, and the exact multi-step trajectories.
#include "bitparity/reference/optim_reference.hpp"

#include <boost/multiprecision/mpfr.hpp>
#include <cfloat>
#include <cstdio>
#include <sstream>

#include "bitparity/reference/rounding.hpp"
#include "bitparity/reference/tracked.hpp"
#include "optim_reference_ops.hpp"

namespace bitparity::reference {

namespace {
const ReferenceOptimizer* const kReferences[] = {
#define BITPARITY_REFERENCE_ENTRY(id, descriptor) &id##_reference,
    BITPARITY_OPTIMIZERS(BITPARITY_REFERENCE_ENTRY)
#undef BITPARITY_REFERENCE_ENTRY
};

}  // namespace

const ReferenceOptimizer& reference_optimizer(OptimizerKind kind) { return *kReferences[static_cast<int>(kind)]; }

namespace {

// The scalars every optimizer shares (as the kernel's host computes them), then its own.
template <class T>
Scalars<T> exact_scalars(OptimizerKind kind, const Hyperparameters& h) {
  using std::sqrt;
  Scalars<T> s;
  const T one(1);
  const double t = static_cast<double>(h.step);
  s.lr = user_value<T>(h.lr);
  s.beta1 = user_value<T>(h.beta1);
  s.beta2 = user_value<T>(h.beta2);
  s.eps = user_value<T>(h.eps);
  s.weight_decay = user_value<T>(norm_based(kind) && h.exclude_from_weight_decay ? 0.0f : h.weight_decay);
  s.momentum = user_value<T>(h.momentum);
  s.one_minus_beta1 = host_scalar<T>(one - T(h.beta1), 0.0);
  s.one_minus_beta2 = host_scalar<T>(one - T(h.beta2), 0.0);
  const T decay = one - T(h.lr) * T(h.weight_decay);
  s.decay = host_scalar<T>(decay, evaluation_error(decay, 2.0));
  s.one_minus_dampening = host_scalar<T>(one - T(h.dampening), 0.0);
  s.unscale = h.grad_scale != 1.0f;
  s.inverse_grad_scale = host_scalar<T>(one / T(h.grad_scale), evaluation_error(one / T(h.grad_scale), 1.0));
  s.maximize = h.maximize;
  s.nesterov = h.nesterov;
  s.centered = h.centered;
  s.first_step = h.step == 1;
  const T b1t = power(T(h.beta1), t), b2t = power(T(h.beta2), t);
  const double c1 = 1.0 + magnitude(b1t) / std::max(magnitude(T(one - b1t)), 1e-300);
  const double c2 = 1.0 + magnitude(b2t) / std::max(magnitude(T(one - b2t)), 1e-300);
  const T bc2_sqrt = sqrt(T(one - b2t));
  s.bias_correction2_sqrt = host_scalar<T>(bc2_sqrt, evaluation_error(bc2_sqrt, c2));
  const ReferenceContext<T> context{h, t, b1t, b2t, c1, c2};
  if constexpr (std::is_same_v<T, double>) {
    reference_optimizer(kind).scalars_double(context, s);
  } else {
    reference_optimizer(kind).scalars_exact(context, s);
  }
  return s;
}

template <class T>
void step_all(OptimizerKind kind, const Hyperparameters& h, const Scalars<T>& s, std::vector<Element<T>>& elements) {
  if constexpr (std::is_same_v<T, double>) {
    reference_optimizer(kind).step_double(h, s, elements);
  } else {
    reference_optimizer(kind).step_exact(h, s, elements);
  }
}

struct StorageRounding {
  double unit, underflow, largest;
};

StorageRounding storage_rounding(DType dtype) {
  switch (dtype) {
    case DType::f16: return {0x1p-11, 0x1p-25, 65504.0};
    case DType::bf16: return {0x1p-8, 0x1p-134, 0x1.fep127};
    default: return {kUnitF32, kUnderflowF32, static_cast<double>(FLT_MAX)};
  }
}

enum class Decision { pass, fail, undecided };

// One output: pass when |kernel - value| <= err - ref, fail when > err + ref.
template <class T>
Decision decide(const Tracked<T>& expected, float kernel, double largest, double& ratio) {
  if (!(expected.err < kInfinity)) {
    // Ill-conditioned (a divisor or a square root's argument may vanish): no finite bound exists, so
    // a finite kernel value is not judged. A non-finite one still is: finite inputs may give inf or
    // NaN only where the exact result is itself undefined or infinite, or rounds past the largest.
    if (std::isfinite(kernel)) return Decision::pass;
    const double exact = magnitude(expected.value);
    if (!std::isfinite(exact)) return Decision::pass;
    const bool may_overflow = exact + expected.ref >= largest && (kernel > 0) == (expected.value > T(0));
    ratio = may_overflow ? 0.0 : kInfinity;
    return std::isinf(kernel) && may_overflow ? Decision::pass : Decision::fail;
  }
  if (std::isinf(kernel)) {
    // Overflow is the correct rounding only when the exact value may reach the largest finite.
    const bool may_overflow = magnitude(expected.value) + expected.ref + expected.err >= largest;
    ratio = may_overflow ? 0.0 : kInfinity;
    return may_overflow && (kernel > 0) == (expected.value > T(0)) ? Decision::pass : Decision::fail;
  }
  if (std::isnan(kernel)) {
    ratio = kInfinity;
    return Decision::fail;
  }
  const double difference = magnitude(T(T(kernel) - expected.value));
  const double bound = expected.err * (1.0 + 0x1p-40);
  ratio = bound > 0 ? difference / bound : (difference > 0 ? kInfinity : 0.0);
  if (difference <= bound - expected.ref) return Decision::pass;
  if (difference > bound + expected.ref) return Decision::fail;
  return Decision::undecided;
}

template <class T>
Element<T> element_of(const OptimInput& in) {
  Element<T> e;
  e.p = exact_input<T>(in.p);
  e.g = exact_input<T>(in.g);
  for (int k = 0; k < 3; ++k) e.s[k] = exact_input<T>(in.s[k]);
  return e;
}

// Judge every element of one step; returns the worst decision.
template <class T>
Decision judge_all(OptimizerKind kind, const Hyperparameters& hyper, DType dtype, const std::vector<OptimInput>& inputs,
                   const std::vector<OptimOutput>& kernel, std::vector<ElementVerdict>& verdicts) {
  std::vector<Element<T>> elements;
  elements.reserve(inputs.size());
  for (const auto& in : inputs) elements.push_back(element_of<T>(in));
  step_all(kind, hyper, exact_scalars<T>(kind, hyper), elements);
  const StorageRounding storage = storage_rounding(dtype);
  const int states = optimizer_info(kind).states;
  const char* names[] = {"state0", "state1", "state2"};
  Decision overall = Decision::pass;
  for (std::size_t i = 0; i < elements.size(); ++i) {
    ElementVerdict& verdict = verdicts[i];
    const Tracked<T> p = round_to_storage(elements[i].p, storage.unit, storage.underflow);
    Decision element_decision = Decision::pass;
    verdict.worst_ratio = 0.0;
    verdict.ill_conditioned = false;
    for (int k = -1; k < states; ++k) {
      const Tracked<T>& expected = k < 0 ? p : elements[i].s[k];
      const float value = k < 0 ? kernel[i].p : kernel[i].s[k];
      double ratio = 0.0;
      const Decision d = decide(expected, value, k < 0 ? storage.largest : static_cast<double>(FLT_MAX), ratio);
      verdict.ill_conditioned = verdict.ill_conditioned || !(expected.err < kInfinity);
      verdict.worst_ratio = std::max(verdict.worst_ratio, ratio);
      if (d == Decision::fail && element_decision != Decision::fail) {
        char line[256];
        std::snprintf(line, sizeof line, "%s: kernel %a, exact %a, bound %.3g (%.3g of it)", k < 0 ? "parameter" : names[k],
                      static_cast<double>(value), magnitude(expected.value) * (expected.value < T(0) ? -1.0 : 1.0),
                      expected.err, ratio);
        verdict.detail = line;
      }
      if (d == Decision::fail) element_decision = Decision::fail;
      if (d == Decision::undecided && element_decision == Decision::pass) element_decision = Decision::undecided;
    }
    verdict.ok = element_decision != Decision::fail;
    verdict.undecided = element_decision == Decision::undecided;
    if (element_decision == Decision::fail) overall = Decision::fail;
    if (element_decision == Decision::undecided && overall == Decision::pass) overall = Decision::undecided;
  }
  return overall;
}

}  // namespace

OptimReference::OptimReference(OptimizerKind kind, const Hyperparameters& hyper, DType param_dtype)
    : kind_(kind), hyper_(hyper), param_dtype_(param_dtype) {}

std::vector<ElementVerdict> OptimReference::check_all(const std::vector<OptimInput>& inputs,
                                                     const std::vector<OptimOutput>& kernel) const {
  std::vector<ElementVerdict> verdicts(inputs.size());
  judge_all<double>(kind_, hyper_, param_dtype_, inputs, kernel, verdicts);
  std::vector<std::size_t> undecided;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].undecided) undecided.push_back(i);
  }
  if (undecided.empty()) return verdicts;
  // Elements within the double evaluation's own error of their bound are decided in MPFR: only
  // those for elementwise optimizers, the whole tensor for LAMB and LARS (the norms couple them).
  if (norm_based(kind_)) {
    judge_all<Exact>(kind_, hyper_, param_dtype_, inputs, kernel, verdicts);
    for (auto& verdict : verdicts) verdict.escalated = true;
  } else {
    std::vector<OptimInput> some_inputs;
    std::vector<OptimOutput> some_outputs;
    for (std::size_t i : undecided) {
      some_inputs.push_back(inputs[i]);
      some_outputs.push_back(kernel[i]);
    }
    std::vector<ElementVerdict> decided(undecided.size());
    judge_all<Exact>(kind_, hyper_, param_dtype_, some_inputs, some_outputs, decided);
    for (std::size_t j = 0; j < undecided.size(); ++j) {
      verdicts[undecided[j]] = decided[j];
      verdicts[undecided[j]].escalated = true;
    }
  }
  return verdicts;  // an element still undecided in MPFR is within 2^-250 of its bound: a pass
}

std::vector<ElementBounds> OptimReference::bounds_all(const std::vector<OptimInput>& inputs) const {
  std::vector<Element<double>> elements;
  for (const auto& in : inputs) elements.push_back(element_of<double>(in));
  step_all(kind_, hyper_, exact_scalars<double>(kind_, hyper_), elements);
  const StorageRounding storage = storage_rounding(param_dtype_);
  std::vector<ElementBounds> bounds(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const Tracked<double> p = round_to_storage(elements[i].p, storage.unit, storage.underflow);
    const Tracked<double>* outputs[4] = {&p, &elements[i].s[0], &elements[i].s[1], &elements[i].s[2]};
    for (int k = 0; k < 4; ++k) {
      bounds[i].value[k] = outputs[k]->value;
      bounds[i].bound[k] = (outputs[k]->err + outputs[k]->ref) * (1.0 + 0x1p-40);
    }
  }
  return bounds;
}

ElementVerdict OptimReference::check(const OptimInput& in, const OptimOutput& kernel) const {
  return check_all({in}, {kernel}).front();
}



struct ExactTrajectory::State {
  std::vector<Element<Exact>> elements;
};

ExactTrajectory::ExactTrajectory(OptimizerKind kind, const std::vector<OptimInput>& start)
    : kind_(kind), state_(new State) {
  for (const auto& in : start) state_->elements.push_back(element_of<Exact>(in));
}

ExactTrajectory::~ExactTrajectory() { delete state_; }
ExactTrajectory::ExactTrajectory(ExactTrajectory&& other) noexcept : kind_(other.kind_), state_(other.state_) {
  other.state_ = nullptr;
}
ExactTrajectory& ExactTrajectory::operator=(ExactTrajectory&& other) noexcept {
  std::swap(kind_, other.kind_);
  std::swap(state_, other.state_);
  return *this;
}

void ExactTrajectory::step(const Hyperparameters& hyper, const std::vector<float>& gradients) {
  for (std::size_t i = 0; i < gradients.size(); ++i) {
    Element<Exact>& e = state_->elements[i];
    e.g = exact_input<Exact>(gradients[i]);
    // The trajectory's values are exact; the kernel-error bookkeeping restarts every step.
    for (Tracked<Exact>* t : {&e.p, &e.s[0], &e.s[1], &e.s[2]}) {
      t->ref = 0;
      t->err = 0;
      t->nonnegative = !(t->value < Exact(0));
    }
  }
  step_all(kind_, hyper, exact_scalars<Exact>(kind_, hyper), state_->elements);
}

double ExactTrajectory::parameter(std::size_t i) const { return state_->elements[i].p.value.convert_to<double>(); }

double ExactTrajectory::state(std::size_t i, int k) const {
  return state_->elements[i].s[k].value.convert_to<double>();
}

std::uint32_t ExactTrajectory::parameter_bits(std::size_t i, DType dtype) const {
  return correctly_rounded_bits(state_->elements[i].p.value.backend().data(), dtype);
}

}  // namespace bitparity::reference
