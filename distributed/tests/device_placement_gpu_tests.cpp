// Field bug 4 on a GPU: a state loaded for a cuda:0 parameter lands on cuda:0 and continues bitwise
// as the same state on the CPU; the fault that leaves it on the CPU (checkpoint-states-left-on-cpu)
// makes the next step refuse, naming the state and both devices, instead of computing anything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "bitparity/fixtures/gtest_environment.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "device_placement_support.hpp"

namespace bitparity::distributed {
namespace {

namespace fs = std::filesystem;

// A host buffer mirrored on cuda:0.
class DeviceBuffer {
 public:
  DeviceBuffer(const void* host, std::int64_t bytes) : bytes_(bytes), data_(cuda::allocate(0, bytes)) {
    cuda::copy_to_device(0, data_, host, bytes);
  }
  ~DeviceBuffer() { cuda::release(data_); }
  void* data() const { return data_; }
  std::vector<std::uint8_t> read() const {
    std::vector<std::uint8_t> host(static_cast<std::size_t>(bytes_));
    cuda::copy_to_host(0, host.data(), data_, bytes_);
    return host;
  }

 private:
  std::int64_t bytes_;
  void* data_;
};

fs::path folder_for(const char* name) { return fs::temp_directory_path() / (std::string("bitparity_placement_") + name + std::to_string(::getpid())); }

TEST(DevicePlacementGpu, LoadedStateFollowsTheParameterToCudaAndContinuesAsOnTheCpu) {
  BITPARITY_REQUIRE_CUDA();
  for (const bool eight_bit : {false, true}) {
    const fs::path folder = folder_for("follows");
    const testing::SavedParameter saved = testing::save_one_parameter(OptimizerKind::adam, eight_bit, folder.string());
    const std::int64_t param_bytes = static_cast<std::int64_t>(saved.param.size()), grad_bytes = saved.numel * 4;
    // The CPU continuation.
    std::vector<std::uint8_t> cpu_param = saved.param;
    std::vector<float> cpu_grad = saved.next_grad;
    const TensorView cp = contiguous_view(cpu_param.data(), saved.dtype, Device::cpu(), {saved.numel});
    const TensorView cg = contiguous_view(cpu_grad.data(), DType::f32, Device::cpu(), {saved.numel});
    ParameterState on_cpu = load_parameter_state(saved.path, saved.id, cp);
    on_cpu.hyper.step += 1;
    (void)on_cpu.state->step(on_cpu.hyper, cp, cg);
    // The same on cuda:0.
    DeviceBuffer param(saved.param.data(), param_bytes), grad(saved.next_grad.data(), grad_bytes);
    const TensorView dp = contiguous_view(param.data(), saved.dtype, Device::cuda(0), {saved.numel});
    const TensorView dg = contiguous_view(grad.data(), DType::f32, Device::cuda(0), {saved.numel});
    ParameterState on_gpu = load_parameter_state(saved.path, saved.id, dp);
    EXPECT_EQ(on_gpu.state->device(), Device::cuda(0));
    on_gpu.hyper.step += 1;
    (void)on_gpu.state->step(on_gpu.hyper, dp, dg);
    EXPECT_EQ(param.read(), cpu_param) << (eight_bit ? "8-bit" : "32-bit");
    for (std::size_t b = 0; b < on_cpu.state->buffer_count(); ++b) {
      EXPECT_EQ(on_gpu.state->read_buffer(b), on_cpu.state->read_buffer(b)) << "state buffer " << b;
    }
    fs::remove_all(folder);
  }
}

TEST(DevicePlacementGpu, StatesLeftOnTheCpuAreRefusedNamingTheStateAndBothDevices) {
  BITPARITY_REQUIRE_CUDA();
  for (const bool eight_bit : {false, true}) {
    const fs::path folder = folder_for("left");
    const testing::SavedParameter saved = testing::save_one_parameter(OptimizerKind::adam, eight_bit, folder.string());
    DeviceBuffer param(saved.param.data(), static_cast<std::int64_t>(saved.param.size()));
    DeviceBuffer grad(saved.next_grad.data(), saved.numel * 4);
    const TensorView dp = contiguous_view(param.data(), saved.dtype, Device::cuda(0), {saved.numel});
    const TensorView dg = contiguous_view(grad.data(), DType::f32, Device::cuda(0), {saved.numel});
    ParameterState loaded = load_parameter_state(saved.path, saved.id, dp, kDevicePlacementFault);
    EXPECT_EQ(loaded.state->device(), Device::cpu());  // what the fault does
    loaded.hyper.step += 1;
    try {
      (void)loaded.state->step(loaded.hyper, dp, dg);
      ADD_FAILURE() << "a step with the state on the CPU and the parameter on cuda:0 was computed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::device_mismatch);
      const std::string text = e.what();
      for (const char* word : {"exp_avg", "cpu", "cuda:0"}) EXPECT_NE(text.find(word), std::string::npos) << text;
    }
    EXPECT_EQ(param.read(), saved.param);  // nothing was computed
    fs::remove_all(folder);
  }
}

}  // namespace
}  // namespace bitparity::distributed
