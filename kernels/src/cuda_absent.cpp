// Built instead of quantize_cuda.cu when nvcc is not found: no CUDA devices, clear refusals.
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optim8_launch.hpp"
#include "bitparity/kernels/optim_launch.hpp"
#include "bitparity/kernels/quantize.hpp"

namespace bitparity {

bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
std::string cuda_device_description(int) { return ""; }

namespace cuda {
namespace {
[[noreturn]] void unavailable() {
  throw Error(ErrorCode::device_unavailable, "this build has no CUDA launchers (nvcc was not found at configure time)");
}
}  // namespace
std::int64_t quantize(int, QuantFormat, const QuantizeParams&, const LaunchConfig&) { unavailable(); }
void dequantize(int, QuantFormat, const DequantizeParams&, const LaunchConfig&) { unavailable(); }
void convert(int, const ConvertParams&, const LaunchConfig&) { unavailable(); }
void* allocate(int, std::int64_t) { unavailable(); }
void release(void*) {}
void copy_to_device(int, void*, const void*, std::int64_t, void*) { unavailable(); }
void copy_to_host(int, void*, const void*, std::int64_t, void*) { unavailable(); }
void* create_stream(int, bool) { unavailable(); }
void destroy_stream(void*) {}
void copy_on_device(int, void*, const void*, std::int64_t) { unavailable(); }
bool gradient_has_nonfinite(int, const OptimizerParams&, const LaunchConfig&) { unavailable(); }
bool scan_and_apply(int, const OptimizerParams&, const LaunchConfig&) { unavailable(); }
bool apply_unless_found_inf(int, const OptimizerParams&, const LaunchConfig&, const float*, bool) { unavailable(); }
bool found_inf_set(int, const float*, void*) { unavailable(); }
NormSums norm_pass(int, const OptimizerParams&, const LaunchConfig&) { unavailable(); }
void apply_pass(int, const OptimizerParams&, const LaunchConfig&) { unavailable(); }
bool scan_and_step8(int, const Optimizer8Params&, const LaunchConfig&, std::int64_t&) { unavailable(); }
}  // namespace cuda
}  // namespace bitparity
