#pragma once
#include <stdexcept>
#include <string>

namespace bitparity {

// Typed errors: every refusal says what was wrong and how to fix it.
enum class ErrorCode {
  invalid_argument,   // a parameter outside its documented range
  out_of_bounds,      // a view reaches outside its storage
  overlapping_output, // an output view writes one storage element twice
  dtype_mismatch,     // a dtype the entry point does not accept
  device_mismatch,    // tensors on the wrong device for the launcher
  device_unavailable, // the requested device does not exist or CUDA is not built
  cuda_failure,       // the CUDA runtime reported an error
  implementation_fault, // an implementation under test crashed, hung or exited inside a call or its loading
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const noexcept { return code_; }
  // The message alone; what() prefixes the code name ("invalid_argument: ...").
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

}  // namespace bitparity
