#include "optim_harness.hpp"

#include <rapidcheck.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/tensor_view.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/show.hpp"
#include "quant_harness.hpp"

namespace bitparity::properties {

namespace {

// One of the descriptor's samples; a hyperparameter that hides errors at 0 (lr) is 0 in one case of
// 16 only: such a step still moves the states, but cannot show an error in the parameter update.
double draw_sample(const HyperparameterSpec& spec) {
  const std::vector<double> samples(spec.samples.begin(), spec.samples.begin() + spec.sample_count);
  if (!spec.blind_at_zero) return *rc::gen::elementOf(samples);
  return *rc::gen::weightedOneOf<double>({{1, rc::gen::just(0.0)}, {15, rc::gen::elementOf(samples)}});
}

float largest_of(DType dtype) {
  return dtype == DType::f16 ? 65504.0f : (dtype == DType::bf16 ? 3.38e38f : std::numeric_limits<float>::max());
}

}  // namespace

void require_step_domain(const OptimCase& c, const char* property) {
  const auto& specs = optimizer_info(c.kind).state_specs;
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    const reference::OptimInput& v = c.values[i];
    const auto refuse = [&](const std::string& what, float value, const std::string& why) {
      throw CaseFileError("element " + std::to_string(i) + " of the case's " + what + " is " + show_float(value) + "; " + why);
    };
    const std::string finite = std::string(property) + " draws finite inputs (a non-finite gradient is P9o's and P9q's case)";
    if (!std::isfinite(v.p)) refuse("parameter", v.p, finite);
    if (!std::isfinite(v.g)) refuse("gradient", v.g, finite);
    for (std::size_t k = 0; k < specs.size(); ++k) {
      const std::string state = "state " + std::string(specs[k].name);
      if (!std::isfinite(v.s[k])) refuse(state, v.s[k], finite);
      // A negative square average has no square root: the exact step is not a number, and the
      // bound would call a correct implementation wrong.
      if (nonnegative_role(specs[k].role) && v.s[k] < 0.0f) {
        refuse(state, v.s[k], std::string("it holds squares, so ") + property + " draws it >= 0");
      }
    }
    // Centred RMSprop takes sqrt(square average - average^2): a gradient average whose square
    // exceeds the square average is a state no sequence of gradients leaves.
    if (c.hyper.centered) {
      for (std::size_t k = 0; k < specs.size(); ++k) {
        if (specs[k].role != StateRole::centered_average) continue;
        for (std::size_t m = 0; m < specs.size(); ++m) {
          if (specs[m].role != StateRole::second_moment) continue;
          const double average = v.s[k], squares = v.s[m];
          if (average * average > squares) {
            refuse("state " + std::string(specs[k].name), v.s[k],
                   "its square exceeds the square average " + show_float(v.s[m]) + " (" + property +
                       " draws |average|^2 <= square average)");
          }
        }
      }
    }
  }
}

void require_nonfinite_gradient(const OptimCase& c, const char* property) {
  if (c.values.empty()) return;
  for (const reference::OptimInput& v : c.values) {
    if (!std::isfinite(v.g)) return;
  }
  throw CaseFileError(std::string("the case's gradient holds no NaN or Inf; ") + property +
                      " is about a step on a non-finite gradient (its cases hold at least one)");
}

float value_of_bits(std::uint32_t bits, DType dtype) {
  switch (dtype) {
    case DType::f16: return f16_to_float(static_cast<std::uint16_t>(bits));
    case DType::bf16: return bf16_to_float(static_cast<std::uint16_t>(bits));
    default: return float_from_bits(bits);
  }
}

Hyperparameters draw_hyperparameters(OptimizerKind kind, PropertyStats& stats) {
  const OptimizerInfo& info = optimizer_info(kind);
  Hyperparameters h;
  h.step = *rc::gen::element<std::int64_t>(1, 1, 2, 3, 10, 1000, 1000000, std::int64_t{1} << 40);
  for (const auto& spec : info.hyperparameters) spec.set(h, draw_sample(spec));
  h.grad_scale = *rc::gen::element(1.0f, 1.0f, 65536.0f, 0.125f);
  h.maximize = *rc::gen::weightedElement<bool>({{4, false}, {1, true}});
  if (!info.norm_based) h.max_unorm = *rc::gen::element(0.0f, 0.0f, 0.0f, 1.0f, 0.01f, 1e-4f);
  info.make_consistent(h);
  stats.note(describe_hyperparameters(kind, h));
  stats.blind = stats.blind || h.lr == 0.0f;
  return h;
}

std::vector<reference::OptimInput> synthesize_optim_values(OptimizerKind kind, const Hyperparameters& h,
                                                           std::uint64_t seed, std::int64_t n, DType param_dtype,
                                                           DType grad_dtype, bool nonfinite) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> percent(0, 99);
  const double param_scale = std::array<double, 4>{1e-3, 1.0, 1.0, 100.0}[rng() % 4];
  // A whole tensor of subnormal gradients now and then (vanishing gradients): its norm is what makes
  // the LAMB/LARS trust factor leave fp32's range, which per-element tiny values almost never reach.
  const double grad_scale = std::array<double, 7>{0x1p-140, 1e-30, 1e-9, 1e-4, 1.0, 1.0, 1e3}[rng() % 7] * h.grad_scale;
  const double beta1 = h.beta1, one_minus_beta1 = 1.0 - h.beta1;
  auto clamp_to = [](double x, DType dtype) {
    const double largest = largest_of(dtype) / 4;
    return round_to_dtype(std::max(-largest, std::min(largest, x)), dtype);
  };
  std::vector<reference::OptimInput> values(static_cast<std::size_t>(n));
  bool planted = false;
  for (auto& v : values) {
    const int kind_of_p = percent(rng), kind_of_g = percent(rng);
    double p = normal(rng) * param_scale;
    if (kind_of_p < 5) p = 0.0;
    else if (kind_of_p < 10) p = std::ldexp(normal(rng), -140);
    else if (kind_of_p < 13) p = normal(rng) * 1e4 * param_scale;
    v.p = clamp_to(p, param_dtype);
    double g = normal(rng) * grad_scale;
    if (kind_of_g < 10) g = 0.0;
    else if (kind_of_g < 15) g = std::ldexp(normal(rng), -130);
    v.g = clamp_to(g, grad_dtype);
    const double gs = grad_scale / h.grad_scale;
    // First state: a momentum; sometimes exactly cancelling the gradient term of its update.
    double m = normal(rng) * gs;
    if (percent(rng) < 15 && beta1 > 0) m = -(one_minus_beta1 * v.g / h.grad_scale) / beta1;
    // Second moments: non-negative; tiny (eps dominates) or zero now and then.
    double second = std::pow(normal(rng) * gs, 2);
    const int kind_of_v = percent(rng);
    if (kind_of_v < 10) second = 0.0;
    else if (kind_of_v < 20) second = std::ldexp(std::fabs(normal(rng)), -100);
    const auto& specs = optimizer_info(kind).state_specs;
    for (std::size_t k = 0; k < specs.size(); ++k) {
      switch (specs[k].role) {
        case StateRole::momentum: v.s[k] = static_cast<float>(m); break;
        case StateRole::signed_buffer: v.s[k] = static_cast<float>(normal(rng) * gs); break;
        case StateRole::second_moment: v.s[k] = static_cast<float>(second); break;
        case StateRole::running_maximum: {
          // At, above or below the second moment: the maximum must take either side.
          const double factor = std::array<double, 3>{1.0, 2.0, 0.5}[rng() % 3];
          v.s[k] = static_cast<float>(second * factor);
          break;
        }
        case StateRole::centered_average:
          // A gradient average consistent with the square average: |avg|^2 <= square average.
          // Taken from the stored square average, so that the bound holds for the fp32 values too.
          v.s[k] = static_cast<float>(std::sqrt(static_cast<double>(static_cast<float>(second))) *
                                      (2.0 * (percent(rng) / 100.0) - 1.0) * 0.999);
          break;
      }
    }
    if (nonfinite && percent(rng) < 3) {
      v.g = std::array<float, 3>{std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity()}[rng() % 3];
      planted = true;
    }
  }
  if (nonfinite && !planted && n > 0) values[rng() % n].g = std::numeric_limits<float>::quiet_NaN();
  return values;
}

void plant_nonfinite_inputs(OptimCase& c, PropertyStats& stats) {
  const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
  stats.note("non-finite parameters and states, seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::array<std::uint32_t, 5> specials{0x7FC00123u, 0xFFC00000u, 0x7F800000u, 0xFF800000u, 0x7FFFFFFFu};
  const int states = optimizer_info(c.kind).states;
  for (auto& v : c.values) {
    if (rng() % 8 != 0) continue;
    const int slot = static_cast<int>(rng() % static_cast<std::uint64_t>(states + 1));  // 0: the parameter
    const float special = float_from_bits(specials[rng() % specials.size()]);
    if (slot == 0) {
      v.p = static_cast<float>(round_to_dtype(special, c.param_dtype));
    } else {
      v.s[slot - 1] = special;
    }
  }
}

OptimCase draw_optim_case(const PropertyTarget& t, PropertyStats& stats, bool strided, bool nonfinite,
                          std::int64_t max_numel, std::int64_t min_numel, bool launch_sized) {
  if (min_numel <= 1) max_numel *= t.size_scale;
  OptimCase c;
  c.kind = t.optimizer->kind;
  c.param_dtype = t.dtype;
  c.grad_dtype = *rc::gen::elementOf(float_dtypes());
  c.hyper = draw_hyperparameters(c.kind, stats);
  // Blocked targets (8-bit states) get counts around block boundaries: k*bs, k*bs +- 1, one element.
  const auto log_uniform = [&] {
    const double fraction = *rc::gen::resize(100, rc::gen::inRange(0, 1001)) / 1000.0;  // whatever the size
    return static_cast<std::int64_t>(std::llround(static_cast<double>(min_numel) *
                                                  std::pow(static_cast<double>(max_numel) / min_numel, fraction)));
  };
  const std::int64_t n = launch_sized  ? draw_launch_sized_numel(std::max<std::int64_t>(1, t.blocksize), 1)
                         : min_numel > 1 ? log_uniform()
                         : t.blocksize > 0 ? std::min(max_numel, draw_numel(t.blocksize, std::max<std::int64_t>(1, max_numel / t.blocksize), true))
                                           : *rc::gen::weightedElement<std::int64_t>(
                                                 {{1, 0}, {1, 1}, {14, *rc::gen::inRange<std::int64_t>(1, max_numel + 1)}});
  c.shape = draw_shape(n, 4);
  const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
  stats.note(describe_shape(c.shape) + " grad " + dtype_name(c.grad_dtype) + " value seed " + std::to_string(seed));
  c.values = synthesize_optim_values(c.kind, c.hyper, seed, n, c.param_dtype, c.grad_dtype, nonfinite);
  // The step matches tensors element by element in one shape: layouts keep the shape.
  c.param_layout = strided ? draw_layout(c.shape, false, true) : contiguous_layout(c.shape);
  // A broadcast gradient would overwrite the planted NaN/Inf with its one stored value.
  c.grad_layout = strided ? draw_layout(c.shape, !nonfinite, true) : contiguous_layout(c.shape);
  for (int k = 0; k < t.optimizer->states; ++k) {
    c.state_layouts.push_back(strided ? draw_layout(c.shape, false, true) : contiguous_layout(c.shape));
  }
  if (strided) {
    stats.note("param " + describe(c.param_layout) + " grad " + describe(c.grad_layout));
    // A broadcast gradient view repeats storage elements: keep the values it actually reads.
    fixtures::HostTensor grad = make_tensor(c.grad_dtype, c.grad_layout);
    std::vector<float> column(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) column[i] = c.values[i].g;
    fixtures::write_logical(grad.view(), column);
    const std::vector<float> read = fixtures::read_logical(grad.view());
    for (std::int64_t i = 0; i < n; ++i) c.values[i].g = read[i];
  }
  return c;
}

nlohmann::json encode_input(const OptimCase& c) {
  // The optimizer's state columns only: the others are never read.
  const std::size_t state_count = static_cast<std::size_t>(optimizer_info(c.kind).states);
  std::vector<float> param, grad;
  std::vector<std::vector<float>> states(state_count);
  for (const auto& v : c.values) {
    param.push_back(v.p);
    grad.push_back(v.g);
    for (std::size_t k = 0; k < state_count; ++k) states[k].push_back(v.s[k]);
  }
  nlohmann::json state_columns = nlohmann::json::array();  // not a brace list: two-string arrays would read as an object
  for (const auto& column : states) state_columns.push_back(encode_floats(column, DType::f32));
  nlohmann::json state_layouts = nlohmann::json::array();
  for (const auto& layout : c.state_layouts) state_layouts.push_back(encode_input(layout));
  return {{"hyperparameters", encode_input(HyperInput{c.kind, c.hyper})},
          {"param_dtype", dtype_name(c.param_dtype)},
          {"grad_dtype", dtype_name(c.grad_dtype)},
          {"shape", c.shape},
          {"param", encode_floats(param, DType::f32)},
          {"grad", encode_floats(grad, DType::f32)},
          {"states", state_columns},
          {"param_layout", encode_input(c.param_layout)},
          {"grad_layout", encode_input(c.grad_layout)},
          {"state_layouts", state_layouts}};
}

void decode_input(const nlohmann::json& j, OptimCase& c) { decode_optim_case(j, c, true); }

void decode_optim_case(const nlohmann::json& j, OptimCase& c, bool state_columns_given) {
  // Fields of another format (a typo) would be ignored: refused, as unknown hyperparameters are.
  static const std::vector<std::string> kFields = {"hyperparameters", "param_dtype", "grad_dtype", "shape", "param", "grad",
                                                   "states", "param_layout", "grad_layout", "state_layouts"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(kFields.begin(), kFields.end(), key) == kFields.end()) {
      throw CaseFileError("an optimizer case has no field '" + (key.size() > 64 ? key.substr(0, 64) + "..." : key) + "'");
    }
  }
  for (const char* key : {"hyperparameters", "param_dtype", "grad_dtype", "shape", "param", "grad", "states", "param_layout",
                          "grad_layout", "state_layouts"}) {
    if (!j.contains(key)) throw CaseFileError(std::string("an optimizer case needs '") + key + "'");
  }
  HyperInput hyper;
  decode_input(j.at("hyperparameters"), hyper);
  c.kind = hyper.kind;
  c.hyper = hyper.hyper;
  // A step refuses other dtypes, and that refusal would read as a mutant's kill or a failed case.
  for (const auto& [dtype, key] : {std::pair{&c.param_dtype, "param_dtype"}, std::pair{&c.grad_dtype, "grad_dtype"}}) {
    const nlohmann::json& given = j.at(key);
    const bool float_name = given == "f32" || given == "f16" || given == "bf16";
    if (!float_name) throw CaseFileError(std::string("'") + key + "' is " + given.dump() + "; parameters and gradients are f32, f16 or bf16");
    decode_input(given, *dtype);
  }
  decode_input(j.at("shape"), c.shape);
  std::int64_t n = 1;
  for (auto size : c.shape) n *= size;
  const auto column = [&](const nlohmann::json& list, const char* what) {
    std::vector<float> values = decode_floats(list, DType::f32, static_cast<std::size_t>(kMaxCaseElements));
    if (static_cast<std::int64_t>(values.size()) != n) {
      throw CaseFileError(std::string(what) + " holds " + std::to_string(values.size()) + " values; the shape has " + std::to_string(n));
    }
    return values;
  };
  const std::vector<float> param = column(j.at("param"), "param"), grad = column(j.at("grad"), "grad");
  for (const auto& [values, dtype, what] : {std::tuple{&param, c.param_dtype, "param"}, std::tuple{&grad, c.grad_dtype, "grad"}}) {
    try {
      require_values_of_dtype(*values, dtype);
    } catch (const CaseFileError& error) {
      throw CaseFileError(std::string(what) + " " + error.what());
    }
  }
  // One column per state; none in an 8-bit case, whose states are codes and absmax (columns there
  // were read by nothing, and no columns in an fp32 case were read as zeros).
  const nlohmann::json& states = j.at("states");
  const std::size_t state_count = static_cast<std::size_t>(optimizer_info(c.kind).states);
  if (!state_columns_given && (!states.is_array() || !states.empty())) {
    throw CaseFileError("an 8-bit case's states are its 'codes' and 'absmax'; its base's 'states' must be []");
  }
  if (state_columns_given && (!states.is_array() || states.size() != state_count)) {
    throw CaseFileError(std::string(optimizer_info(c.kind).name) + " has " + std::to_string(state_count) +
                        " states; 'states' must hold that many columns");
  }
  std::vector<std::vector<float>> state_columns;
  for (const auto& state : states) state_columns.push_back(column(state, "a state column"));
  c.values.assign(static_cast<std::size_t>(n), {});
  for (std::int64_t i = 0; i < n; ++i) {
    c.values[i].p = param[i];
    c.values[i].g = grad[i];
    for (std::size_t k = 0; k < state_columns.size(); ++k) c.values[i].s[k] = state_columns[k][i];
  }
  decode_input(j.at("param_layout"), c.param_layout);
  decode_input(j.at("grad_layout"), c.grad_layout);
  const nlohmann::json& state_layouts = j.at("state_layouts");
  const int expected_states = optimizer_info(c.kind).states;
  if (!state_layouts.is_array() || static_cast<int>(state_layouts.size()) != expected_states) {
    throw CaseFileError(std::string(optimizer_info(c.kind).name) + " has " + std::to_string(expected_states) +
                        " states; 'state_layouts' must list one layout each");
  }
  c.state_layouts.clear();
  for (const auto& layout : state_layouts) {
    c.state_layouts.emplace_back();
    decode_input(layout, c.state_layouts.back());
  }
  // The step matches tensors element by element: every layout has the case's shape.
  for (const Layout* layout : {&c.param_layout, &c.grad_layout}) {
    if (layout->sizes != c.shape) throw CaseFileError("the parameter and gradient layouts must have the case's shape");
  }
  for (const auto& layout : c.state_layouts) {
    if (layout.sizes != c.shape) throw CaseFileError("every state layout must have the case's shape");
  }
  // A broadcast gradient repeats one storage element: elements that share it hold one value, as
  // every drawn case's do (an edit giving them two would run one of them in the strided step).
  {
    const StridedIndex index = make_index(c.grad_layout.sizes, c.grad_layout.strides, c.grad_layout.offset);
    std::map<std::int64_t, std::int64_t> first_at;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto [shared, inserted] = first_at.emplace(index.storage(i), i);
      if (!inserted && float_bits(grad[i]) != float_bits(grad[shared->second])) {
        throw CaseFileError("grad element " + std::to_string(i) + " is " + show_float(grad[i]) + " but shares storage element " +
                            std::to_string(shared->first) + " of 'grad_layout' with element " + std::to_string(shared->second) +
                            " (" + show_float(grad[shared->second]) + "); a broadcast gradient repeats one value");
      }
    }
  }
  // The step writes the parameter and every state in place.
  require_output_layout(c.param_layout, "the parameter's layout 'param_layout'");
  for (std::size_t k = 0; k < c.state_layouts.size(); ++k) {
    require_output_layout(c.state_layouts[k], "state " + std::to_string(k) + "'s layout in 'state_layouts'");
  }
}

OptimResult run_optim(fixtures::Implementation& iut, const OptimCase& c, const LaunchConfig& launch, bool contiguous,
                      std::uint8_t fill_byte) {
  const std::int64_t n = static_cast<std::int64_t>(c.values.size());
  auto layout_of = [&](const Layout& layout) { return contiguous ? contiguous_layout(c.shape) : layout; };
  OptimResult r;
  r.tensors.push_back(make_tensor(c.param_dtype, layout_of(c.param_layout), fill_byte));
  r.tensors.push_back(make_tensor(c.grad_dtype, layout_of(c.grad_layout), fill_byte));
  for (const auto& layout : c.state_layouts) r.tensors.push_back(make_tensor(DType::f32, layout_of(layout), fill_byte));
  std::vector<float> column(static_cast<std::size_t>(n));
  auto write = [&](fixtures::HostTensor& tensor, auto field) {
    for (std::int64_t i = 0; i < n; ++i) column[i] = field(c.values[i]);
    fixtures::write_logical(tensor.view(), column);
  };
  write(r.tensors[0], [](const reference::OptimInput& v) { return v.p; });
  write(r.tensors[1], [](const reference::OptimInput& v) { return v.g; });
  for (std::size_t k = 0; k < c.state_layouts.size(); ++k) {
    write(r.tensors[2 + k], [k](const reference::OptimInput& v) { return v.s[k]; });
  }
  // A broadcast gradient repeats one storage element: its logical values are what the view reads.
  std::vector<TensorView> states;
  for (std::size_t k = 0; k < c.state_layouts.size(); ++k) states.push_back(r.tensors[2 + k].view());
  const StepReport report = iut.optimizer_step(c.kind, c.hyper, r.tensors[0].view(), r.tensors[1].view(), states, launch);
  r.nonfinite_reported = report.nonfinite_gradient;
  r.param_bits = fixtures::read_logical_bits(r.tensors[0].view());
  for (const auto& state : states) r.state_bits.push_back(fixtures::read_logical_bits(state));
  return r;
}

void expect_same_step(PropertyStats& stats, const OptimCase& c, const OptimResult& expected, const OptimResult& actual,
                      const std::string& what) {
  if (expected.nonfinite_reported != actual.nonfinite_reported) {
    report_violation(stats, 1, what + ": the non-finite gradient report differs");
  }
  expect_same_bits(stats, expected.param_bits, actual.param_bits, c.param_dtype, what + " (parameter)");
  for (std::size_t k = 0; k < expected.state_bits.size(); ++k) {
    expect_same_bits(stats, expected.state_bits[k], actual.state_bits[k], DType::f32, what + " (state " + std::to_string(k) + ")");
  }
}

}  // namespace bitparity::properties
