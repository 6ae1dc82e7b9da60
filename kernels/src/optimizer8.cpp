// 8-bit blockwise optimizer entry point: validation and the non-finite gradient policy. The CPU
// launcher is optim8_cpu.cpp.
#include "bitparity/kernels/optimizer8.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "bitparity/kernels/code_map.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim8_body.hpp"
#include "bitparity/kernels/optim8_launch.hpp"
#include "bitparity/kernels/optim_launch.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "parallel_for.hpp"

namespace bitparity {

bool has_8bit_variant(OptimizerKind kind) { return !norm_based(kind); }

QuantFormat state8_format(OptimizerKind kind, int state) {
  if (!has_8bit_variant(kind)) {
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) + " has no 8-bit variant");
  }
  // Non-negative states (second moments, their maxima) take the unsigned map; everything else signed.
  const auto& specs = optimizer_info(kind).state_specs;
  if (state < 0 || state >= static_cast<int>(specs.size())) {
    throw Error(ErrorCode::invalid_argument, std::string(optimizer_info(kind).name) + " has no state " + std::to_string(state));
  }
  return nonnegative_role(specs[static_cast<std::size_t>(state)].role) ? QuantFormat::dynamic8_unsigned
                                                                      : QuantFormat::dynamic8_signed;
}

QuantFormat state8_map(OptimizerKind kind, int state, const std::optional<QuantFormat>& chosen) {
  const QuantFormat fallback = state8_format(kind, state);  // checks the optimizer and the state
  if (!chosen) return fallback;
  const CodeMap& map = code_map(*chosen);
  const StateSpec& spec = optimizer_info(kind).state_specs[static_cast<std::size_t>(state)];
  const std::string what = std::string(optimizer_info(kind).name) + " (8-bit) state " + std::to_string(state) + " (" +
                           std::string(spec.name) + ")";
  if (map.bits != 8) {
    throw Error(ErrorCode::invalid_argument, what + ": map '" + map.name + "' is a " + std::to_string(map.bits) +
                                                 "-bit map; 8-bit states take 8-bit maps");
  }
  // Every state takes positive values (a second moment has no others): a map without a positive code
  // would store each of them as its largest code, at or below 0.
  if (!map.has_positive_code()) {
    throw Error(ErrorCode::invalid_argument, what + " takes positive values but map '" + map.name +
                                                 "' has no code above 0; give a map whose largest code is positive");
  }
  const bool has_negative = map.has_negative_code();
  if (!nonnegative_role(spec.role) && !has_negative) {
    throw Error(ErrorCode::invalid_argument, what + " takes negative values but map '" + map.name +
                                                 "' has none; give it a signed map such as dynamic8-signed");
  }
  return *chosen;
}

std::optional<QuantFormat> StateMaps::of_state(OptimizerKind kind, int state) const {
  const auto& specs = optimizer_info(kind).state_specs;
  if (state < 0 || state >= static_cast<int>(specs.size())) return std::nullopt;
  return nonnegative_role(specs[static_cast<std::size_t>(state)].role) ? nonnegative_states : signed_states;
}

double state_bytes_per_element_8bit(OptimizerKind kind, std::int64_t blocksize) {
  return optimizer_info(kind).states * (1.0 + 4.0 / static_cast<double>(blocksize));
}

double state_bytes_per_element_32bit(OptimizerKind kind) { return optimizer_info(kind).states * 4.0; }


Optimizer8Params prepare_optimizer8_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                                         const TensorView& grad, const std::vector<QuantizedState>& states,
                                         std::int64_t blocksize) {
  const std::string name = std::string(optimizer_info(kind).name) + " (8-bit)";
  if (!has_8bit_variant(kind)) {
    throw Error(ErrorCode::invalid_argument, name + ": no 8-bit variant; LAMB and LARS keep 32-bit states");
  }
  if (h.max_unorm != 0.0f) {
    throw Error(ErrorCode::invalid_argument, name + ": max_unorm is not supported with 8-bit states yet; set it to 0");
  }
  validate_block_size(QuantFormat::dynamic8_signed, blocksize);
  const OptimizerInfo& info = optimizer_info(kind);
  if (static_cast<int>(states.size()) != info.states) {
    throw Error(ErrorCode::invalid_argument, name + " needs " + std::to_string(info.states) + " quantized states, got " +
                                                 std::to_string(states.size()));
  }
  // The 32-bit validation covers the parameter and gradient (shapes, bounds, overlap, devices).
  Optimizer8Params p;
  p.base = prepare_param_and_grad(kind, h, param, grad);
  p.blocksize = blocksize;
  const std::int64_t n = param.numel(), blocks = block_count(n, blocksize);
  for (int k = 0; k < info.states; ++k) {
    const auto role = [&] { return name + " state " + std::to_string(k) + " (" + std::string(info.state_specs[k].name) + ")"; };
    const TensorView& codes = states[k].codes;
    const TensorView& absmax = states[k].absmax;
    if (codes.dtype != DType::u8 || absmax.dtype != DType::f32) {
      throw Error(ErrorCode::dtype_mismatch, role() + ": codes must be u8 and absmax f32");
    }
    validate_output_named_by(codes, role);
    validate_output_named_by(absmax, role);
    if (!codes.index.contiguous || codes.index.offset != 0 || codes.numel() != n) {
      throw Error(ErrorCode::invalid_argument, role() + ": codes must be a contiguous buffer of " + std::to_string(n) +
                                                   " bytes, got " + codes.describe());
    }
    if (!absmax.index.contiguous || absmax.index.offset != 0 || absmax.numel() != blocks) {
      throw Error(ErrorCode::invalid_argument, role() + ": absmax must be a contiguous buffer of " + std::to_string(blocks) +
                                                   " values (block size " + std::to_string(blocksize) + "), got " +
                                                   absmax.describe());
    }
    for (const auto& [part, view] : {std::pair<const char*, const TensorView*>{" codes", &codes}, {" absmax", &absmax}}) {
      if (!(view->device == param.device)) {
        throw Error(ErrorCode::device_mismatch, role() + part + " is on " + view->device.str() + " but the parameter is on " +
                                                    param.device.str() + "; move the state to " + param.device.str());
      }
    }
    p.codes[k] = static_cast<std::uint8_t*>(codes.data);
    p.absmax[k] = static_cast<float*>(absmax.data);
    p.state_format[k] = state8_map(kind, k, states[k].map);
  }
  require_available(param.device);  // after every view is checked: a state on the wrong device is named first
  return p;
}

Step8Report optimizer8_step(OptimizerKind kind, const Hyperparameters& h, const TensorView& param,
                            const TensorView& grad, const std::vector<QuantizedState>& states, std::int64_t blocksize,
                            const LaunchConfig& launch) {
  const Optimizer8Params p = prepare_optimizer8_step(kind, h, param, grad, states, blocksize);
  Step8Report report;
  if (p.base.numel == 0) return report;
  if (param.device.kind != DeviceKind::cpu) {
    report.nonfinite_gradient = cuda::scan_and_step8(param.device.index, p, launch, report.nonfinite_state_blocks);
    return report;
  }
  report.nonfinite_gradient = cpu::gradient_has_nonfinite(p.base, launch);
  if (!report.nonfinite_gradient) cpu::optimizer8_blocks(p, launch, report.nonfinite_state_blocks);
  return report;
}

}  // namespace bitparity
