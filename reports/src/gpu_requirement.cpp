#include "bitparity/fixtures/gpu_requirement.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/launch.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"

namespace bitparity::reports {

namespace {

std::string why_no_gpu() {
  if (!cuda_built()) return "this build has no CUDA launchers (nvcc was not found when it was configured)";
  return "the CUDA runtime reports no device (no GPU, no driver, or CUDA_VISIBLE_DEVICES hides them)";
}

}  // namespace

bool gpu_required(bool flag) {
  try {
    return fixtures::gpu_required_by_environment() || flag;
  } catch (const fixtures::RequirementValueError& error) {
    throw UsageError(error.what());
  }
}

void require_usable_gpu() {
  if (fixtures::device_implementation_names().size() > 1) return;
  throw GpuMissingError("a GPU is required (--require-gpu or BITPARITY_REQUIRE_GPU) but none is usable: " + why_no_gpu() +
                        "; run on a GPU machine, or drop the requirement to run the CPU rows only");
}

std::string no_gpu_notice() {
  return "notice: no GPU: " + why_no_gpu() + "; GPU rows are skipped, not passed (--require-gpu makes this a failure)";
}

}  // namespace bitparity::reports
