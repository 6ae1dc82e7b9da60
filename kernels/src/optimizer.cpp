// Optimizer entry point: hyperparameter validation, the host-side step scalars, view validation,
// the non-finite gradient policy, and dispatch to the CPU or CUDA launcher.
#include "bitparity/kernels/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim_body.hpp"
#include "bitparity/kernels/optim_launch.hpp"

namespace bitparity {

namespace {

constexpr OptimizerInfo kOptimizers[] = {
    {OptimizerKind::adam, "adam", 2, "Adam (L2 weight decay added to the gradient), torch.optim.Adam"},
    {OptimizerKind::adamw, "adamw", 2, "AdamW (decoupled weight decay), torch.optim.AdamW"},
    {OptimizerKind::sgd, "sgd", 1, "SGD with momentum, dampening and Nesterov, torch.optim.SGD"},
    {OptimizerKind::rmsprop, "rmsprop", 3, "RMSprop (smoothing alpha, centered, momentum), torch.optim.RMSprop"},
    {OptimizerKind::adagrad, "adagrad", 1, "Adagrad with lr decay, torch.optim.Adagrad"},
    {OptimizerKind::lion, "lion", 1, "Lion (sign of the interpolated momentum, decoupled weight decay)"},
    {OptimizerKind::ademamix, "ademamix", 3, "AdEMAMix (fast and slow EMAs, alpha and beta3 warm-up)"},
    {OptimizerKind::lamb, "lamb", 2, "LAMB: Adam direction with weight decay, layer-wise trust ratio ||p||/||u||, clipped"},
    {OptimizerKind::lars, "lars", 1, "LARS: local lr eta*||p||/(||g|| + wd*||p||) into SGD momentum"},
};

void require(bool condition, const std::string& message) {
  if (!condition) throw Error(ErrorCode::invalid_argument, message);
}

bool finite_nonnegative(float x) { return std::isfinite(x) && x >= 0.0f; }
bool unit_interval(float x) { return std::isfinite(x) && x >= 0.0f && x < 1.0f; }

float to_f32(double x) { return static_cast<float>(x); }

// AdEMAMix beta3 warm-up (Pagliardini et al., 2024): interpolate the half-life
// f(beta) = ln(0.5) / ln(beta) - 1 from beta1 to beta3 over `warmup` steps.
double scheduled_beta3(double beta1, double beta3, std::int64_t step, std::int64_t warmup) {
  if (warmup <= 0 || step >= warmup) return beta3;
  const auto half_life = [](double beta) { return std::log(0.5) / std::log(beta) - 1.0; };
  const double fraction = static_cast<double>(step) / static_cast<double>(warmup);
  const double t = (1.0 - fraction) * half_life(beta1) + fraction * half_life(beta3);
  return std::min(std::pow(0.5, 1.0 / (t + 1.0)), beta3);
}

}  // namespace

std::vector<OptimizerInfo> optimizers() { return {std::begin(kOptimizers), std::end(kOptimizers)}; }

const OptimizerInfo& optimizer_info(OptimizerKind kind) {
  for (const auto& info : kOptimizers) {
    if (info.kind == kind) return info;
  }
  throw Error(ErrorCode::invalid_argument, "unknown optimizer kind");
}

OptimizerKind parse_optimizer(std::string_view name) {
  std::string choices;
  for (const auto& info : kOptimizers) {
    if (info.name == name) return info.kind;
    choices += (choices.empty() ? "" : ", ") + std::string(info.name);
  }
  throw Error(ErrorCode::invalid_argument, "unknown optimizer '" + std::string(name) + "'; expected one of " + choices);
}

void validate_hyperparameters(OptimizerKind kind, const Hyperparameters& h) {
  const std::string name(optimizer_info(kind).name);
  require(h.step >= 1, name + ": step must be >= 1 (the first step is 1), got " + std::to_string(h.step));
  require(finite_nonnegative(h.lr), name + ": lr must be finite and >= 0");
  require(finite_nonnegative(h.eps), name + ": eps must be finite and >= 0");
  require(finite_nonnegative(h.weight_decay), name + ": weight_decay must be finite and >= 0");
  require(std::isfinite(h.grad_scale) && h.grad_scale > 0.0f, name + ": grad_scale must be finite and > 0");
  require(unit_interval(h.beta1), name + ": beta1 must be in [0, 1)");
  require(unit_interval(h.beta2), name + ": beta2 must be in [0, 1)");
  require(finite_nonnegative(h.max_unorm), name + ": max_unorm must be finite and >= 0 (0: no clipping)");
  require(h.max_unorm == 0.0f || !norm_based(kind),
          name + ": max_unorm does not apply (the trust ratio already scales the update); set it to 0");
  switch (kind) {
    case OptimizerKind::sgd:
      require(finite_nonnegative(h.momentum), "sgd: momentum must be finite and >= 0");
      require(std::isfinite(h.dampening) && h.dampening >= 0.0f && h.dampening <= 1.0f, "sgd: dampening must be in [0, 1]");
      require(!h.nesterov || (h.momentum > 0.0f && h.dampening == 0.0f),
              "sgd: nesterov needs momentum > 0 and dampening 0 (as torch.optim.SGD)");
      break;
    case OptimizerKind::rmsprop:
      require(unit_interval(h.smoothing), "rmsprop: smoothing (alpha) must be in [0, 1)");
      require(finite_nonnegative(h.momentum), "rmsprop: momentum must be finite and >= 0");
      break;
    case OptimizerKind::adagrad: require(finite_nonnegative(h.lr_decay), "adagrad: lr_decay must be finite and >= 0"); break;
    case OptimizerKind::lamb:
      require(finite_nonnegative(h.max_trust_ratio), "lamb: max_trust_ratio must be finite and >= 0 (0: no clipping)");
      break;
    case OptimizerKind::lars:
      require(std::isfinite(h.trust_coefficient) && h.trust_coefficient > 0.0f, "lars: trust_coefficient must be > 0");
      require(finite_nonnegative(h.momentum), "lars: momentum must be finite and >= 0");
      require(std::isfinite(h.dampening) && h.dampening >= 0.0f && h.dampening <= 1.0f, "lars: dampening must be in [0, 1]");
      require(!h.nesterov || (h.momentum > 0.0f && h.dampening == 0.0f), "lars: nesterov needs momentum > 0 and dampening 0");
      break;
    case OptimizerKind::ademamix:
      require(unit_interval(h.beta3), "ademamix: beta3 must be in [0, 1)");
      require(finite_nonnegative(h.ademamix_alpha), "ademamix: alpha must be finite and >= 0");
      require(h.alpha_warmup >= 0 && h.beta3_warmup >= 0, "ademamix: warm-up lengths must be >= 0");
      require(h.beta3_warmup == 0 || (h.beta1 > 0.0f && h.beta3 > 0.0f),
              "ademamix: the beta3 warm-up needs beta1 > 0 and beta3 > 0");
      break;
    default: break;
  }
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
  switch (kind) {
    case OptimizerKind::adam:
    case OptimizerKind::adamw: s.step_size = to_f32(h.lr / bias_correction1); break;
    case OptimizerKind::adagrad: s.step_size = to_f32(h.lr / (1.0 + (t - 1.0) * h.lr_decay)); break;
    case OptimizerKind::rmsprop:
      s.alpha = h.smoothing;
      s.one_minus_alpha = to_f32(1.0 - h.smoothing);
      break;
    case OptimizerKind::lamb: s.inverse_bias_correction1 = to_f32(1.0 / bias_correction1); break;
    case OptimizerKind::ademamix: {
      s.inverse_bias_correction1 = to_f32(1.0 / bias_correction1);
      const double alpha = h.alpha_warmup > 0 ? std::min(t * h.ademamix_alpha / static_cast<double>(h.alpha_warmup),
                                                         static_cast<double>(h.ademamix_alpha))
                                              : h.ademamix_alpha;
      s.alpha = to_f32(alpha);
      const double beta3 = scheduled_beta3(h.beta1, h.beta3, h.step, h.beta3_warmup);
      s.beta3 = to_f32(beta3);
      s.one_minus_beta3 = to_f32(1.0 - static_cast<double>(s.beta3));
      break;
    }
    default: break;
  }
  return s;
}

bool norm_based(OptimizerKind kind) { return norm_based_kind(kind); }

bool needs_norm_pass(OptimizerKind kind, const Hyperparameters& h) { return norm_based(kind) || h.max_unorm > 0.0f; }

void finish_update_clipping(const Hyperparameters& h, double sum_squares_param, double sum_squares_update,
                            StepScalars& s) {
  const double limit = static_cast<double>(h.max_unorm) * std::sqrt(sum_squares_param);
  const double update_norm = std::sqrt(sum_squares_update);
  s.clip_update = limit > 0.0 && update_norm > limit;
  s.update_scale = s.clip_update ? to_f32(limit / update_norm) : 1.0f;
}

void finish_norm_pass(OptimizerKind kind, const Hyperparameters& h, const NormSums& sums, StepScalars& s) {
  if (norm_based(kind)) {
    finish_trust_ratio(kind, h, sums.param.to_double(), sums.direction.to_double(), s);
  } else {
    finish_update_clipping(h, sums.param.to_double(), sums.direction.to_double(), s);
  }
}

namespace {

// factor = trust_scaled_lr * 2^trust_exponent with the fp32 part rounded once; the exponent is 0
// unless the factor is past FLT_MAX, so every representable factor keeps its plain fp32 rounding.
void set_trust_factor(double factor, StepScalars& s) {
  s.trust_exponent = factor > static_cast<double>(std::numeric_limits<float>::max()) ? std::ilogb(factor) - 126 : 0;
  s.trust_scaled_lr = to_f32(std::ldexp(factor, -s.trust_exponent));
}

}  // namespace

void finish_trust_ratio(OptimizerKind kind, const Hyperparameters& h, double sum_squares_param,
                        double sum_squares_direction, StepScalars& s) {
  const double param_norm = std::sqrt(sum_squares_param), direction_norm = std::sqrt(sum_squares_direction);
  const bool adapt = !h.exclude_from_adaptation && param_norm > 0.0 && direction_norm > 0.0;
  if (kind == OptimizerKind::lamb) {
    double trust = adapt ? param_norm / direction_norm : 1.0;
    if (adapt && h.max_trust_ratio > 0.0f) trust = std::min(trust, static_cast<double>(h.max_trust_ratio));
    set_trust_factor(static_cast<double>(h.lr) * trust, s);
  } else {
    const double wd = s.weight_decay;
    set_trust_factor(adapt ? h.trust_coefficient * param_norm / (direction_norm + wd * param_norm) : 1.0, s);
  }
}

namespace {

void require_float_view(const TensorView& view, const char* role) {
  if (!is_float_dtype(view.dtype)) {
    throw Error(ErrorCode::dtype_mismatch, std::string(role) + " must be f32, f16 or bf16, got " + dtype_name(view.dtype));
  }
}

bool same_sizes(const TensorView& a, const TensorView& b) {
  if (a.ndim() != b.ndim()) return false;
  for (int d = 0; d < a.ndim(); ++d) {
    if (a.index.sizes[d] != b.index.sizes[d]) return false;
  }
  return true;
}

// Byte range a view can touch.
std::pair<const char*, const char*> byte_extent(const TensorView& view) {
  std::int64_t first = view.index.offset, last = view.index.offset;
  for (int d = 0; d < view.ndim(); ++d) last += (view.index.sizes[d] - 1) * view.index.strides[d];
  const auto* base = static_cast<const char*>(view.data);
  const std::int64_t width = dtype_storage_bytes(view.dtype, 1);
  return {base + first * width, base + (last + 1) * width};
}

bool may_overlap(const TensorView& a, const TensorView& b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  const auto [a0, a1] = byte_extent(a);
  const auto [b0, b1] = byte_extent(b);
  return a0 < b1 && b0 < a1;
}

}  // namespace

OptimizerParams prepare_param_and_grad(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                                       const TensorView& grad) {
  const std::string name(optimizer_info(kind).name);
  OptimizerParams p;
  p.kind = kind;
  p.s = step_scalars(kind, h);
  require_float_view(param, "parameter");
  require_float_view(grad, "gradient");
  validate_output(param, "parameter");
  validate_input(grad, "gradient");
  if (!same_sizes(param, grad)) {
    throw Error(ErrorCode::invalid_argument, name + ": gradient sizes differ from the parameter's: " + grad.describe() +
                                                 " vs " + param.describe());
  }
  if (!(grad.device == param.device)) {
    throw Error(ErrorCode::device_mismatch, name + ": the gradient is on " + grad.device.str() +
                                                " but the parameter is on " + param.device.str());
  }
  if (may_overlap(param, grad)) {
    throw Error(ErrorCode::overlapping_output, name + ": the gradient shares storage with the parameter");
  }
  if (param.device.kind == DeviceKind::cuda && (!cuda_built() || param.device.index >= cuda_device_count())) {
    throw Error(ErrorCode::device_unavailable, "tensors are on " + param.device.str() + " but it is not available");
  }
  p.param = param.data;
  p.param_dtype = param.dtype;
  p.param_index = param.index;
  p.grad = grad.data;
  p.grad_dtype = grad.dtype;
  p.grad_index = grad.index;
  p.numel = param.numel();
  return p;
}

OptimizerParams prepare_optimizer_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                                       const TensorView& grad, const std::vector<TensorView>& states) {
  const OptimizerInfo& info = optimizer_info(kind);
  const std::string name(info.name);
  OptimizerParams p = prepare_param_and_grad(kind, h, param, grad);
  if (static_cast<int>(states.size()) != info.states) {
    throw Error(ErrorCode::invalid_argument, name + " needs " + std::to_string(info.states) + " state tensors, got " +
                                                 std::to_string(states.size()));
  }
  std::vector<const TensorView*> written = {&param};
  for (std::size_t k = 0; k < states.size(); ++k) {
    const std::string role = name + " state " + std::to_string(k);
    if (states[k].dtype != DType::f32) {
      throw Error(ErrorCode::dtype_mismatch, role + " must be f32, got " + dtype_name(states[k].dtype));
    }
    validate_output(states[k], role.c_str());
    if (!same_sizes(param, states[k])) {
      throw Error(ErrorCode::invalid_argument, role + " sizes differ from the parameter's: " + states[k].describe());
    }
    if (!(states[k].device == param.device)) {
      throw Error(ErrorCode::device_mismatch, role + " is on " + states[k].device.str() + " but the parameter is on " +
                                                  param.device.str() + "; move the state to " + param.device.str());
    }
    written.push_back(&states[k]);
  }
  for (std::size_t a = 0; a < written.size(); ++a) {
    if (a > 0 && may_overlap(*written[a], grad)) {
      throw Error(ErrorCode::overlapping_output, name + ": the gradient shares storage with a tensor the step writes");
    }
    for (std::size_t b = a + 1; b < written.size(); ++b) {
      if (may_overlap(*written[a], *written[b])) {
        throw Error(ErrorCode::overlapping_output, name + ": two tensors the step writes share storage");
      }
    }
  }
  for (std::size_t k = 0; k < states.size(); ++k) {
    p.state[k] = static_cast<float*>(states[k].data);
    p.state_index[k] = states[k].index;
  }
  return p;
}

StepReport optimizer_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                          const TensorView& grad, const std::vector<TensorView>& states, const LaunchConfig& launch) {
  OptimizerParams p = prepare_optimizer_step(kind, h, param, grad, states);
  StepReport report;
  if (p.numel == 0) return report;
  const bool on_cpu = param.device.kind == DeviceKind::cpu;
  const int device = param.device.index;
  if (!on_cpu && !needs_norm_pass(kind, h)) {
    report.nonfinite_gradient = cuda::scan_and_apply(device, p, launch);
    return report;
  }
  report.nonfinite_gradient = on_cpu ? cpu::gradient_has_nonfinite(p, launch) : cuda::gradient_has_nonfinite(device, p, launch);
  if (report.nonfinite_gradient) return report;  // nothing written: parameters and states as they were
  if (needs_norm_pass(kind, h)) {
    const NormSums sums = on_cpu ? cpu::norm_pass(p, launch) : cuda::norm_pass(device, p, launch);
    finish_norm_pass(kind, h, sums, p.s);
  }
  if (on_cpu) {
    cpu::apply_pass(p, launch);
  } else {
    cuda::apply_pass(device, p, launch);
  }
  return report;
}

}  // namespace bitparity
