// Optimizer entry point: view validation, the non-finite gradient policy, and dispatch to the CPU
// or CUDA launcher (the catalogue, validation of hyperparameters and step scalars: optimizer_info.cpp).
#include "bitparity/kernels/optimizer.hpp"

#include <string>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim_body.hpp"
#include "bitparity/kernels/optim_launch.hpp"

namespace bitparity {

void finish_norm_pass(OptimizerKind kind, const Hyperparameters& h, const NormSums& sums, StepScalars& s) {
  if (norm_based(kind)) {
    finish_trust_ratio(kind, h, sums.param.to_double(), sums.direction.to_double(), s);
  } else {
    finish_update_clipping(h, sums.param.to_double(), sums.direction.to_double(), s);
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

void require_available(const Device& device) {
  if (device.kind == DeviceKind::cuda && (!cuda_built() || device.index >= cuda_device_count())) {
    throw Error(ErrorCode::device_unavailable, "tensors are on " + device.str() + " but it is not available");
  }
}

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
    const auto role = [&] { return name + " state " + std::to_string(k) + " (" + std::string(info.state_specs[k].name) + ")"; };
    if (states[k].dtype != DType::f32) {
      throw Error(ErrorCode::dtype_mismatch, role() + " must be f32, got " + dtype_name(states[k].dtype));
    }
    validate_output_named_by(states[k], role);
    if (!same_sizes(param, states[k])) {
      throw Error(ErrorCode::invalid_argument, role() + " sizes differ from the parameter's: " + states[k].describe());
    }
    if (!(states[k].device == param.device)) {
      throw Error(ErrorCode::device_mismatch, role() + " is on " + states[k].device.str() + " but the parameter is on " +
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
  require_available(param.device);  // after every view is checked: a state on the wrong device is named first
  return p;
}

namespace {

// After the gradient is known finite: the norm pass where the step needs one, then the update.
void norm_and_apply_passes(OptimizerKind kind, const Hyperparameters& h, OptimizerParams& p, const Device& device,
                           const LaunchConfig& launch) {
  const bool on_cpu = device.kind == DeviceKind::cpu;
  if (needs_norm_pass(kind, h)) {
    const NormSums sums = on_cpu ? cpu::norm_pass(p, launch) : cuda::norm_pass(device.index, p, launch);
    finish_norm_pass(kind, h, sums, p.s);
  }
  if (on_cpu) {
    cpu::apply_pass(p, launch);
  } else {
    cuda::apply_pass(device.index, p, launch);
  }
}

}  // namespace

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
  norm_and_apply_passes(kind, h, p, param.device, launch);
  return report;
}

StepReport optimizer_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                          const TensorView& grad, const std::vector<TensorView>& states, const FoundInf& found_inf,
                          const LaunchConfig& launch) {
  if (found_inf.flag == nullptr) {
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) +
                                                 ": found_inf.flag is null; pass the flag's address, or call the "
                                                 "optimizer_step without FoundInf to scan the gradient");
  }
  OptimizerParams p = prepare_optimizer_step(kind, h, param, grad, states);
  StepReport report;
  if (p.numel == 0) return report;
  const bool on_cpu = param.device.kind == DeviceKind::cpu;
  const int device = param.device.index;
  if (!on_cpu && !needs_norm_pass(kind, h)) {
    report.nonfinite_gradient = cuda::apply_unless_found_inf(device, p, launch, found_inf.flag, found_inf.synchronize);
    return report;
  }
  // The CPU, and the norm-based steps (whose norm pass waits for the device anyway): read the flag first.
  report.nonfinite_gradient = on_cpu ? *found_inf.flag != 0.0f : cuda::found_inf_set(device, found_inf.flag, launch.cuda_stream);
  if (report.nonfinite_gradient) return report;
  norm_and_apply_passes(kind, h, p, param.device, launch);
  return report;
}

NormSums optimizer_norm_sums(OptimizerKind kind, const Hyperparameters& h, const TensorView& param, const TensorView& grad,
                             const std::vector<TensorView>& states, const LaunchConfig& launch) {
  if (!needs_norm_pass(kind, h)) {
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) +
                                                 " takes no norms with these hyperparameters (LAMB, LARS or max_unorm > 0 do)");
  }
  const OptimizerParams p = prepare_optimizer_step(kind, h, param, grad, states);
  if (p.numel == 0) return {};
  return param.device.kind == DeviceKind::cpu ? cpu::norm_pass(p, launch) : cuda::norm_pass(param.device.index, p, launch);
}

void optimizer_step_with_norms(OptimizerKind kind, const Hyperparameters& h, const TensorView& param, const TensorView& grad,
                               const std::vector<TensorView>& states, const NormSums& whole, const LaunchConfig& launch) {
  if (!needs_norm_pass(kind, h)) {
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) +
                                                 " takes no norms with these hyperparameters (LAMB, LARS or max_unorm > 0 do)");
  }
  OptimizerParams p = prepare_optimizer_step(kind, h, param, grad, states);
  if (p.numel == 0) return;
  finish_norm_pass(kind, h, whole, p.s);
  if (param.device.kind == DeviceKind::cpu) {
    cpu::apply_pass(p, launch);
  } else {
    cuda::apply_pass(param.device.index, p, launch);
  }
}

}  // namespace bitparity
