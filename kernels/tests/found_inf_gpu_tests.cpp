// The step with a caller's found-inf flag on each CUDA device: a zero flag gives the CPU's bits (with
// and without a host synchronisation), a nonzero one writes nothing.
#include <gtest/gtest.h>

#include "bitparity/fixtures/gtest_environment.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "found_inf_support.hpp"

namespace bitparity::found_inf_test {
namespace {


// The step's buffers on a CUDA device, copied from and back to a HostStep.
class DeviceStep {
 public:
  DeviceStep(int device, const HostStep& s) : device_(device) {
    buffers_.push_back(upload(s.param));
    buffers_.push_back(upload(s.grad));
    for (const auto& state : s.states) buffers_.push_back(upload(state));
    flag_ = cuda::allocate(device, sizeof(float));
  }
  ~DeviceStep() {
    for (void* b : buffers_) cuda::release(b);
    cuda::release(flag_);
  }
  StepReport run(OptimizerKind kind, float flag, bool synchronize) {
    cuda::copy_to_device(device_, flag_, &flag, sizeof(float));
    const Device where = Device::cuda(device_);
    auto view = [&](std::size_t b) { return contiguous_view(buffers_[b], DType::f32, where, {kElements}); };
    std::vector<TensorView> states;
    for (std::size_t b = 2; b < buffers_.size(); ++b) states.push_back(view(b));
    return optimizer_step(kind, step_hyperparameters(kind), view(0), view(1), states,
                          FoundInf{static_cast<const float*>(flag_), synchronize});
  }
  HostStep download() const {
    HostStep s;
    s.param = fetch(0);
    s.grad = fetch(1);
    for (std::size_t b = 2; b < buffers_.size(); ++b) s.states.push_back(fetch(b));
    return s;
  }

 private:
  void* upload(const std::vector<float>& v) {
    void* p = cuda::allocate(device_, static_cast<std::int64_t>(v.size() * sizeof(float)));
    cuda::copy_to_device(device_, p, v.data(), static_cast<std::int64_t>(v.size() * sizeof(float)));
    return p;
  }
  std::vector<float> fetch(std::size_t b) const {
    std::vector<float> v(static_cast<std::size_t>(kElements));
    cuda::copy_to_host(device_, v.data(), buffers_[b], kElements * static_cast<std::int64_t>(sizeof(float)));
    return v;
  }
  int device_;
  std::vector<void*> buffers_;
  void* flag_ = nullptr;
};

HostStep cpu_step(OptimizerKind kind) {
  HostStep s = finite_step(kind);
  auto view = [](std::vector<float>& v) {
    return contiguous_view(v.data(), DType::f32, Device::cpu(), {static_cast<std::int64_t>(v.size())});
  };
  std::vector<TensorView> states;
  for (auto& state : s.states) states.push_back(view(state));
  optimizer_step(kind, step_hyperparameters(kind), view(s.param), view(s.grad), states);
  return s;
}

TEST(FoundInfGpu, ZeroFlagGivesTheCpuBits) {
  BITPARITY_REQUIRE_CUDA();
  for (int device = 0; device < cuda_device_count(); ++device) {
    for (const auto& info : optimizers()) {
      for (bool synchronize : {true, false}) {
        const HostStep expected = cpu_step(info.kind);
        DeviceStep step(device, finite_step(info.kind));
        EXPECT_FALSE(step.run(info.kind, 0.0f, synchronize).nonfinite_gradient) << info.name;
        const HostStep got = step.download();  // a blocking copy: waits for an unsynchronised step
        EXPECT_TRUE(same_bits(expected.param, got.param)) << info.name << " on cuda:" << device;
        for (std::size_t k = 0; k < expected.states.size(); ++k) {
          EXPECT_TRUE(same_bits(expected.states[k], got.states[k])) << info.name << ": state " << k;
        }
      }
    }
  }
}

TEST(FoundInfGpu, NonzeroFlagWritesNothing) {
  BITPARITY_REQUIRE_CUDA();
  for (const auto& info : optimizers()) {
    const HostStep before = finite_step(info.kind);
    DeviceStep step(0, before);
    EXPECT_TRUE(step.run(info.kind, 1.0f, true).nonfinite_gradient) << info.name;
    const HostStep after = step.download();
    EXPECT_TRUE(same_bits(before.param, after.param)) << info.name << ": a parameter was written";
    for (std::size_t k = 0; k < before.states.size(); ++k) EXPECT_TRUE(same_bits(before.states[k], after.states[k]));
  }
}

}  // namespace
}  // namespace bitparity::found_inf_test
