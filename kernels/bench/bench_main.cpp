#include <benchmark/benchmark.h>

namespace bitparity::bench {
void register_quant_benchmarks();
void register_optimizer_benchmarks();
}  // namespace bitparity::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  bitparity::bench::register_quant_benchmarks();
  bitparity::bench::register_optimizer_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
