#pragma once
// An implementation under test wrapped so that every call's inputs are compared, byte for byte,
// before and after the call (P13 input immutability): a tensor's whole storage (holes of a strided
// view included), a dequantize's codes and absmax, a 32-bit step's gradient, the code maps a call
// reads and the hyperparameters. A change is a violation naming the call, the input and the first
// changed byte. In-out tensors (parameters, states) and outputs are the call's to write.
#include <memory>
#include <string>
#include <vector>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

class InputGuard : public fixtures::Implementation {
 public:
  InputGuard(fixtures::Implementation& inner, PropertyStats& stats) : inner_(inner), stats_(stats) {}
  std::string name() const override { return inner_.name(); }
  Device device() const override { return inner_.device(); }
  bool offers(fixtures::OperationFamily family) const override { return inner_.offers(family); }
  std::string declines(fixtures::OperationFamily family, QuantFormat format, DType dtype) const override {
    return inner_.declines(family, format, dtype);
  }
  std::string declines(fixtures::OperationFamily family, OptimizerKind kind, DType dtype) const override {
    return inner_.declines(family, kind, dtype);
  }
  bool takes_strided() const override { return inner_.takes_strided(); }
  bool follows(fixtures::Convention convention) const override { return inner_.follows(convention); }

  QuantizeReport quantize(const TensorView& input, QuantFormat format, std::int64_t blocksize, const QuantizeOutputs& outputs,
                          const StochasticRounding& rounding, const LaunchConfig& launch) override;
  void dequantize(const TensorView& codes, const TensorView& absmax, QuantFormat format, std::int64_t blocksize,
                  const TensorView& output, const LaunchConfig& launch) override;
  void convert(const TensorView& input, const TensorView& output, const LaunchConfig& launch) override;
  StepReport optimizer_step(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param, const TensorView& grad,
                            const std::vector<TensorView>& states, const LaunchConfig& launch) override;
  Step8Report optimizer8_step(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param, const TensorView& grad,
                              const std::vector<QuantizedState>& states, std::int64_t blocksize,
                              const LaunchConfig& launch) override;
  NormSums optimizer_norm_sums(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param, const TensorView& grad,
                               const std::vector<TensorView>& states, const LaunchConfig& launch) override;
  void optimizer_step_with_norms(OptimizerKind kind, const Hyperparameters& hyper, const TensorView& param,
                                 const TensorView& grad, const std::vector<TensorView>& states, const NormSums& whole,
                                 const LaunchConfig& launch) override;

 private:
  // The bytes of one input, kept before the call.
  struct Snapshot {
    std::string role;  // "grad", "the nf4 code map"
    const unsigned char* bytes = nullptr;
    std::vector<unsigned char> before;
  };
  class Watch;

  fixtures::Implementation& inner_;
  PropertyStats& stats_;
};

}  // namespace bitparity::properties
