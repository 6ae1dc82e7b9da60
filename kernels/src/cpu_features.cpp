#include "cpu_features.hpp"

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#include "bitparity/kernels/launch.hpp"

namespace bitparity::cpu {

bool cpu_has_avx512bw() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512vbmi2() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const bool has = cpu_has_avx512bw() && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vbmi") &&
                          __builtin_cpu_supports("avx512vbmi2");
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx2() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}

bool cpu_has_f16c() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has;
#else
  return false;
#endif
}

}  // namespace bitparity::cpu

namespace bitparity {

namespace {
// The "model name" of /proc/cpuinfo (Linux); "" where there is none.
std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!line.starts_with("model name")) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    return first == std::string::npos ? "" : line.substr(first);
  }
  return "";
}
}  // namespace

std::string cpu_device_description() {
  std::string paths;
  const auto add = [&](bool has, const char* name) {
    if (has) paths += (paths.empty() ? "" : ", ") + std::string(name);
  };
  add(cpu::cpu_has_avx512bw(), "AVX-512 BW");
  add(cpu::cpu_has_avx512vbmi2(), "AVX-512 VBMI2");
  add(cpu::cpu_has_avx2(), "AVX2");
  add(cpu::cpu_has_f16c(), "F16C");
  const std::string model = cpu_model_name();
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  return (model.empty() ? "" : model + ", ") + std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
         ", vector paths " + (paths.empty() ? "none (the compiled loops)" : paths);
}

}  // namespace bitparity
