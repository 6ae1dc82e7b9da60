# The numerics contract (design.md): no contraction of a*b+c on the host, no fast math anywhere.
# -fno-math-errno only stops sqrtf from setting errno (its results are IEEE either way), so the
# compiler may use vector square roots. Every target of ours gets these through bitparity_numerics.
add_library(bitparity_numerics INTERFACE)
target_compile_options(bitparity_numerics INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off -fno-fast-math -fno-math-errno -Wall -Wextra>
  $<$<COMPILE_LANGUAGE:CUDA>:-fmad=false -Xcompiler=-ffp-contract=off --expt-relaxed-constexpr>)
