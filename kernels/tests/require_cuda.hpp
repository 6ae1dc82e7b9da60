#pragma once
// GPU tests of the kernels: skip without a CUDA device, fail instead where BITPARITY_REQUIRE_GPU=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "bitparity/kernels/launch.hpp"

#define REQUIRE_CUDA_DEVICE()                                                                        \
  do {                                                                                               \
    if (::bitparity::cuda_device_count() == 0) {                                                     \
      const char* required = std::getenv("BITPARITY_REQUIRE_GPU");                                   \
      if (required != nullptr && std::strcmp(required, "1") == 0) FAIL() << "no usable CUDA device";   \
      GTEST_SKIP() << "no CUDA device on this machine (or CUDA not built): GPU test skipped";        \
    }                                                                                                \
  } while (0)
