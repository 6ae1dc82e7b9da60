#include "bitparity/kernels/errors.hpp"

namespace bitparity {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::out_of_bounds: return "out_of_bounds";
    case ErrorCode::overlapping_output: return "overlapping_output";
    case ErrorCode::dtype_mismatch: return "dtype_mismatch";
    case ErrorCode::device_mismatch: return "device_mismatch";
    case ErrorCode::device_unavailable: return "device_unavailable";
    case ErrorCode::cuda_failure: return "cuda_failure";
    case ErrorCode::implementation_fault: return "implementation_fault";
  }
  return "unknown";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string(error_code_name(code)) + ": " + message), code_(code), message_(message) {}

}  // namespace bitparity
