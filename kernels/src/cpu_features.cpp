#include "cpu_features.hpp"

namespace bitparity::cpu {

bool cpu_has_avx512bw() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
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
