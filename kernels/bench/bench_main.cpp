#include <benchmark/benchmark.h>

#include <exception>
#include <iostream>

#include "bitparity/kernels/launch.hpp"

namespace bitparity::bench {
void register_quant_benchmarks();
void register_optimizer_benchmarks();
}  // namespace bitparity::bench

int main(int argc, char** argv) {
  try {
    benchmark::Initialize(&argc, argv);
    // The CPU rows' figures depend on the vector paths this machine takes: the JSON says which.
    benchmark::AddCustomContext("cpu", bitparity::cpu_device_description());
    for (int i = 0; i < bitparity::cuda_device_count(); ++i) {
      benchmark::AddCustomContext("cuda:" + std::to_string(i), bitparity::cuda_device_description(i));
    }
    bitparity::bench::register_quant_benchmarks();
    bitparity::bench::register_optimizer_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "bitparity_bench: " << error.what() << "\n";
    return 1;
  }
}
