#include "input_guard.hpp"

#include <cstring>
#include <iomanip>
#include <sstream>

#include "bitparity/kernels/dtype.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity::properties {

// The inputs of one call: taken before it, compared after it.
class InputGuard::Watch {
 public:
  Watch(PropertyStats& stats, std::string call) : stats_(stats), call_(std::move(call)) {}

  void tensor(const std::string& role, const TensorView& view) {
    const auto size = static_cast<std::size_t>(dtype_storage_bytes(view.dtype, view.storage_elements));
    bytes(role, view.data, size);
  }
  void map(QuantFormat format) {
    const CodeTable& table = code_table(format);
    bytes(std::string("the code map ") + std::string(quant_format_info(format).name), &table, sizeof table);
  }
  void hyperparameters(const Hyperparameters& hyper) { bytes("the hyperparameters", &hyper, sizeof hyper); }

  // Reports the first input whose bytes changed (and how many bytes did).
  void check() const {
    for (const Snapshot& input : inputs_) {
      std::int64_t changed = 0;
      std::size_t first = 0;
      for (std::size_t i = input.before.size(); i-- > 0;) {
        if (input.bytes[i] != input.before[i]) {
          ++changed;
          first = i;
        }
      }
      if (changed == 0) continue;
      std::ostringstream text;
      text << call_ << " changed its input '" << input.role << "': " << changed << " of " << input.before.size()
           << " bytes differ, the first at byte " << first << " (0x" << std::hex << std::setw(2) << std::setfill('0')
           << int(input.before[first]) << " became 0x" << std::setw(2) << int(input.bytes[first]) << ")";
      report_violation(stats_, changed, text.str());
    }
  }

 private:
  void bytes(const std::string& role, const void* data, std::size_t size) {
    if (data == nullptr || size == 0) return;
    const auto* first = static_cast<const unsigned char*>(data);
    inputs_.push_back({role, first, std::vector<unsigned char>(first, first + size)});
  }

  PropertyStats& stats_;
  std::string call_;
  std::vector<Snapshot> inputs_;
};

QuantizeReport InputGuard::quantize(const TensorView& input, QuantFormat format, std::int64_t blocksize,
                                    const QuantizeOutputs& outputs, const StochasticRounding& rounding,
                                    const LaunchConfig& launch) {
  Watch watch(stats_, "quantize");
  watch.tensor("input", input);
  watch.map(format);
  const QuantizeReport report = inner_.quantize(input, format, blocksize, outputs, rounding, launch);
  watch.check();
  return report;
}

void InputGuard::dequantize(const TensorView& codes, const TensorView& absmax, QuantFormat format, std::int64_t blocksize,
                            const TensorView& output, const LaunchConfig& launch) {
  Watch watch(stats_, "dequantize");
  watch.tensor("codes", codes);
  watch.tensor("absmax", absmax);
  watch.map(format);
  inner_.dequantize(codes, absmax, format, blocksize, output, launch);
  watch.check();
}

void InputGuard::convert(const TensorView& input, const TensorView& output, const LaunchConfig& launch) {
  Watch watch(stats_, "convert");
  watch.tensor("input", input);
  inner_.convert(input, output, launch);
  watch.check();
}

StepReport InputGuard::optimizer_step(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param,
                                      const TensorView& grad, const std::vector<TensorView>& states,
                                      const LaunchConfig& launch) {
  Watch watch(stats_, "the 32-bit step");
  watch.tensor("grad", grad);
  watch.hyperparameters(hyper);
  const StepReport report = inner_.optimizer_step(kind, hyper, param, grad, states, launch);
  watch.check();
  return report;
}

Step8Report InputGuard::optimizer8_step(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param,
                                        const TensorView& grad, const std::vector<QuantizedState>& states,
                                        std::int64_t blocksize, const LaunchConfig& launch) {
  Watch watch(stats_, "the 8-bit step");
  watch.tensor("grad", grad);
  watch.hyperparameters(hyper);
  for (std::size_t k = 0; k < states.size(); ++k) watch.map(state8_map(kind, static_cast<int>(k), states[k].map));
  const Step8Report report = inner_.optimizer8_step(kind, hyper, param, grad, states, blocksize, launch);
  watch.check();
  return report;
}

NormSums InputGuard::optimizer_norm_sums(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param,
                                         const TensorView& grad, const std::vector<TensorView>& states,
                                         const LaunchConfig& launch) {
  // The sums only read: every tensor is an input here.
  Watch watch(stats_, "the norm sums");
  watch.tensor("param", param);
  watch.tensor("grad", grad);
  for (std::size_t k = 0; k < states.size(); ++k) watch.tensor("state " + std::to_string(k), states[k]);
  watch.hyperparameters(hyper);
  const NormSums sums = inner_.optimizer_norm_sums(kind, hyper, param, grad, states, launch);
  watch.check();
  return sums;
}

void InputGuard::optimizer_step_with_norms(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param,
                                           const TensorView& grad, const std::vector<TensorView>& states,
                                           const NormSums& whole, const LaunchConfig& launch) {
  Watch watch(stats_, "the step with norms");
  watch.tensor("grad", grad);
  watch.hyperparameters(hyper);
  inner_.optimizer_step_with_norms(kind, hyper, param, grad, states, whole, launch);
  watch.check();
}

}  // namespace bitparity::properties
