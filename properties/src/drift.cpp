#include "bitparity/properties/drift.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/properties/show.hpp"
#include "bitparity/reference/optim_reference.hpp"

namespace bitparity::properties {

namespace {

// Position of a float's bits on the number line, so that neighbours differ by one.
std::int64_t ordered(std::uint32_t bits, DType dtype) {
  const int width = dtype == DType::f32 ? 32 : 16;
  const std::uint32_t sign = 1u << (width - 1);
  const std::int64_t magnitude = bits & (sign - 1);
  return (bits & sign) ? -magnitude : magnitude;
}

int histogram_bin(double ulps) {
  if (ulps == 0) return 0;
  if (ulps <= 1) return 1;
  if (ulps <= 3) return 2;
  if (ulps <= 15) return 3;
  if (ulps <= 255) return 4;
  return 5;
}

// The middle value (the upper one of an even count); 0 for none.
double median(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace

Hyperparameters drift_hyperparameters(OptimizerKind kind, const std::vector<std::pair<std::string, double>>& settings) {
  Hyperparameters h = typical_hyperparameters(kind);
  for (const auto& [name, value] : settings) {
    if (reads_hyperparameter(kind, name)) set_hyperparameter(kind, h, name, value);
  }
  validate_hyperparameters(kind, h);
  return h;
}

DriftReport run_drift(fixtures::Implementation& iut, OptimizerKind kind, DType dtype, const DriftOptions& options) {
  DriftReport report;
  report.implementation = iut.name();
  report.optimizer = std::string(optimizer_info(kind).name);
  report.dtype = dtype;
  report.elements = options.elements;
  report.eight_bit = options.eight_bit;
  report.blocksize = options.eight_bit ? options.blocksize : 0;
  const std::int64_t n = options.elements;
  const std::int64_t blocks = block_count(n, options.blocksize);
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<double> normal;
  fixtures::HostTensor param = fixtures::HostTensor::contiguous(dtype, {n});
  fixtures::HostTensor grad = fixtures::HostTensor::contiguous(dtype, {n});
  std::vector<fixtures::HostTensor> states;
  std::vector<TensorView> state_views;
  std::vector<QuantizedState> quantized;
  const int state_count = optimizer_info(kind).states;
  std::vector<QuantFormat> maps;
  for (int k = 0; options.eight_bit && k < state_count; ++k) {
    maps.push_back(state8_map(kind, k, options.maps.of_state(kind, k)));
    report.state_maps.emplace_back(quant_format_info(maps.back()).name);
  }
  for (int k = 0; k < state_count; ++k) {
    if (options.eight_bit) {
      states.push_back(fixtures::HostTensor::buffer(DType::u8, n, code_table(maps[static_cast<std::size_t>(k)]).zero_code));
      states.push_back(fixtures::HostTensor::buffer(DType::f32, blocks));
    } else {
      states.push_back(fixtures::HostTensor::contiguous(DType::f32, {n}));
      state_views.push_back(states.back().view());
    }
  }
  for (int k = 0; options.eight_bit && k < state_count; ++k) quantized.push_back({states[2 * k].view(), states[2 * k + 1].view(), maps[static_cast<std::size_t>(k)]});
  std::vector<float> start(n), gradient(n);
  for (auto& p : start) p = round_to_dtype(normal(rng), dtype);
  fixtures::write_logical(param.view(), start);
  std::vector<reference::OptimInput> inputs;
  for (std::int64_t i = 0; i < n; ++i) inputs.push_back(reference::OptimInput{start[i], 0.0f, {0, 0, 0}});
  reference::ExactTrajectory exact(kind, inputs);
  Hyperparameters hyper = drift_hyperparameters(kind, options.settings);
  report.hyperparameters = describe_hyperparameters(kind, hyper);
  for (std::int64_t t = 1; t <= options.steps; ++t) {
    hyper.step = t;
    // Gradients of a noisy quadratic around zero, fixed in advance (independent of either trajectory).
    for (auto& g : gradient) g = round_to_dtype(normal(rng) * 0.1 + 0.01, dtype);
    fixtures::write_logical(grad.view(), gradient);
    if (options.eight_bit) {
      iut.optimizer8_step(kind, hyper, param.view(), grad.view(), quantized, options.blocksize, {});
    } else {
      iut.optimizer_step(kind, hyper, param.view(), grad.view(), state_views, {});
    }
    const std::vector<float> values = fixtures::read_logical(param.view());
    const std::vector<std::uint32_t> bits = fixtures::read_logical_bits(param.view());
    DriftStep row;
    row.step = t;
    exact.step(hyper, gradient);
    std::vector<double> abs_errors, rel_errors;
    row.parameter_hash = 0xcbf29ce484222325ull;
    for (const std::uint32_t b : bits) {
      for (int byte = 0; byte < 4; ++byte) row.parameter_hash = (row.parameter_hash ^ ((b >> (8 * byte)) & 0xFFu)) * 0x100000001b3ull;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const double truth = exact.parameter(i);
      if (!std::isfinite(values[i])) {
        ++row.nonfinite;
        continue;
      }
      const double error = std::fabs(static_cast<double>(values[i]) - truth);
      row.max_abs_error = std::max(row.max_abs_error, error);
      abs_errors.push_back(error);
      if (truth != 0) {
        row.max_rel_error = std::max(row.max_rel_error, error / std::fabs(truth));
        rel_errors.push_back(error / std::fabs(truth));
      }
      const double ulps = std::fabs(static_cast<double>(ordered(bits[i], dtype) - ordered(exact.parameter_bits(i, dtype), dtype)));
      row.max_ulps = std::max(row.max_ulps, ulps);
      ++row.ulp_histogram[histogram_bin(ulps)];
    }
    row.median_abs_error = median(abs_errors);
    row.median_rel_error = median(rel_errors);
    if (options.eight_bit) {
      // The first state, dequantized, against the exact 32-bit state, relative to its largest value.
      const CodeTable& table = code_table(maps.front());
      const auto* codes = states[0].bytes().data();
      const auto* absmax = reinterpret_cast<const float*>(states[1].bytes().data());
      double largest = 0, worst = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double exact_state = exact.state(i, 0);
        largest = std::max(largest, std::fabs(exact_state));
        worst = std::max(worst, std::fabs(table.code_values[codes[i]] * static_cast<double>(absmax[i / options.blocksize]) - exact_state));
      }
      row.max_state_error = largest > 0 ? worst / largest : 0.0;
    }
    report.steps.push_back(row);
    if (options.on_step && !options.on_step(t)) break;  // asked to stop: the steps so far stand
  }
  return report;
}

}  // namespace bitparity::properties
