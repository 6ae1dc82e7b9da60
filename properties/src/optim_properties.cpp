// Optimizer properties P1 P2 P3 P4 P5 P9, each defined once over the optimizer registry.
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/optimizer.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/show.hpp"
#include "metamorphic.hpp"
#include "optim_harness.hpp"
#include "quant_harness.hpp"

namespace bitparity::properties {

namespace {


// P1: every parameter and state element lies within its derived bound of the exact step.
void accuracy(const PropertyTarget& t, PropertyStats& stats) {
  const OptimCase c = drawn<OptimCase>(t, stats, "case", [&] {
    // LAMB and LARS also get tensors of 10^4 to 10^6 elements in one case of eight: there a norm
    // summed in fp32 errs by more than the trust factor's bound (mutant norm-summed-in-fp32).
    const bool long_tensor = optimizer_info(t.optimizer->kind).norm_based && *rc::gen::resize(100, rc::gen::inRange(0, 8)) == 7;
    return long_tensor ? draw_optim_case(t, stats, false, false, 1'000'000, 10'000)
                       : draw_optim_case(t, stats, false, false, 600);
  });
  require_step_domain(c, "P1");
  const OptimResult r = run_optim(*t.iut, c, {}, true);
  if (r.nonfinite_reported) report_violation(stats, 1, "a finite gradient was reported non-finite");
  const reference::OptimReference ref(c.kind, c.hyper, c.param_dtype);
  std::vector<reference::OptimOutput> outputs(c.values.size());
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    outputs[i].p = value_of_bits(r.param_bits[i], c.param_dtype);
    for (std::size_t k = 0; k < r.state_bits.size(); ++k) outputs[i].s[k] = float_from_bits(r.state_bits[k][i]);
  }
  const std::vector<reference::ElementVerdict> verdicts = [&] {
    const ReferenceTimer timer(stats);
    return ref.check_all(c.values, outputs);
  }();
  std::int64_t bad = 0, ill_conditioned = 0;
  std::string first;
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    const reference::ElementVerdict& verdict = verdicts[i];
    ill_conditioned += verdict.ill_conditioned ? 1 : 0;
    if (!verdict.ill_conditioned) stats.observe_ratio(verdict.worst_ratio);
    if (!verdict.ok && bad++ == 0) {
      const auto& in = c.values[i];
      std::ostringstream text;
      text << "element " << i << " p=" << show_float(in.p) << " g=" << show_float(in.g) << " s=[" << show_float(in.s[0])
           << ", " << show_float(in.s[1]) << ", " << show_float(in.s[2]) << "]: " << verdict.detail;
      first = text.str();
    }
  }
  if (bad > 0) report_violation(stats, bad, std::to_string(bad) + " elements outside their bound; first: " + first);
  if (!stats.failed) stats.ill_conditioned += ill_conditioned;
  stats.pass_case(static_cast<std::int64_t>(c.values.size()));
}

// The 32-bit step as an operation family of the metamorphic properties (metamorphic.hpp).
struct Step32Family {
  using Case = OptimCase;
  using Result = OptimResult;
  static constexpr const char* operation = "step";
  static constexpr fixtures::Suite suite = fixtures::Suite::optim32;
  static std::vector<fixtures::OperationFamily> families() { return {fixtures::OperationFamily::optimizer_step}; }
  static Case draw(const PropertyTarget& t, PropertyStats& stats, Metamorphic which) {
    // A non-finite gradient in one case of five where the property compares whole results; in
    // another, non-finite parameters and states, whose NaN results every path must store alike.
    const int mix = *rc::gen::weightedElement<int>({{3, 0}, {1, 1}, {1, 2}});
    const auto with_nonfinite_inputs = [&](OptimCase c) {
      if (mix == 2) plant_nonfinite_inputs(c, stats);
      return c;
    };
    switch (which) {
      case Metamorphic::layout:
        return with_nonfinite_inputs(draw_optim_case(t, stats, true, mix == 1, 300, 1, draw_launch_sized()));
      case Metamorphic::launch: return draw_optim_case(t, stats, true, false, 20000, 1, draw_launch_sized());
      case Metamorphic::determinism: return draw_optim_case(t, stats, true, false, 2000);
      case Metamorphic::device:
        return with_nonfinite_inputs(draw_optim_case(t, stats, true, mix == 1, 20000, 1, draw_launch_sized()));
    }
    return {};
  }
  static void require_in_domain(const PropertyTarget&, const Case&) {}  // every drawn step is valid on every target
  static Result run(fixtures::Implementation& iut, const Case& c, const LaunchConfig& launch, bool contiguous) {
    return run_optim(iut, c, launch, contiguous);
  }
  static void expect_same(PropertyStats& stats, const Case& c, const Result& expected, const Result& actual,
                          const std::string& what) {
    expect_same_step(stats, c, expected, actual, what);
  }
  static void expect_untouched_outside_views(PropertyStats& stats, const Result& strided) {
    for (std::size_t k = 0; k < strided.tensors.size(); ++k) {
      if (k != 1) expect_untouched_outside_view(stats, strided.tensors[k], 0x3C, "optimizer step output " + std::to_string(k));
    }
  }
  static std::int64_t elements(const Case& c) { return static_cast<std::int64_t>(c.values.size()); }
};

// P9: a gradient holding NaN or infinity changes nothing (every byte of every tensor's storage stays
// as it was) and is reported.
void nonfinite_policy(const PropertyTarget& t, PropertyStats& stats) {
  const OptimCase c = drawn<OptimCase>(t, stats, "case", [&] { return draw_optim_case(t, stats, true, true, 2000); });
  require_nonfinite_gradient(c, "P9o");
  if (c.values.empty()) {
    const OptimResult r = run_optim(*t.iut, c, {});
    if (r.nonfinite_reported) report_violation(stats, 1, "an empty tensor was reported non-finite");
    stats.pass_case(0);
    return;
  }
  const OptimResult after = run_optim(*t.iut, c, drawn_launch(t, stats));
  if (!after.nonfinite_reported) report_violation(stats, 1, "a non-finite gradient was not reported");
  // Compare with the inputs as laid out: rebuild them without stepping.
  for (std::size_t k = 0; k < after.tensors.size(); ++k) {
    std::vector<float> column(c.values.size());
    const DType dtype = k == 0 ? c.param_dtype : (k == 1 ? c.grad_dtype : DType::f32);
    const Layout& layout = k == 0 ? c.param_layout : (k == 1 ? c.grad_layout : c.state_layouts[k - 2]);
    fixtures::HostTensor pristine = make_tensor(dtype, layout, 0x3C);
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      column[i] = k == 0 ? c.values[i].p : (k == 1 ? c.values[i].g : c.values[i].s[k - 2]);
    }
    fixtures::write_logical(pristine.view(), column);
    if (pristine.bytes() != after.tensors[k].bytes()) {
      std::size_t at = 0;
      while (at < pristine.bytes().size() && pristine.bytes()[at] == after.tensors[k].bytes()[at]) ++at;
      report_violation(stats, 1, std::string(k == 0 ? "the parameter" : (k == 1 ? "the gradient" : "a state")) +
                                     " changed although the gradient is non-finite (first changed byte " +
                                     std::to_string(at) + ")");
    }
  }
  stats.pass_case(static_cast<std::int64_t>(c.values.size()));
}

// P9n's cases, as drawn: one NaN parameter, every other input finite and in the step's domain, and on
// LAMB and LARS adaptation and weight decay on with a non-zero gradient (else the trust factor is 1
// and the NaN stays in its element). A saved case edited outside that is refused.
void require_nonfinite_parameter_domain(const OptimCase& c) {
  std::int64_t nans = 0;
  OptimCase finite = c;
  for (auto& v : finite.values) {
    if (std::isnan(v.p)) {
      ++nans;
      v.p = 0.0f;
    }
  }
  if (nans != 1) {
    throw CaseFileError("the case holds " + std::to_string(nans) + " NaN parameters; P9n steps a case with exactly one");
  }
  require_step_domain(finite, "P9n");
  if (!optimizer_info(c.kind).norm_based) return;
  const bool moving = std::any_of(c.values.begin(), c.values.end(), [](const reference::OptimInput& v) { return v.g != 0.0f; });
  if (c.hyper.exclude_from_adaptation || c.hyper.exclude_from_weight_decay || !(c.hyper.weight_decay > 0.0f) || !moving) {
    throw CaseFileError(std::string("P9n steps ") + std::string(optimizer_info(c.kind).name) +
                        " with adaptation and weight decay on (weight_decay > 0, neither excluded) and a non-zero gradient, "
                        "so that its norms carry the NaN; this case has " + describe_hyperparameters(c.kind, c.hyper) +
                        (moving ? "" : " and every gradient 0"));
  }
}

// P9n: a NaN parameter reaches exactly what its norms reach. LAMB and LARS tensors that adapt take
// their trust factor from norms that include it, so every parameter becomes NaN (LAMB with weight
// decay, whose direction then holds the NaN too; LARS with a non-zero gradient, so that its norm is
// not the "0" that gives a factor of 1). Any other step changes only the NaN's own element: the rest
// equals the step without it, unclipped, since a NaN parameter norm never clips (ARITHMETIC.md).
void nonfinite_parameter(const PropertyTarget& t, PropertyStats& stats) {
  const bool norm_based_kind = optimizer_info(t.optimizer->kind).norm_based;
  const OptimCase c = drawn<OptimCase>(t, stats, "case", [&] {
    OptimCase drawn_case = draw_optim_case(t, stats, false, false, 600);
    if (drawn_case.values.empty()) return drawn_case;
    const std::size_t at = *rc::gen::inRange<std::size_t>(0, drawn_case.values.size());
    drawn_case.values[at].p = std::numeric_limits<float>::quiet_NaN();
    stats.note("NaN planted at parameter " + std::to_string(at));
    if (norm_based_kind) {
      drawn_case.hyper.exclude_from_adaptation = false;
      drawn_case.hyper.exclude_from_weight_decay = false;
      if (drawn_case.hyper.weight_decay == 0.0f) drawn_case.hyper.weight_decay = 0.01f;
      const std::size_t other = (at + 1) % drawn_case.values.size();
      drawn_case.values[other].g = 1.0f;
      stats.note("gradient " + std::to_string(other) + " set to 1; stepped as " +
                 describe_hyperparameters(drawn_case.kind, drawn_case.hyper));
    }
    return drawn_case;
  });
  if (c.values.empty()) {
    stats.pass_case(0);
    return;
  }
  require_nonfinite_parameter_domain(c);
  std::size_t at = 0;
  while (!std::isnan(c.values[at].p)) ++at;
  const OptimResult r = run_optim(*t.iut, c, {});
  if (norm_based_kind) {
    std::int64_t finite = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      if (!std::isnan(value_of_bits(r.param_bits[i], c.param_dtype)) && finite++ == 0) first = i;
    }
    if (finite > 0) {
      report_violation(stats, finite, std::to_string(finite) + " parameters are not NaN after a step whose norms include the NaN parameter " +
                                           std::to_string(at) + "; first: element " + std::to_string(first) + " = " +
                                           show_float(value_of_bits(r.param_bits[first], c.param_dtype)));
    }
  } else {
    OptimCase without = c;
    without.values[at].p = 0.0f;
    without.hyper.max_unorm = 0.0f;
    const OptimResult expected = run_optim(*t.iut, without, {});
    std::int64_t differing = 0;
    std::string first;
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      if (i == at) continue;
      bool same = expected.param_bits[i] == r.param_bits[i];
      for (std::size_t k = 0; k < r.state_bits.size() && same; ++k) same = expected.state_bits[k][i] == r.state_bits[k][i];
      if (!same && differing++ == 0) first = "element " + std::to_string(i);
    }
    if (differing > 0) {
      report_violation(stats, differing, std::to_string(differing) + " elements other than the NaN parameter " + std::to_string(at) +
                                             " differ from the step without it; first: " + first);
    }
  }
  stats.pass_case(static_cast<std::int64_t>(c.values.size()));
}

}  // namespace

void append_optimizer_properties(std::vector<PropertyDef>& catalogue) {
  catalogue.push_back({"P1", "accuracy", fixtures::Suite::optim32,
                       "every parameter and state element is within its derived error bound of the exact step", false,
                       false, accuracy});
  catalogue.push_back({"P2o", "layout", fixtures::Suite::optim32,
                       "strided, sliced, permuted, broadcast-gradient and chunk layouts give the contiguous bits", false,
                       false, layout_property<Step32Family>});
  catalogue.push_back({"P3o", "launch", fixtures::Suite::optim32, "threads, grid and launch splitting do not change a bit", false,
                       false, launch_property<Step32Family>});
  catalogue.push_back({"P4o", "determinism", fixtures::Suite::optim32, "the same step twice gives the same bits", false, false,
                       determinism_property<Step32Family>});
  catalogue.push_back({"P9o", "nonfinite-gradient", fixtures::Suite::optim32,
                       "a NaN/Inf gradient changes no byte of any tensor and is reported", false, false,
                       nonfinite_policy});
  catalogue.push_back({"P9n", "nonfinite-parameter", fixtures::Suite::optim32,
                       "a NaN parameter makes every parameter of a LAMB/LARS step NaN and no other element of any other step change",
                       false, false, nonfinite_parameter});
  catalogue.push_back({"P13o", "input-immutability", fixtures::Suite::optim32,
                       "a step leaves every byte of its gradient and hyperparameters unchanged", false, false,
                       immutability_property<Step32Family>});
  catalogue.push_back({"P14o", "no-hidden-state", fixtures::Suite::optim32,
                       "steps of other optimizers and dtypes give the same bits in order and in reverse order, each order on a fresh instance",
                       false, false, hidden_state_property<Step32Family>, {}, true});
  catalogue.push_back({"P5o", "device", fixtures::Suite::optim32, "every CUDA device gives the CPU's bits", true, false, device_property<Step32Family>});
}

}  // namespace bitparity::properties
