// The optimizer catalogue as the host reads it: every entry built from its descriptor, the
// validation of hyperparameters against the descriptors' ranges and rules, and the step scalars
// (the common ones here, the optimizer's own from its descriptor).
#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer.hpp"

namespace bitparity {

namespace {

float to_f32(double x) { return static_cast<float>(x); }

// The parts of a descriptor the host calls through the catalogue.
struct HostDescriptor {
  void (*constraints)(const Hyperparameters&);
  void (*host_scalars)(const descriptors::StepContext&, StepScalars&);
  double (*trust_factor)(const Hyperparameters&, const StepScalars&, double, double, bool);
};

template <class D>
constexpr HostDescriptor host_descriptor() {
  HostDescriptor host{};
  if constexpr (requires(const Hyperparameters& h) { D::constraints(h); }) host.constraints = &D::constraints;
  host.host_scalars = &D::host_scalars;
  if constexpr (D::norm_based) host.trust_factor = &D::trust_factor;
  return host;
}

template <class D>
void make_consistent_of(Hyperparameters& h) {
  if constexpr (requires(Hyperparameters& x) { D::make_consistent(x); }) D::make_consistent(h);
}

#define BITPARITY_INFO(id, D)                                                                                  \
  OptimizerInfo{OptimizerKind::id, D::name,          static_cast<int>(std::size(D::states)), D::summary, D::states, \
                D::hyperparameters, D::norm_based, &make_consistent_of<D>},
const OptimizerInfo kOptimizers[] = {BITPARITY_OPTIMIZERS(BITPARITY_INFO)};
#undef BITPARITY_INFO

#define BITPARITY_HOST(id, D) host_descriptor<D>(),
const HostDescriptor kHost[] = {BITPARITY_OPTIMIZERS(BITPARITY_HOST)};
#undef BITPARITY_HOST

static_assert(std::size(kOptimizers) == kOptimizerCount);

const HostDescriptor& host_of(OptimizerKind kind) { return kHost[static_cast<int>(kind)]; }

// The message is built only where the condition fails: every step validates its hyperparameters,
// and formatting the numbers cost about 1 us a call (3 % of an 8-bit step of 2^14 elements).
template <class Message>
void require(bool condition, const Message& message) {
  if (!condition) throw Error(ErrorCode::invalid_argument, message());
}

bool in_range(ValueRange range, double v) {
  switch (range) {
    case ValueRange::nonnegative: return std::isfinite(v) && v >= 0.0;
    case ValueRange::positive: return std::isfinite(v) && v > 0.0;
    case ValueRange::unit_interval: return std::isfinite(v) && v >= 0.0 && v < 1.0;
    case ValueRange::closed_unit: return std::isfinite(v) && v >= 0.0 && v <= 1.0;
    case ValueRange::flag: return v == 0.0 || v == 1.0;
    // At most 2^53: every such count converts exactly (1e30 had overflowed the int64 field).
    case ValueRange::count: return v >= 0.0 && v <= 0x1p53 && v == std::floor(v);
  }
  return false;
}

const HyperparameterSpec* find_spec(const OptimizerInfo& info, std::string_view name) {
  for (const auto& spec : info.hyperparameters) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const HyperparameterSpec& spec_named(OptimizerKind kind, std::string_view name) {
  const OptimizerInfo& info = optimizer_info(kind);
  if (const HyperparameterSpec* spec = find_spec(info, name)) return *spec;
  std::string choices;
  for (const auto& spec : info.hyperparameters) choices += (choices.empty() ? "" : ", ") + std::string(spec.name);
  throw Error(ErrorCode::invalid_argument, std::string(info.name) + " has no hyperparameter '" + std::string(name) +
                                               "'; it reads " + choices);
}

// factor = trust_scaled_lr * 2^trust_exponent with the fp32 part rounded once; the exponent is 0
// unless the factor is past FLT_MAX, so every representable factor keeps its plain fp32 rounding.
// A non-finite factor (from a non-finite norm) is kept as it is: inf or NaN.
void set_trust_factor(double factor, StepScalars& s) {
  const bool past_fp32 = std::isfinite(factor) && factor > static_cast<double>(std::numeric_limits<float>::max());
  s.trust_exponent = past_fp32 ? std::ilogb(factor) - 126 : 0;
  s.trust_scaled_lr = to_f32(std::ldexp(factor, -s.trust_exponent));
}

}  // namespace

void require_hyperparameters(bool condition, std::string_view optimizer, std::string_view message) {
  if (!condition) throw Error(ErrorCode::invalid_argument, std::string(optimizer) + ": " + std::string(message));
}

std::string_view range_text(ValueRange range) {
  switch (range) {
    case ValueRange::nonnegative: return "finite and >= 0";
    case ValueRange::positive: return "finite and > 0";
    case ValueRange::unit_interval: return "in [0, 1)";
    case ValueRange::closed_unit: return "in [0, 1]";
    case ValueRange::flag: return "0 or 1";
    case ValueRange::count: return "an integer from 0 to 2^53";
  }
  return "";
}

std::span<const OptimizerInfo> optimizers() { return kOptimizers; }

const OptimizerInfo& optimizer_info(OptimizerKind kind) {
  const int index = static_cast<int>(kind);
  if (index < 0 || index >= kOptimizerCount) throw Error(ErrorCode::invalid_argument, "unknown optimizer kind");
  return kOptimizers[index];
}

OptimizerKind parse_optimizer(std::string_view name) {
  std::string choices;
  for (const auto& info : kOptimizers) {
    if (info.name == name) return info.kind;
    choices += (choices.empty() ? "" : ", ") + std::string(info.name);
  }
  throw Error(ErrorCode::invalid_argument, "unknown optimizer '" + std::string(name) + "'; expected one of " + choices);
}

Hyperparameters typical_hyperparameters(OptimizerKind kind) {
  Hyperparameters h;
  for (const auto& spec : optimizer_info(kind).hyperparameters) spec.set(h, spec.typical);
  return h;
}

void set_hyperparameter(OptimizerKind kind, Hyperparameters& h, std::string_view name, double value) {
  const HyperparameterSpec& spec = spec_named(kind, name);
  // Checked before it is stored: a flag or count field would otherwise keep 0.5 as 1 or 0.
  if (!in_range(spec.range, value)) {
    std::ostringstream shown;
    shown << value;
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) + ": " + std::string(name) +
                                                 " must be " + std::string(range_text(spec.range)) + ", got " + shown.str());
  }
  Hyperparameters stored = h;
  spec.set(stored, value);
  // The field may be fp32: a value that rounds to 0 there (lr=1e-320) would silently turn the
  // optimizer off, and one past FLT_MAX would become infinite.
  const double kept = spec.get(stored);
  if ((value != 0.0 && kept == 0.0) || !std::isfinite(kept)) {
    std::ostringstream shown;
    shown << std::setprecision(3) << value << " is stored as " << kept;
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) + ": " + std::string(name) + "=" +
                                                 shown.str() + " in its fp32 field; " +
                                                 (kept == 0.0 ? "give it a magnitude of at least 1.4e-45 (fp32's smallest), or 0"
                                                              : "give it a magnitude of at most 3.4e38 (fp32's largest)"));
  }
  // A value just inside an open bound may round onto it (beta1=0.99999999 is 1 in fp32).
  if (!in_range(spec.range, kept)) {
    const float inside = std::nextafter(static_cast<float>(kept), kept > value ? -INFINITY : INFINITY);
    std::ostringstream shown;
    shown << std::setprecision(9) << value << " is stored as " << kept << " in its fp32 field, where it must be " << range_text(spec.range) << "; give ";
    if (in_range(spec.range, inside)) {
      shown << "at " << (kept > value ? "most " : "least ") << static_cast<double>(inside) << " (fp32's nearest inside)";
    } else {
      shown << "a value fp32 keeps inside";
    }
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) + ": " + std::string(name) + "=" + shown.str());
  }
  h = stored;
}

bool reads_hyperparameter(OptimizerKind kind, std::string_view name) { return find_spec(optimizer_info(kind), name) != nullptr; }

double get_hyperparameter(OptimizerKind kind, const Hyperparameters& h, std::string_view name) {
  return spec_named(kind, name).get(h);
}

bool norm_based(OptimizerKind kind) { return optimizer_info(kind).norm_based; }

bool needs_norm_pass(OptimizerKind kind, const Hyperparameters& h) { return norm_based(kind) || h.max_unorm > 0.0f; }

void validate_hyperparameters(OptimizerKind kind, const Hyperparameters& h) {
  const OptimizerInfo& info = optimizer_info(kind);
  const std::string name(info.name);
  // What every optimizer reads: the step, the AMP loss scale and update-norm clipping.
  require(h.step >= 1, [&] { return name + ": step must be >= 1 (the first step is 1), got " + std::to_string(h.step); });
  require(std::isfinite(h.grad_scale) && h.grad_scale > 0.0f, [&] { return name + ": grad_scale must be finite and > 0"; });
  require(std::isfinite(h.max_unorm) && h.max_unorm >= 0.0f,
          [&] { return name + ": max_unorm must be finite and >= 0 (0: no clipping)"; });
  require(h.max_unorm == 0.0f || !info.norm_based,
          [&] { return name + ": max_unorm does not apply (the trust ratio already scales the update); set it to 0"; });
  for (const auto& spec : info.hyperparameters) {
    require(in_range(spec.range, spec.get(h)), [&] {
      // Shortest round-trip form: std::to_string printed -1e-8 as "-0.000000", which reads as -0.
      std::ostringstream shown;
      shown << std::setprecision(9) << spec.get(h);
      return name + ": " + std::string(spec.name) + " must be " + std::string(range_text(spec.range)) + ", got " + shown.str();
    });
  }
  if (const auto constraints = host_of(kind).constraints) constraints(h);
}

StepScalars step_scalars(OptimizerKind kind, const Hyperparameters& h) {
  validate_hyperparameters(kind, h);
  StepScalars s;
  const double t = static_cast<double>(h.step);
  s.lr = h.lr;
  s.beta1 = h.beta1;
  s.one_minus_beta1 = to_f32(1.0 - h.beta1);
  s.beta2 = h.beta2;
  s.one_minus_beta2 = to_f32(1.0 - h.beta2);
  s.eps = h.eps;
  s.weight_decay = norm_based(kind) && h.exclude_from_weight_decay ? 0.0f : h.weight_decay;
  s.decay = to_f32(1.0 - static_cast<double>(h.lr) * h.weight_decay);
  s.momentum = h.momentum;
  s.one_minus_dampening = to_f32(1.0 - h.dampening);
  s.unscale = h.grad_scale != 1.0f;
  s.inverse_grad_scale = to_f32(1.0 / h.grad_scale);
  s.maximize = h.maximize;
  s.nesterov = h.nesterov;
  s.centered = h.centered;
  s.first_step = h.step == 1;
  const double bias_correction1 = 1.0 - std::pow(static_cast<double>(h.beta1), t);
  const double bias_correction2 = 1.0 - std::pow(static_cast<double>(h.beta2), t);
  s.bias_correction2_sqrt = to_f32(std::sqrt(bias_correction2));
  host_of(kind).host_scalars(descriptors::StepContext{h, t, bias_correction1, bias_correction2}, s);
  return s;
}

void finish_update_clipping(const Hyperparameters& h, double sum_squares_param, double sum_squares_update,
                            StepScalars& s) {
  const double limit = static_cast<double>(h.max_unorm) * std::sqrt(sum_squares_param);
  const double update_norm = std::sqrt(sum_squares_update);
  s.clip_update = limit > 0.0 && update_norm > limit;
  s.update_scale = s.clip_update ? to_f32(limit / update_norm) : 1.0f;
}

void finish_trust_ratio(OptimizerKind kind, const Hyperparameters& h, double sum_squares_param,
                        double sum_squares_direction, StepScalars& s) {
  const auto trust_factor = host_of(kind).trust_factor;
  if (trust_factor == nullptr) {
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) + " has no trust ratio");
  }
  const double param_norm = std::sqrt(sum_squares_param), direction_norm = std::sqrt(sum_squares_direction);
  // "1 when a norm is 0": a NaN norm is not 0, so it reaches the factor instead of hiding behind 1.
  const bool adapt = !h.exclude_from_adaptation && param_norm != 0.0 && direction_norm != 0.0;
  set_trust_factor(trust_factor(h, s, param_norm, direction_norm, adapt), s);
}

}  // namespace bitparity
